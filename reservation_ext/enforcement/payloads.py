#    Licensed under the Apache License, Version 2.0 (the "License"); you may
#    not use this file except in compliance with the License. You may obtain
#    a copy of the License at
#
#         http://www.apache.org/licenses/LICENSE-2.0
#
#    Unless required by applicable law or agreed to in writing, software
#    distributed under the License is distributed on an "AS IS" BASIS, WITHOUT
#    WARRANTIES OR CONDITIONS OF ANY KIND, either express or implied. See the
#    License for the specific language governing permissions and limitations
#    under the License.

"""The dicts the enforcement filters get: Blazar's context and lease.

``context``: ``{"user_id", "project_id", "auth_url", "region_name"}``,
the lease's owner and where its cloud's identity service is.

``lease``: the lease's values (dates as naive UTC datetimes) with
``reservations``, each the reservation's values plus ``allocations``:

* a lease to be created: ``name``, ``user_id``, ``project_id``,
  ``start_date``, ``end_date``, ``before_end_date``, ``projects``; each
  reservation as requested (``resource_type`` and its fields, without the
  ones that only exist inside this service) with ``allocations: []``:
  the planner books the resources in the transaction that writes the
  lease, after the checks (Blazar sends its candidate resources);
* an existing lease (the current one of an update, the one that ends):
  its columns (``id``, ``status``, ...), each reservation as the lease
  view shows it with the hosts it has booked as ``allocations`` (host
  views as ``/v1/os-hosts`` shows them; none for volumes);
* the new lease of an update: the current one with the new name and
  dates, and the changed fields merged into its reservations.
"""

import datetime

from reservation_ext.hosts import inventory

_JSON_SCALARS = (str, int, float, bool, type(None), datetime.datetime)


def context(conf, lease):
    """Return Blazar's enforcement context of ``lease``'s owner.

    :param conf: the ``[enforcement]`` options group.
    """
    return {'user_id': lease['user_id'], 'project_id': lease['project_id'],
            'auth_url': conf.auth_url, 'region_name': conf.region_name}


def new_lease(ctx, request, reservations):
    """Return the lease that a parsed create ``request`` makes.

    :param reservations: ``[(resource_type, values)]`` as the plugins
        normalized them.
    """
    lease = {key: request[key] for key in
             ('name', 'start_date', 'end_date', 'before_end_date',
              'projects')}
    lease.update(user_id=ctx.user_id, project_id=ctx.project_id)
    lease['reservations'] = [
        dict(_plain(values), resource_type=resource_type, allocations=[])
        for resource_type, values in reservations]
    return lease


def existing_lease(session, lease, reservations, changes=None):
    """Return an existing lease with its reservations and their allocations.

    :param lease: the lease's columns (and ``projects``).
    :param reservations: the reservation views of the lease.
    :param changes: ``{reservation_id: {field: value}}`` to merge in.
    """
    changes = changes or {}
    hosts = inventory.allocated_hosts(
        session, [reservation['id'] for reservation in reservations])
    return dict(_plain(lease), reservations=[
        dict(reservation, **changes.get(reservation['id'], {}),
             allocations=hosts[reservation['id']])
        for reservation in reservations])


def _plain(values):
    """Return the fields of ``values`` that JSON can carry (and dates).

    Plugins add what they compiled from a request (SQL conditions, ...)
    to its values; that stays here.
    """
    return {key: value for key, value in values.items() if _is_plain(value)}


def _is_plain(value):
    if isinstance(value, (list, tuple)):
        return all(_is_plain(item) for item in value)
    if isinstance(value, dict):
        return all(isinstance(key, str) and _is_plain(item)
                   for key, item in value.items())
    return isinstance(value, _JSON_SCALARS)
