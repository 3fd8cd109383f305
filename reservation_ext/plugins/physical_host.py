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

"""The ``physical:host`` plugin: whole compute hosts for a lease.

A request (Blazar's fields plus a few constraints)::

    {"resource_type": "physical:host", "min": 2, "max": 2,
     "hypervisor_properties": "[\\">=\\", \\"$vcpus\\", \\"8\\"]",
     "resource_properties": "{\\"gpu\\": \\"s== true\\"}",
     "hosts": ["compute-1", 7], "availability_zone": "nova",
     "region": "RegionOne", "min_vcpus": 8, "min_memory_mb": 16384,
     "min_local_gb": 100, "before_end": "default", "on_end": "release"}

Hosts are booked by the planner when the lease is created, with the
request's constraints compiled once, when it is checked, into SQL
conditions (``values['conditions']``). At start the
hosts leave the free-pool aggregate for an aggregate named after the
reservation, whose metadata names the owner project; at end, ``on_end``
says what happens to the instances on them (``release``: they stay;
``delete_instances``: they are deleted) before the hosts return to the
free pool. The scheduler filter reads the pools from the leases DB; the
Nova aggregates show the same pools to operators and to Nova's own
aggregate filters.
"""

import json

import sqlalchemy as sa

from db import api as db_api
from db import models
from reservation_ext.clients import compute as compute_client
from reservation_ext import exceptions
from reservation_ext.leases import hints
from reservation_ext.leases.states import ReservationStatus
from reservation_ext.planning import capabilities
from reservation_ext.planning import planner
from reservation_ext.planning import timelines
from reservation_ext.plugins import base
from reservation_ext import validation

RESOURCE_TYPE = 'physical:host'
REQUESTS = models.HostReservation.__table__
HOSTS = models.ComputeHost.__table__
ALLOCATIONS = models.HostAllocation.__table__

# Blazar's messages for a min or max below 1, and a max below the min.
COUNT_BELOW_ONE = ('Malformed parameter min and max (must be greater than '
                   'or equal to 1)')
INVALID_RANGE = ('Invalid values for min/max of hosts. Max must be equal '
                 'to or larger than min.')
ON_END = ('release', 'delete_instances')
BEFORE_END = ('default', '')
_MINIMUMS = {'min_vcpus': HOSTS.c.vcpus, 'min_memory_mb': HOSTS.c.memory_mb,
             'min_local_gb': HOSTS.c.local_gb}
_QUERIES = ('hypervisor_properties', 'resource_properties')
_HOST = {'type': ['string', 'integer'], 'minLength': 1,
         'description': 'a host id or hypervisor hostname'}
SCHEMA = {
    'type': 'object',
    'properties': {
        'min': validation.INTEGER,
        'max': validation.INTEGER,
        **{key: validation.nullable(validation.INTEGER) for key in _MINIMUMS},
        # Capability queries: JSON text or decoded; compiling checks them.
        **{key: {} for key in _QUERIES},
        'hosts': {'type': ['array', 'null'], 'items': _HOST,
                  'description': 'a list of host ids or hypervisor '
                                 'hostnames'},
        'availability_zone': validation.nullable(validation.TEXT),
        'region': {'type': ['string', 'null']},
        'before_end': {'enum': list(BEFORE_END)},
        'on_end': {'enum': list(ON_END)},
    },
    'additionalProperties': False,
}
# Columns of host_reservations shown in lease views (Blazar's), and the
# optional constraints, shown when the request set them.
_VIEW_COLUMNS = ('min', 'max', 'hypervisor_properties',
                 'resource_properties', 'before_end', 'on_end',
                 'aggregate_id')
_OPTIONAL_COLUMNS = ('availability_zone',) + tuple(_MINIMUMS)
# What an update may change: the request, as the lease view shows it.
_UPDATABLE = ('min', 'max', 'hosts', 'before_end', 'on_end') + _QUERIES + \
    _OPTIONAL_COLUMNS


