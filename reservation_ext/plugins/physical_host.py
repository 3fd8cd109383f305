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
     "min_local_gb": 100, "before_end": "default", "on_end": "release",
     "grace_period": "1h"}

Hosts are booked by the planner when the lease is created, with the
request's constraints compiled once, when it is checked, into SQL
conditions (``values['conditions']``). At start the
hosts leave the free-pool aggregate for an aggregate named after the
reservation, whose metadata names the owner project. The scheduler filter
reads the pools from the leases DB; the Nova aggregates show the same
pools to operators and to Nova's own aggregate filters.

What happens to the hosts when the lease ends (``before_end``,
``on_end`` and ``grace_period``) is decided and carried out by
:mod:`reservation_ext.plugins.host_end_policies`, to which the plugin's
end actions hand over. A reservation with a grace period books its
hosts for the grace period after its end too.

Tables: this module is the one that writes ``host_reservations``,
including the end phase that the end policies record (through
:class:`_EndPhases`); ``recycling_hosts`` is written by
:mod:`~reservation_ext.plugins.host_end_policies` alone.
"""

import datetime
import json

import sqlalchemy as sa

from db import api as db_api
from db import tables
from reservation_ext.clients import compute as compute_client
from reservation_ext import exceptions
from reservation_ext.leases import hints
from reservation_ext.planning import capabilities
from reservation_ext.planning import healing
from reservation_ext.planning import planner
from reservation_ext.planning import timelines
from reservation_ext.plugins import base
from reservation_ext.plugins import host_end_policies
from reservation_ext.states import ReservationStatus
from reservation_ext import validation

RESOURCE_TYPE = 'physical:host'
HOST_RESERVATIONS = tables.HOST_RESERVATIONS
HOSTS = tables.HOSTS
ALLOCATIONS = tables.ALLOCATIONS

# Blazar's messages for a min or max below 1, and a max below the min.
COUNT_BELOW_ONE = ('Malformed parameter min and max (must be greater than '
                   'or equal to 1)')
INVALID_RANGE = ('Invalid values for min/max of hosts. Max must be equal '
                 'to or larger than min.')
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
        **host_end_policies.SCHEMA_PROPERTIES,
    },
    'additionalProperties': False,
}
# Columns of host_reservations shown in lease views (Blazar's), and the
# optional constraints, shown when the request set them.
_VIEW_COLUMNS = ('min', 'max', 'hypervisor_properties',
                 'resource_properties', 'before_end', 'on_end',
                 'aggregate_id')
_OPTIONAL_COLUMNS = ('availability_zone', 'grace_period') + tuple(_MINIMUMS)
# What an update may change: the request, as the lease view shows it.
_UPDATABLE = ('min', 'max', 'hosts', 'before_end', 'on_end') + _QUERIES + \
    _OPTIONAL_COLUMNS


class PhysicalHostPlugin(base.ResourcePlugin):
    """Lease whole Nova compute hosts.

    ``end_policies`` (a
    :class:`~reservation_ext.plugins.host_end_policies.HostEndPolicies`)
    carries out what happens to the hosts when a lease ends.
    """

    def __init__(self, conf, clock, clients=None):
        super().__init__(conf, clock, clients)
        self.end_policies = host_end_policies.HostEndPolicies(
            conf, clock, self.clients, _EndPhases(clock))

    def validate(self, values):
        """Check a host request; return its normalized values.

        Its constraints are compiled into SQL conditions once, here:
        ``conditions``.
        """
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
        out.update(host_end_policies.check_request(values, self.conf))
        out['conditions'] = _conditions(out)
        return out

    def validate_proposal(self, values):
        """Check a host request of a schedule proposal; return it normalized.

        A proposal has no grace period; without named hosts, it wants one
        host unless it gives a minimum.
        """
        host_end_policies.refuse_in_proposal(values)
        # "Which hosts and when", without a count, is about one host; a
        # minimum alone is the count.
        if not values.get('hosts'):
            values = dict({'min': 1}, **values)
            values.setdefault('max', values['min'])
        return self.validate(values)

    def timeline(self, session, values, span, busy, for_update=False):
        """Return the whole-host timeline of the hosts a request may use."""
        hosts, allocations = planner.read_schedules(
            session, *span.reach, busy, values['conditions'])
        _check_pool(len(hosts), values)
        return timelines.WholeHosts(
            span, allocations, values['min'], values['max'],
            generations={host: row[0] for host, row in hosts.items()})

    def reserve(self, session, ctx, lease, reservation_id, values,
                hold=None):
        """Book the hosts and record the request; return its id."""
        try:
            self._book(session, lease, reservation_id, values, hold)
        except exceptions.NotEnoughResources:
            _check_pool(planner.count_matching(
                session, values['conditions']), values)
            raise
        # One request per reservation: it shares the reservation's id.
        session.execute(sa.insert(HOST_RESERVATIONS).values(
            id=reservation_id, reservation_id=reservation_id,
            **_request_columns(values)))
        return reservation_id

    def _book(self, session, lease, reservation_id, values, hold):
        """Book the hosts: any that match, or those ``hold`` holds.

        For the lease's window and the grace period after it.
        """
        until = host_end_policies.held_until(lease, values['grace_period'])
        if hold is None:
            planner.allocate_hosts(
                session, planner.Owner(reservation_id), lease['start_date'],
                until, values['min'], values['max'],
                self.busy(), conditions=values['conditions'])
            return
        held = planner.held_hosts(session, hold.proposal_id,
                                  hold.proposal_item)
        planner.allocate_hosts(
            session, planner.Owner(reservation_id), lease['start_date'],
            until, len(held), len(held),
            self.busy(ignore_proposal=hold.proposal_id), host_ids=held)

    def get_details(self, session, reservation_ids):
        """Return the request of each reservation as lease views show it."""
        details = {}
        for row in session.execute(sa.select(HOST_RESERVATIONS).where(
                HOST_RESERVATIONS.c.reservation_id.in_(reservation_ids))):
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
            if latest is not None:
                # Its hosts are held for the grace period after the end.
                latest -= datetime.timedelta(
                    seconds=request['grace_period'] or 0)
            raise base.blocked_extension(exc, latest, lease)
        session.execute(sa.update(HOST_RESERVATIONS).where(
            HOST_RESERVATIONS.c.reservation_id == reservation['id']).values(
                **_request_columns(request)))

    def undo_update(self, session, ctx, lease, reservation, values):
        """Give back the hosts a started reservation gained, and its window.

        The hosts it gained are those booked after its start; the step
        returns them from its aggregate to the free pool.
        """
        if reservation['status'] != ReservationStatus.ACTIVE:
            return self.update(session, ctx, lease, reservation, values)
        request = self._changed_request(reservation, values)
        gained = planner.release_gained(session, reservation['id'],
                                        lease['start_date'])
        planner.move_allocations(
            session, reservation['id'], lease['start_date'],
            host_end_policies.held_until(lease, request['grace_period']),
            self.busy())
        session.execute(sa.update(HOST_RESERVATIONS).where(
            HOST_RESERVATIONS.c.reservation_id == reservation['id']).values(
                **_request_columns(request)))
        return lambda ctx: self._leave(reservation, gained)

    def _changed_request(self, reservation, values):
        """Return the reservation's request, ``values`` applied, checked."""
        current = {key: reservation[key] for key in _UPDATABLE
                   if reservation.get(key) is not None}
        return self.validate(dict(current, **values))

    def _rebook(self, session, lease, reservation, request, values):
        """Book a reservation that has not started again, for ``request``.

        Without changed ``values``, its own hosts are moved to the new
        window if they are free for it; otherwise any match.
        """
        if not values:
            try:
                # Refused before it writes anything.
                return planner.move_allocations(
                    session, reservation['id'], lease['start_date'],
                    host_end_policies.held_until(
                        lease, request['grace_period']), self.busy())
            except exceptions.NotEnoughResources:
                pass
        planner.release(session, reservation['id'])
        self._book(session, lease, reservation['id'], request, None)

    def _grow(self, session, lease, reservation, request):
        """Extend a started reservation on its hosts, and add hosts."""
        booked = planner.booked_hosts(session, reservation['id'])
        _check_keeps(session, booked, request)
        until = host_end_policies.held_until(lease, request['grace_period'])
        planner.move_allocations(session, reservation['id'],
                                 lease['start_date'], until, self.busy())
        session.execute(sa.update(HOST_RESERVATIONS).where(
            HOST_RESERVATIONS.c.reservation_id == reservation['id']).values(
                **_request_columns(request)))
        if len(booked) >= request['min']:
            return None
        added = planner.allocate_hosts(
            session, planner.Owner(reservation['id']), self.clock.now(),
            until, request['min'] - len(booked),
            request['max'] - len(booked), self.busy(),
            conditions=request['conditions'])
        names = session.scalars(sa.select(HOSTS.c.service_name).where(
            HOSTS.c.id.in_(added)).order_by(HOSTS.c.service_name)).all()
        return lambda ctx: self._join(lease, reservation, names)

    def on_start(self, ctx, lease, reservation):
        """Move the booked hosts into the lease's aggregate; record it."""
        aggregate = self._join(lease, reservation,
                               host_end_policies.service_hosts(
                                   ctx, reservation['id']))
        with db_api.writer(ctx, self.clock) as session:
            session.execute(sa.update(HOST_RESERVATIONS).where(
                HOST_RESERVATIONS.c.reservation_id == reservation['id'])
                .values(aggregate_id=aggregate['id']))

    def heal_request(self, reservation):
        """Return what a replacement host must match: the request."""
        return healing.Request(conditions=tuple(
            self._changed_request(reservation, {})['conditions']))

    def on_heal(self, ctx, lease, reservation, moves):
        """Move the replacements into the lease's aggregate, the failed out.

        The failed hosts go back to the free pool, where they wait until
        Nova's service is back (they are unreservable meanwhile). Their
        instances stay where they are: evacuating them is the operator's
        call (``openstack server evacuate``).
        """
        self._join(lease, reservation,
                   [replacement for _failed, replacement in moves])
        self._leave(reservation, [failed for failed, _replacement in moves])

    def _join(self, lease, reservation, hosts):
        """Move ``hosts`` from the free pool to the lease's aggregate.

        Return the aggregate. Each host joins before it leaves: a move
        that fails half-way leaves it in both pools, not in none.
        """
        metadata = {compute_client.OWNER_KEY: lease['project_id'],
                    compute_client.RESERVATION_KEY: reservation['id']}
        metadata.update({project: 'true' for project in lease['projects']})
        aggregate = self.nova.ensure_aggregate(reservation['id'], metadata)
        freepool = self.nova.ensure_aggregate(
            self.conf.reservation.freepool_name)
        for host in hosts:
            self.nova.add_to_aggregate(aggregate, host)
            self.nova.remove_from_aggregate(freepool, host)
        return aggregate

    def _leave(self, reservation, hosts):
        """Move ``hosts`` from the lease's aggregate to the free pool.

        A host that Nova does not know any more (whose joining failed) is
        in neither. Each host joins before it leaves, as in :meth:`_join`.
        """
        aggregate = self.nova.ensure_aggregate(reservation['id'])
        freepool = self.nova.ensure_aggregate(
            self.conf.reservation.freepool_name)
        for host in hosts:
            self.nova.add_to_aggregate(freepool, host, missing_ok=True)
            self.nova.remove_from_aggregate(aggregate, host)

    def before_end(self, ctx, lease, reservation):
        """Hand ``before_end`` over to the end policies (``snapshot``)."""
        self.end_policies.before_end(ctx, reservation)

    def on_end(self, ctx, lease, reservation):
        """Hand the end over to the end policies; return the events begun.

        The end policies carry out ``on_end`` now, or begin the grace
        period (the ``grace_period_start`` event) before it.
        """
        return self.end_policies.on_end(ctx, lease, reservation)

    def on_delete(self, ctx, lease, reservation):
        """End a started reservation at once, without its grace period."""
        self.end_policies.on_delete(ctx, reservation)

    def run_pending(self, ctx):
        """End the grace periods that are over and recycle hosts.

        :returns: how many pieces of work were finished (see
            :mod:`~reservation_ext.plugins.host_end_policies`).
        """
        return self.end_policies.run_pending(ctx)

    def _check_region(self, region):
        """Refuse a region other than the one this cloud serves."""
        if region is None:
            return
        own = self.conf.reservation_client.region_name or 'RegionOne'
        if region != own:
            raise exceptions.InvalidInput(
                'region', 'this cloud serves region %s only' % own)

    def billing_resources(self, session, reservations):
        """Return the hosts booked for each reservation, with their sizes."""
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


