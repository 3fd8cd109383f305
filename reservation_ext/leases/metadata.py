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

"""The lease of a server or volume, shown in its metadata.

Nova's and Cinder's documented response schemas allow no key of ours at
the top level of a server or volume (strict clients such as tempest
validate them, with ``additionalProperties: false``); ``metadata`` is the
one object whose keys are free, and what ``openstack server show`` and
``openstack volume show`` print (as ``properties``). So the views show
the lease there, and only there, as two keys computed for each view from
the leases DB:

``reservation:lease_id``
    the lease's id;
``reservation:end``
    the lease's end, ISO 8601 in UTC (``2027-12-01T16:07:00Z``).

A preemptible server (no lease of its own) may show a third key, from
the bookings of its host rather than from a lease:

``reservation:reclaim_after``
    when the engine reclaims it at the latest (same format): the start
    of its host's next booking less ``[reservation]
    preemption_lead_time`` and ``cleaning_time`` (``reclaim_times_of``
    of :mod:`reservation_ext.planning.preemptible_placement`). Absent
    when nothing is booked on the host ahead. It is the server's own
    fate, so whoever sees the server sees it; it names no other lease.

Invariants:

* The keys are never stored in Nova's or Cinder's database: a request
  that would set or delete one is a 400 naming it (:func:`check_not_set`),
  and a stored value (written before the extension was enabled) is never
  shown (:func:`shown`). The user's other metadata is the user's.
* The same holds for ``reservation:reclaim_after`` on servers
  (:data:`SERVER_KEYS`); volumes have no such key, so it is the user's
  there.
* Only who may show the lease (rule ``reservation:leases:get``: a reader
  of the lease's project, or an administrator) sees them; anyone else
  who sees the server or volume (a project a capacity lease is shared
  with, one a volume was transferred to) learns nothing of the lease
  (:class:`Viewer`).
"""

import collections

from reservation_ext import exceptions
from reservation_ext import policy

LEASE_ID = 'reservation:lease_id'
END = 'reservation:end'
RECLAIM_AFTER = 'reservation:reclaim_after'
KEYS = (LEASE_ID, END)
SERVER_KEYS = KEYS + (RECLAIM_AFTER,)
END_FORMAT = '%Y-%m-%dT%H:%M:%SZ'
_NOT_SET = ('is shown from the lease, not stored, and cannot be set or '
            'deleted; change the lease instead (openstack reservation '
            'lease set or delete)')
_NOT_SET_RECLAIM = ('is shown from the bookings of the host of a '
                    'preemptible server, not stored, and cannot be set or '
                    'deleted')

# What a view shows of a lease.
Lease = collections.namedtuple('Lease', ('id', 'project_id', 'end_date'))


class Viewer:
    """Say which leases the caller of a view may see.

    Asks the policy once per project of the leases shown, so a page of
    any length costs a few in-memory checks.
    """

    def __init__(self, ctx):
        self.ctx = ctx
        self._sees = {}

    def sees(self, lease):
        """Return whether the view shows ``lease`` (a :class:`Lease`/None)."""
        if lease is None:
            return False
        if lease.project_id not in self._sees:
            self._sees[lease.project_id] = policy.allowed(
                self.ctx, 'get', lease.project_id)
        return self._sees[lease.project_id]


def shown(metadata, lease, reclaim_after=None, ours=KEYS):
    """Return the metadata a view shows: others' stored keys, and ours.

    Our keys are those of the lease the caller sees, never stored ones.

    :param lease: the :class:`Lease` the caller sees, or None.
    :param reclaim_after: when a preemptible server is reclaimed at the
        latest (a datetime in UTC), or None.
    :param ours: the keys that are never stored (:data:`SERVER_KEYS`
        for servers).
    """
    view = {key: value for key, value in (metadata or {}).items()
            if key not in ours}
    if lease is not None:
        view[LEASE_ID] = lease.id
        view[END] = lease.end_date.strftime(END_FORMAT)
    if reclaim_after is not None:
        view[RECLAIM_AFTER] = reclaim_after.strftime(END_FORMAT)
    return view


def check_not_set(keys, field='metadata', ours=KEYS):
    """Raise InvalidInput naming the first of our keys in ``keys``.

    ``keys``: the keys a request would set or delete (anything else,
    as a body that is not an object, is left to Nova or Cinder to answer);
    ``ours``: the keys that are never stored (:data:`SERVER_KEYS` for
    servers).
    """
    if not isinstance(keys, (dict, list, tuple, str)):
        return
    for key in ([keys] if isinstance(keys, str) else keys):
        if key in ours:
            raise exceptions.InvalidInput(
                '%s.%s' % (field, key),
                _NOT_SET_RECLAIM if key == RECLAIM_AFTER else _NOT_SET)