class PhysicalHostPlugin(base.ResourcePlugin):
    """Lease whole Nova compute hosts."""

    def validate(self, values):
        validation.check_schema(values, SCHEMA)
        out = {key: _query(values, key) for key in _QUERIES}
        out['hosts'] = values.get('hosts') or []
        # As in Blazar, min and max are required; hosts named (not in
        # Blazar) are counted instead.
        default = len(out['hosts']) or None
        out['min'] = _count(values, 'min', default)
        out['max'] = _count(values, 'max', default)
        if out['max'] < out['min']:
            raise exceptions.InvalidInput('max', INVALID_RANGE)
        for key in _MINIMUMS:
            out[key] = _optional_count(values, key)
        out['availability_zone'] = values.get('availability_zone')
        self._check_region(values.get('region'))
        out['before_end'] = values.get('before_end', 'default')
        out['on_end'] = values.get('on_end', 'release')
        out['conditions'] = _conditions(out)
        return out

    def validate_proposal(self, values):
        # "Which hosts and when", without a count, is about one host; a
        # minimum alone is the count.
        if not values.get('hosts'):
            values = dict({'min': 1}, **values)
            values.setdefault('max', values['min'])
        return self.validate(values)

    def timeline(self, session, values, span, busy, for_update=False):
        hosts, allocations = planner.read_schedules(
            session, *span.reach, busy, values['conditions'])
        _check_pool(len(hosts), values)
        return timelines.WholeHosts(
            span, allocations, values['min'], values['max'],
            generations={host: row[0] for host, row in hosts.items()})

    def reserve(self, session, ctx, lease, reservation_id, values,
                hold=None):
        try:
            self._book(session, lease, reservation_id, values, hold)
        except exceptions.NotEnoughResources:
            _check_pool(planner.count_matching(
                session, values['conditions']), values)
            raise
        # One request per reservation: it shares the reservation's id.
        session.execute(sa.insert(REQUESTS).values(
            id=reservation_id, reservation_id=reservation_id,
            **_request_columns(values)))
        return reservation_id

    def _book(self, session, lease, reservation_id, values, hold):
        """Book the hosts: any that match, or those ``hold`` holds."""
        if hold is None:
            planner.allocate_hosts(
                session, planner.Owner(reservation_id), lease['start_date'],
                lease['end_date'], values['min'], values['max'],
                self.busy(), conditions=values['conditions'])
            return
        held = planner.held_hosts(session, hold.proposal_id,
                                  hold.proposal_item)
        planner.allocate_hosts(
            session, planner.Owner(reservation_id), lease['start_date'],
            lease['end_date'], len(held), len(held),
            self.busy(ignore_proposal=hold.proposal_id), host_ids=held)

    def get_details(self, session, reservation_ids):
        details = {}
        for row in session.execute(sa.select(REQUESTS).where(
                REQUESTS.c.reservation_id.in_(reservation_ids))):
            view = {key: getattr(row, key) for key in _VIEW_COLUMNS}
            view.update({key: getattr(row, key) for key in _OPTIONAL_COLUMNS
                         if getattr(row, key) is not None})
            if row.requested_hosts:
                view['hosts'] = json.loads(row.requested_hosts)
            # What a user passes to Nova to boot on the leased hosts.
            view['scheduler_hints'] = {hints.RESERVATION: row.reservation_id}
            details[row.reservation_id] = view
        return details

    def update(self, session, ctx, lease, reservation, values):
        """Re-book for a new window or request, as the lease's status allows.

        A reservation that has not started is booked again, on its own
        hosts if they still serve (the request unchanged), else on any.
        A started one keeps its hosts, which must still match; it may
        grow, and the hosts it gains join its aggregate after the
        transaction (the step returned).
        """
        request = self._changed_request(reservation, values)
        latest = planner.latest_end(session, reservation['id'], self.busy())
        try:
            if reservation['status'] == ReservationStatus.ACTIVE:
                return self._grow(session, lease, reservation, request)
            self._rebook(session, lease, reservation, request, values)
        except exceptions.NotEnoughResources as exc:
            raise _blocked(exc, latest, lease['end_date'])
        session.execute(sa.update(REQUESTS).where(
            REQUESTS.c.reservation_id == reservation['id']).values(
                **_request_columns(request)))

    def undo_update(self, session, ctx, lease, reservation, values):
        """Give back the hosts a started reservation gained, and its window.

        The hosts it gained are those booked after its start; the step
        returns them from its aggregate to the free pool.
        """
        if reservation['status'] != ReservationStatus.ACTIVE:
            return self.update(session, ctx, lease, reservation, values)
        gained = planner.release_gained(session, reservation['id'],
                                        lease['start_date'])
        planner.move_allocations(session, reservation['id'],
                                 lease['start_date'], lease['end_date'],
                                 self.busy())
        session.execute(sa.update(REQUESTS).where(
            REQUESTS.c.reservation_id == reservation['id']).values(
                **_request_columns(self._changed_request(reservation,
                                                         values))))
        return lambda ctx: self._leave(reservation, gained)

    def _changed_request(self, reservation, values):
        """The reservation's request with ``values`` applied, checked."""
        current = {key: reservation[key] for key in _UPDATABLE
                   if reservation.get(key) is not None}
        return self.validate(dict(current, **values))

    def _rebook(self, session, lease, reservation, request, values):
        if not values:
            try:
                # Refused before it writes anything.
                return planner.move_allocations(
                    session, reservation['id'], lease['start_date'],
                    lease['end_date'], self.busy())
            except exceptions.NotEnoughResources:
                pass
        planner.release(session, reservation['id'])
        self._book(session, lease, reservation['id'], request, None)

    def _grow(self, session, lease, reservation, request):
        """Extend a started reservation on its hosts, and add hosts."""
        booked = planner.booked_hosts(session, reservation['id'])
        _check_keeps(session, booked, request)
        planner.move_allocations(session, reservation['id'],
                                 lease['start_date'], lease['end_date'],
                                 self.busy())
        session.execute(sa.update(REQUESTS).where(
            REQUESTS.c.reservation_id == reservation['id']).values(
                **_request_columns(request)))
        if len(booked) >= request['min']:
            return None
        added = planner.allocate_hosts(
            session, planner.Owner(reservation['id']), self.clock.now(),
            lease['end_date'], request['min'] - len(booked),
            request['max'] - len(booked), self.busy(),
            conditions=request['conditions'])
        names = session.scalars(sa.select(HOSTS.c.service_name).where(
            HOSTS.c.id.in_(added)).order_by(HOSTS.c.service_name)).all()
        return lambda ctx: self._join(lease, reservation, names)

    def on_start(self, ctx, lease, reservation):
        aggregate = self._join(lease, reservation,
                               self._service_hosts(ctx, reservation['id']))
        with db_api.writer(ctx, self.clock) as session:
            session.execute(sa.update(REQUESTS).where(
                REQUESTS.c.reservation_id == reservation['id']).values(
                    aggregate_id=aggregate['id']))

    def _join(self, lease, reservation, hosts):
        """Move ``hosts`` from the free pool to the lease's aggregate.

        Return the aggregate.
        """
        metadata = {compute_client.OWNER_KEY: lease['project_id'],
                    compute_client.RESERVATION_KEY: reservation['id']}
        metadata.update({project: 'true' for project in lease['projects']})
        aggregate = self.nova.ensure_aggregate(reservation['id'], metadata)
        freepool = self.nova.ensure_aggregate(
            self.conf.reservation.freepool_name)
        for host in hosts:
            self.nova.remove_from_aggregate(freepool, host)
            self.nova.add_to_aggregate(aggregate, host)
        return aggregate

    def _leave(self, reservation, hosts):
        """Move ``hosts`` from the lease's aggregate to the free pool."""
        aggregate = self.nova.ensure_aggregate(reservation['id'])
        freepool = self.nova.ensure_aggregate(
            self.conf.reservation.freepool_name)
        for host in hosts:
            self.nova.remove_from_aggregate(aggregate, host)
            self.nova.add_to_aggregate(freepool, host)

    def on_end(self, ctx, lease, reservation):
        hosts = self._service_hosts(ctx, reservation['id'])
        if reservation.get('on_end') == 'delete_instances':
            self.nova.delete_servers([
                server['id'] for host in hosts
                for server in self.nova.servers_on(host)])
        freepool = self.nova.ensure_aggregate(
            self.conf.reservation.freepool_name)
        for host in hosts:
            self.nova.add_to_aggregate(freepool, host)
        self.nova.delete_aggregate(reservation['id'])

    def on_delete(self, ctx, lease, reservation):
        # A start that failed half-way may have left the lease aggregate.
        if reservation['status'] == ReservationStatus.ACTIVE or (
                reservation['status'] != ReservationStatus.DELETED and
                self.nova.find_aggregate(reservation['id'])):
            self.on_end(ctx, lease, reservation)

    def _check_region(self, region):
        if region is None:
            return
        own = self.conf.reservation_client.region_name or 'RegionOne'
        if region != own:
            raise exceptions.InvalidInput(
                'region', 'this cloud serves region %s only' % own)

    @staticmethod
    def _service_hosts(ctx, reservation_id):
        with db_api.context_manager.reader.using(ctx) as session:
            return session.scalars(
                sa.select(HOSTS.c.service_name).distinct()
                .join(ALLOCATIONS, ALLOCATIONS.c.host_id == HOSTS.c.id)
                .where(ALLOCATIONS.c.reservation_id == reservation_id)
                .order_by(HOSTS.c.service_name)).all()

    def billing_resources(self, session, reservations):
        """The hosts booked for each reservation, with their sizes."""
        resources = {}
        for row in session.execute(
                sa.select(ALLOCATIONS.c.reservation_id, HOSTS.c.id,
                          HOSTS.c.hypervisor_hostname, HOSTS.c.vcpus,
                          HOSTS.c.memory_mb, HOSTS.c.local_gb)
                .distinct()
                .join(HOSTS, HOSTS.c.id == ALLOCATIONS.c.host_id)
                .where(ALLOCATIONS.c.reservation_id.in_(
                    [reservation['id'] for reservation in reservations]))
                .order_by(ALLOCATIONS.c.reservation_id,
                          HOSTS.c.hypervisor_hostname)):
            resources.setdefault(row.reservation_id, []).append({
                'id': str(row.id),
                'hypervisor_hostname': row.hypervisor_hostname,
                'vcpus': row.vcpus, 'memory_mb': row.memory_mb,
                'local_gb': row.local_gb})
        return resources