def import_requests(session, rows):
    """Record what imported host reservations asked for (one INSERT).

    :param rows: host_reservations rows, each with the same keys.
    """
    if rows:
        session.execute(sa.insert(HOST_RESERVATIONS), rows)


class _EndPhases:
    """Write the end phase of host reservations for the end policies.

    :class:`~reservation_ext.plugins.host_end_policies.HostEndPolicies`
    decides when a phase begins and ends; the writes stay here, in the one
    module that writes ``host_reservations``.
    """

    def __init__(self, clock):
        self.clock = clock

    def begin_grace(self, ctx, reservation_id, act_at):
        """Put a reservation that has not ended yet in its grace period.

        :param act_at: when the grace period is over.
        """
        with db_api.writer(ctx, self.clock) as session:
            session.execute(sa.update(HOST_RESERVATIONS).where(
                HOST_RESERVATIONS.c.reservation_id == reservation_id,
                HOST_RESERVATIONS.c.end_phase.is_(None)).values(
                    end_phase=host_end_policies.GRACE, act_at=act_at))

    def set_end_phase(self, ctx, reservation_id, phase):
        """Set a reservation's end phase, with nothing left to act on."""
        with db_api.writer(ctx, self.clock) as session:
            session.execute(sa.update(HOST_RESERVATIONS).where(
                HOST_RESERVATIONS.c.reservation_id == reservation_id).values(
                    end_phase=phase, act_at=None))

    def claim_graces(self, ctx, now, claimed_until):
        """Claim the grace periods over at ``now``; return their rows.

        One conditional UPDATE moves their ``act_at`` to
        ``claimed_until``, so that one engine wins each. The rows are
        ``(reservation_id, on_end)``.
        """
        with db_api.writer(ctx, self.clock) as session:
            return db_api.update_returning(
                session, sa.update(HOST_RESERVATIONS)
                .where(HOST_RESERVATIONS.c.end_phase ==
                       host_end_policies.GRACE,
                       HOST_RESERVATIONS.c.act_at <= now)
                .values(act_at=claimed_until),
                HOST_RESERVATIONS.c.reservation_id,
                HOST_RESERVATIONS.c.on_end).all()


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
    """Return the host_reservations columns of a checked request."""
    columns = {key: values[key] for key in _VIEW_COLUMNS + _OPTIONAL_COLUMNS
               if key != 'aggregate_id'}
    columns['requested_hosts'] = (json.dumps(values['hosts'])
                                  if values['hosts'] else None)
    return columns


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
    """Return the SQL conditions of a request's constraints (compiled)."""
    conditions = [capabilities.compile(values[key], key) for key in _QUERIES]
    conditions += [column >= values[key] for key, column in _MINIMUMS.items()
                   if values[key] is not None]
    if values['availability_zone'] is not None:
        conditions.append(
            HOSTS.c.availability_zone == values['availability_zone'])
    if values['hosts']:
        names = [str(host) for host in values['hosts']]
        ids = {validation.database_id(name) for name in names} - {None}
        conditions.append(sa.or_(HOSTS.c.hypervisor_hostname.in_(names),
                                 HOSTS.c.service_name.in_(names),
                                 HOSTS.c.id.in_(ids)))
    return conditions


def _query(values, key):
    """Return a capability query as text ('' for none), as views show it."""
    query = values.get(key) or ''
    return query if isinstance(query, str) else json.dumps(query)


def _count(values, key, default):
    """Return min or max as an integer; refuse it in Blazar's words.

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
    """Return an optional minimum as an integer, or None when not given."""
    value = values.get(key)
    return None if value is None else validation.parse_integer(value, key)
