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

"""Lease requests, parsed: Blazar v1 bodies to what the lease service does.

Parsing touches no DB. It checks a body's shape against
:mod:`reservation_ext.leases.schemas`, then its dates, durations and
names, and has each reservation checked by its resource plugin. A parsed
create request is::

    {'name': 'lease1', 'start_date': datetime, 'end_date': datetime,
     'before_end_date': datetime or None, 'starts_later': bool,
     'reservations': [(resource_type, values)], 'projects': [...],
     'trust_id': None}

The server and volume hints (:mod:`reservation_ext.leases.hints`) make
the same request with :func:`lease` and :func:`with_reservation`. A
create from a schedule proposal has ``proposal_id`` instead of the window
(and, from the lease API, no reservations): the lease service reads them
from the proposal.
"""

from reservation_ext import dates
from reservation_ext import exceptions
from reservation_ext.leases import schemas
from reservation_ext import validation


def lease(name, start, end, before_end, now, projects=(), trust_id=None):
    """Return a create request for a checked window, no reservations yet.

    Whether the lease starts later than ``now`` is decided here, once: a
    server whose lease starts later is built at the start, one whose
    lease starts now runs in the shared pool.
    """
    return {'name': name, 'start_date': start, 'end_date': end,
            'before_end_date': before_end, 'starts_later': start > now,
            'reservations': [], 'projects': list(projects),
            'trust_id': trust_id}


def with_reservation(request, plugins, resource_type, values):
    """Return ``request`` with one reservation, checked by its plugin."""
    return dict(request, reservations=[
        reservation(plugins, resource_type, values, 'reservations[0]')])


def reservation(plugins, resource_type, values, field, check='validate'):
    """Return ``(resource_type, values)``, checked and normalized.

    The type's plugin checks the values and normalizes them.

    :param plugins: ``{resource_type: plugin}``.
    :param field: the reservation as the user wrote it, put in front of
        the plugin's field names ('' when the fields stand alone).
    :param check: the plugin's method that checks it: ``validate`` (a
        lease's), ``validate_proposal`` or ``validate_query``.
    """
    prefix = field + '.' if field else ''
    if resource_type not in plugins:
        raise exceptions.InvalidInput(
            prefix + 'resource_type',
            'unknown resource type %r, expected one of: %s'
            % (resource_type, ', '.join(sorted(plugins))))
    plugin = plugins[resource_type]
    with validation.prefixed(prefix):
        return resource_type, getattr(plugin, check)(values)


def parse_create(body, plugins, now):
    """Parse a Blazar lease-create ``body``; return the create request.

    A body with ``proposal_id`` gives the name (and projects) only: the
    window and reservations are the proposal's, which the lease service
    reads when it writes the lease.
    """
    validation.check_schema(body, schemas.CREATE)
    if 'proposal_id' in body:
        return _from_proposal(body)
    start = dates.parse_date(body.get('start_date', 'now'),
                             'start_date', now)
    end = _end_of(body, start, now)
    before_end = _optional_date(body, 'before_end_date', now)
    dates.check_start(start, now)
    dates.check_window(start, end, before_end)
    request = lease(validation.validate_name(body['name'], 'name'), start,
                    end, before_end, now,
                    # Each project once, in the order given.
                    projects=dict.fromkeys(body.get('projects', [])),
                    trust_id=body.get('trust_id'))
    request['reservations'] = [
        _reservation(plugins, index, values)
        for index, values in enumerate(body.get('reservations', []))]
    return request


# What a schedule proposal fixes, so that a create from one cannot say.
_PROPOSED = ('start_date', 'end_date', 'duration', 'before_end_date',
             'reservations')


def _from_proposal(body):
    given = [key for key in _PROPOSED if key in body]
    if given:
        raise exceptions.InvalidInput(
            given[0], 'cannot be combined with proposal_id: the proposal '
            'sets the window and the reservations')
    return {'name': validation.validate_name(body['name'], 'name'),
            'proposal_id': body['proposal_id'], 'reservations': [],
            'projects': list(dict.fromkeys(body.get('projects', []))),
            'trust_id': body.get('trust_id')}


def parse_update(body, now):
    """Parse a Blazar lease-update ``body``; return the update request.

    Only what the body gives: ``start_date``, ``end_date``,
    ``before_end_date`` (datetimes), ``name``, a ``shift`` of the end
    with the ``end_field`` that asked for it, and ``reservations``:
    ``{reservation_id: {'index': i, 'values': {...}}}``.
    """
    validation.check_schema(body, schemas.UPDATE)
    request = {key: _optional_date(body, key, now) for key in
               ('start_date', 'end_date', 'before_end_date')
               if body.get(key) is not None}
    if 'name' in body:
        request['name'] = validation.validate_name(body['name'], 'name')
    request.update(_end_shift(body))
    request['reservations'] = _reservation_changes(body)
    return request


def parse_list(params, now):
    """Return the filters of a lease list's query ``params`` (MultiDict).

    ``status``, ``name`` and ``project_id`` as given, ``start`` and
    ``end`` as datetimes (the leases wanted overlap ``[start, end)``),
    and ``all_projects`` as a boolean; only those given.
    """
    query = validation.single_values(params)
    validation.check_schema(query, schemas.LIST_QUERY)
    for key in ('start', 'end'):
        if key in query:
            query[key] = dates.parse_date(query[key], key, now)
    if 'start' in query and 'end' in query:
        dates.check_window(query['start'], query['end'],
                           fields=('start', 'end'))
    if 'all_projects' in query:
        query['all_projects'] = validation.parse_boolean(
            query['all_projects'], 'all_projects')
    return query


def _reservation(plugins, index, values):
    values = dict(values)
    return reservation(plugins, values.pop('resource_type'), values,
                       'reservations[%d]' % index)


def _optional_date(body, key, now):
    value = body.get(key)
    return None if value is None else dates.parse_date(value, key, now)


def _end_of(body, start, now):
    if 'end_date' not in body and 'duration' not in body:
        raise validation.missing('end_date')
    if 'end_date' in body and 'duration' in body:
        raise exceptions.InvalidInput(
            'end_date', 'give exactly one of end_date and duration')
    if 'duration' in body:
        return dates.add(
            start, dates.parse_duration(body['duration'], 'duration'),
            'duration')
    return dates.parse_date(body['end_date'], 'end_date', now)


def _end_shift(body):
    """Return ``prolong_for``/``reduce_by`` as a signed shift of the end."""
    given = [key for key in ('end_date', 'prolong_for', 'reduce_by')
             if body.get(key) is not None]
    if len(given) > 1:
        raise exceptions.InvalidInput(
            given[1], 'cannot be combined with %s' % given[0])
    if not given or given[0] == 'end_date':
        return {}
    duration = dates.parse_duration(body[given[0]], given[0])
    sign = 1 if given[0] == 'prolong_for' else -1
    return {'shift': sign * duration, 'end_field': given[0]}


def _reservation_changes(body):
    changes = {}
    for index, values in enumerate(body.get('reservations', [])):
        values = dict(values)
        reservation_id = values.pop('id')
        if reservation_id in changes:
            raise exceptions.InvalidInput('reservations[%d].id' % index,
                                          'is repeated')
        changes[reservation_id] = {'index': index, 'values': values}
    return changes