# The constraints of a request, the most specific first: the one a pool
# too small for the request is blamed on.
_CONSTRAINTS = ('hosts', 'resource_properties', 'hypervisor_properties',
                'availability_zone') + tuple(_MINIMUMS)


def _check_pool(matching, values):
    """Refuse a request that no window can fit: too few hosts match.

    :param matching: how many reservable hosts match its constraints.
    :raises InvalidInput: naming the most specific constraint given.
    """
    if matching >= values['min']:
        return
    field = next((key for key in _CONSTRAINTS if values.get(key)), 'min')
    raise exceptions.InvalidInput(
        field, '%d reservable host(s) match the request, %d wanted: no '
        'window can ever fit it' % (matching, values['min']))


def _request_columns(values):
    """The host_reservations columns of a checked request."""
    columns = {key: values[key] for key in _VIEW_COLUMNS + _OPTIONAL_COLUMNS
               if key != 'aggregate_id'}
    columns['requested_hosts'] = (json.dumps(values['hosts'])
                                  if values['hosts'] else None)
    return columns


def _blocked(exc, latest, end):
    """``exc``, saying until when the hosts booked are free (if sooner)."""
    if latest is None or latest >= end:
        return exc
    return exceptions.NotEnoughResources(
        '%s The lease can be extended until %s at the latest.'
        % (exc.message, latest.strftime(validation.BLAZAR_DATE_FORMAT)))


def _check_keeps(session, booked, request):
    """Refuse to change a started reservation so it loses hosts."""
    if len(booked) > request['max']:
        raise exceptions.InvalidInput(
            'max', 'a started reservation keeps its %d host(s)'
            % len(booked))
    matching = planner.count_matching(session, [
        HOSTS.c.id.in_(booked), *request['conditions']])
    if matching < len(booked):
        field = next((key for key in _CONSTRAINTS if request.get(key)),
                     'hypervisor_properties')
        raise exceptions.InvalidInput(
            field, '%d of the %d host(s) of the started reservation would '
            'not match: it keeps its hosts' % (len(booked) - matching,
                                               len(booked)))


def _conditions(values):
    """SQL conditions of the request's constraints, its queries compiled."""
    conditions = [capabilities.compile(values[key], key) for key in _QUERIES]
    conditions += [column >= values[key] for key, column in _MINIMUMS.items()
                   if values[key] is not None]
    if values['availability_zone'] is not None:
        conditions.append(
            HOSTS.c.availability_zone == values['availability_zone'])
    if values['hosts']:
        names = [str(host) for host in values['hosts']]
        ids = [int(name) for name in names if name.isdigit()]
        conditions.append(sa.or_(HOSTS.c.hypervisor_hostname.in_(names),
                                 HOSTS.c.service_name.in_(names),
                                 HOSTS.c.id.in_(ids)))
    return conditions


def _query(values, key):
    """A capability query as text ('' for none), as lease views show it."""
    query = values.get(key) or ''
    return query if isinstance(query, str) else json.dumps(query)


def _count(values, key, default):
    """min or max, refused in Blazar's words.

    python-blazarclient sends ``"max": ""`` when ``max`` is not given:
    Blazar's "Malformed parameter max".
    """
    value = values.get(key, default)
    if value is None:
        raise validation.missing(key)
    try:
        count = validation.parse_integer(value, key)
    except exceptions.InvalidInput:
        raise exceptions.InvalidInput(
            key, 'Malformed parameter %s (must be an integer)' % key)
    if count < 1:
        raise exceptions.InvalidInput(key, COUNT_BELOW_ONE)
    return count


def _optional_count(values, key):
    value = values.get(key)
    return None if value is None else validation.parse_integer(value, key)
