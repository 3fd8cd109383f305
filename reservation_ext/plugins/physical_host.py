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

Before the end (the ``before_end_lease`` event), ``before_end:
snapshot`` makes an image of every server on the hosts.

The end (``on_end``; ``[reservation] host_on_end`` when the request names
none):

* ``release``: the instances stay; the hosts go back to the free pool.
* ``delete_instances``: the instances are deleted (the end waits until
  Nova has), then the hosts go back to the free pool.
* ``recycle``: the hosts go to the recycling pool (a ``recycling_hosts``
  row each, and the ``[reservation] recycle_pool_name`` aggregate) and
  take no new instance, even for a later lease that holds them already,
  until the instances on them are gone; then the hosts go back to the
  free pool.

Grace period invariant: a reservation with ``grace_period`` G books its
hosts for ``[start, end + G)``, so the planner (and its cleaning time,
counted from there) gives them to no other lease until the grace period
is over. At the end, the lease ends as any other (TERMINATED; the hosts
take no new instance, since only active reservations are pools) but the
hosts stay in the lease's aggregate with their instances running: the
reservation's ``end_phase`` becomes ``grace`` with ``act_at`` = end + G
and the engine sends ``lease.event.grace_period_start``. Deleting the
lease ends the grace period at once.

Work after the end event is done by :meth:`PhysicalHostPlugin.run_pending`,
which every engine runs at every poll; nothing is lost when an engine
dies, and any number may run:

* a reservation in grace whose ``act_at`` passed is claimed by moving
  ``act_at`` on by ``[reservation] event_claim_timeout`` (one conditional
  UPDATE: one engine wins); the winner carries out ``on_end`` (every step
  idempotent) and sets ``end_phase`` to ``done``; an engine that died or
  failed leaves ``act_at`` to pass again, and another engine retries.
* a recycling host whose ``check_at`` passed is claimed in the same way
  (``check_at`` moved on by ``[reservation] event_poll_interval``); when
  Nova lists no server on it, it joins the free-pool aggregate (unless a
  started lease holds it already), leaves the recycling aggregate, and
  its row is deleted, last.
"""

import datetime
import json

from oslo_log import log as logging
import sqlalchemy as sa

from db import api as db_api
from db import tables
from reservation_ext.clients import compute as compute_client
from reservation_ext import dates
from reservation_ext import exceptions
from reservation_ext.leases import hints
from reservation_ext.planning import capabilities
from reservation_ext.planning import healing
from reservation_ext.planning import planner
from reservation_ext.planning import timelines
from reservation_ext.plugins import base
from reservation_ext.states import ReservationStatus
from reservation_ext import validation

LOG = logging.getLogger(__name__)

RESOURCE_TYPE = 'physical:host'
HOST_RESERVATIONS = tables.HOST_RESERVATIONS
HOSTS = tables.HOSTS
ALLOCATIONS = tables.ALLOCATIONS
RESERVATIONS = tables.RESERVATIONS
RECYCLING = tables.RECYCLING

# Blazar's messages for a min or max below 1, and a max below the min.
COUNT_BELOW_ONE = ('Malformed parameter min and max (must be greater than '
                   'or equal to 1)')
INVALID_RANGE = ('Invalid values for min/max of hosts. Max must be equal '
                 'to or larger than min.')
ON_END = ('release', 'delete_instances', 'recycle')
# Blazar's values ('default', and '' from its older clients): nothing.
BEFORE_END = ('default', '', 'snapshot')
# host_reservations.end_phase.
GRACE = 'grace'
DONE = 'done'
# The lease event that the end of a reservation with a grace period
# begins (notification lease.event.grace_period_start).
GRACE_PERIOD_START = 'grace_period_start'
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
        'grace_period': validation.nullable(validation.DURATION),
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
        out['on_end'] = values.get('on_end',
                                   self.conf.reservation.host_on_end)
        out['grace_period'] = _grace_period(values.get('grace_period'))
        out['conditions'] = _conditions(out)
        return out

    def validate_proposal(self, values):
        # A proposal holds the window alone: a lease made from it could
        # not be sure of the grace period after it.
        if values.get('grace_period') is not None:
            raise exceptions.InvalidInput(
                'grace_period', 'cannot be proposed: a proposal holds the '
                'hosts for its window only')
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
        session.execute(sa.insert(HOST_RESERVATIONS).values(
            id=reservation_id, reservation_id=reservation_id,
            **_request_columns(values)))
        return reservation_id

    def _book(self, session, lease, reservation_id, values, hold):
        """Book the hosts: any that match, or those ``hold`` holds.

        For the lease's window and the grace period after it.
        """
        until = _held_until(lease, values['grace_period'])
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
            _held_until(lease, request['grace_period']), self.busy())
        session.execute(sa.update(HOST_RESERVATIONS).where(
            HOST_RESERVATIONS.c.reservation_id == reservation['id']).values(
                **_request_columns(request)))
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
                    _held_until(lease, request['grace_period']), self.busy())
            except exceptions.NotEnoughResources:
                pass
        planner.release(session, reservation['id'])
        self._book(session, lease, reservation['id'], request, None)

    def _grow(self, session, lease, reservation, request):
        """Extend a started reservation on its hosts, and add hosts."""
        booked = planner.booked_hosts(session, reservation['id'])
        _check_keeps(session, booked, request)
        until = _held_until(lease, request['grace_period'])
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
        aggregate = self._join(lease, reservation,
                               self._service_hosts(ctx, reservation['id']))
        with db_api.writer(ctx, self.clock) as session:
            session.execute(sa.update(HOST_RESERVATIONS).where(
                HOST_RESERVATIONS.c.reservation_id == reservation['id']).values(
                    aggregate_id=aggregate['id']))

    def heal_request(self, reservation):
        """A replacement matches the reservation's request."""
        return healing.Request(conditions=tuple(
            self._changed_request(reservation, {})['conditions']))

    def on_heal(self, ctx, lease, reservation, moves):
        """The lease's aggregate takes the replacements, not the failed.

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
        """``snapshot``: an image of every server on the hosts."""
        if reservation.get('before_end') != 'snapshot':
            return
        for host in self._service_hosts(ctx, reservation['id']):
            for server in self.nova.servers_on(host):
                self.nova.snapshot_server(server)

    def on_end(self, ctx, lease, reservation):
        """Carry out ``on_end``, or begin the grace period before it."""
        grace = reservation.get('grace_period')
        if grace:
            self._begin_grace(ctx, reservation['id'],
                              _held_until(lease, grace))
            return [GRACE_PERIOD_START]
        self._end(ctx, reservation['id'], reservation['on_end'])
        return []

    def on_delete(self, ctx, lease, reservation):
        """End a started lease at once, without its grace period."""
        # A start that failed half-way may have left the lease aggregate.
        if reservation['status'] == ReservationStatus.ACTIVE or (
                self._end_phase(ctx, reservation['id']) == GRACE) or (
                reservation['status'] != ReservationStatus.DELETED and
                self.nova.find_aggregate(reservation['id'])):
            self._end(ctx, reservation['id'], reservation['on_end'])

    def run_pending(self, ctx):
        """End the grace periods that are over; recycle the hosts.

        See the module doc for how engines share this work.
        """
        finished = _count_done(self._end, self._claim_graces(ctx), ctx)
        return finished + _count_done(
            self._recycle, self._claim_recycling(ctx), ctx)

    def _end(self, ctx, reservation_id, on_end):
        """Carry out ``on_end`` now (every step may run again)."""
        hosts = self._service_hosts(ctx, reservation_id)
        if on_end == 'delete_instances':
            self.nova.delete_servers([
                server['id'] for host in hosts
                for server in self.nova.servers_on(host)])
        if on_end == 'recycle':
            self._start_recycling(ctx, reservation_id)
        pool = self.nova.ensure_aggregate(
            self.conf.reservation.recycle_pool_name if on_end == 'recycle'
            else self.conf.reservation.freepool_name)
        # A back-to-back lease that started already keeps its hosts.
        taken = () if on_end == 'recycle' else self._held_elsewhere(
            ctx, reservation_id)
        for host in hosts:
            if host not in taken:
                self.nova.add_to_aggregate(pool, host)
        self.nova.delete_aggregate(reservation_id)
        self._set_end_phase(ctx, reservation_id, DONE)
        return True

    def _begin_grace(self, ctx, reservation_id, act_at):
        with db_api.writer(ctx, self.clock) as session:
            session.execute(sa.update(HOST_RESERVATIONS).where(
                HOST_RESERVATIONS.c.reservation_id == reservation_id,
                HOST_RESERVATIONS.c.end_phase.is_(None)).values(
                    end_phase=GRACE, act_at=act_at))

    def _set_end_phase(self, ctx, reservation_id, phase):
        with db_api.writer(ctx, self.clock) as session:
            session.execute(sa.update(HOST_RESERVATIONS).where(
                HOST_RESERVATIONS.c.reservation_id == reservation_id).values(
                    end_phase=phase, act_at=None))

    @staticmethod
    def _end_phase(ctx, reservation_id):
        with db_api.context_manager.reader.using(ctx) as session:
            return session.scalar(sa.select(HOST_RESERVATIONS.c.end_phase).where(
                HOST_RESERVATIONS.c.reservation_id == reservation_id))

    def _claim_graces(self, ctx):
        """``(reservation_id, on_end)`` of the grace periods now over.

        Claimed: their ``act_at`` moves on by the claim timeout.
        """
        now = self.clock.now()
        with db_api.writer(ctx, self.clock) as session:
            return db_api.update_returning(
                session, sa.update(HOST_RESERVATIONS)
                .where(HOST_RESERVATIONS.c.end_phase == GRACE,
                       HOST_RESERVATIONS.c.act_at <= now)
                .values(act_at=now + datetime.timedelta(
                    seconds=self.conf.reservation.event_claim_timeout)),
                HOST_RESERVATIONS.c.reservation_id, HOST_RESERVATIONS.c.on_end).all()

    def _start_recycling(self, ctx, reservation_id):
        """Put the reservation's hosts into the recycling pool."""
        recycling = sa.exists().where(
            RECYCLING.c.host_id == ALLOCATIONS.c.host_id)
        with db_api.writer(ctx, self.clock) as session:
            session.execute(sa.insert(RECYCLING).from_select(
                ['host_id', 'reservation_id', 'check_at'],
                sa.select(ALLOCATIONS.c.host_id,
                          sa.literal(reservation_id),
                          sa.literal(self.clock.now(), sa.DateTime))
                .where(ALLOCATIONS.c.reservation_id == reservation_id,
                       ~recycling).distinct()))

    def _claim_recycling(self, ctx):
        """``(host_id, service_name)`` of the recycling hosts to check.

        Claimed: their ``check_at`` moves on by the poll interval.
        """
        now = self.clock.now()
        with db_api.writer(ctx, self.clock) as session:
            claimed = db_api.update_returning(
                session,
                sa.update(RECYCLING).where(RECYCLING.c.check_at <= now)
                .values(check_at=now + datetime.timedelta(
                    seconds=self.conf.reservation.event_poll_interval)),
                RECYCLING.c.host_id).scalars().all()
            return session.execute(
                sa.select(HOSTS.c.id, HOSTS.c.service_name)
                .where(HOSTS.c.id.in_(claimed))).all() if claimed else []

    def _recycle(self, ctx, host_id, service_name):
        """Free a recycling host once Nova lists no server on it.

        :returns: whether the host was freed.
        """
        if self.nova.servers_on(service_name):
            return False
        if not self._held_now(ctx, host_id):
            self.nova.add_to_aggregate(self.nova.ensure_aggregate(
                self.conf.reservation.freepool_name), service_name)
        recycle_pool = self.nova.find_aggregate(
            self.conf.reservation.recycle_pool_name)
        if recycle_pool is not None:
            self.nova.remove_from_aggregate(recycle_pool, service_name)
        with db_api.writer(ctx, self.clock) as session:
            session.execute(sa.delete(RECYCLING).where(
                RECYCLING.c.host_id == host_id))
        return True

    @staticmethod
    def _held_elsewhere(ctx, reservation_id):
        """The service names of a reservation's hosts another one holds.

        Held: in the pool of another started host reservation.
        """
        other = ALLOCATIONS.alias('other')
        with db_api.context_manager.reader.using(ctx) as session:
            return frozenset(session.scalars(
                sa.select(HOSTS.c.service_name)
                .join(ALLOCATIONS, ALLOCATIONS.c.host_id == HOSTS.c.id)
                .join(other, other.c.host_id == HOSTS.c.id)
                .join(RESERVATIONS,
                      RESERVATIONS.c.id == other.c.reservation_id)
                .where(ALLOCATIONS.c.reservation_id == reservation_id,
                       other.c.reservation_id != reservation_id,
                       other.c.whole_host,
                       RESERVATIONS.c.status == ReservationStatus.ACTIVE)))

    @staticmethod
    def _held_now(ctx, host_id):
        """Whether a started host reservation holds the host (its pool).

        Not a reserved server's slice: those hosts stay in the free pool.
        """
        with db_api.context_manager.reader.using(ctx) as session:
            return session.scalar(sa.select(sa.exists().where(
                ALLOCATIONS.c.host_id == host_id, ALLOCATIONS.c.whole_host,
                ALLOCATIONS.c.reservation_id == RESERVATIONS.c.id,
                RESERVATIONS.c.status == ReservationStatus.ACTIVE)))

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
        ids = {validation.database_id(name) for name in names} - {None}
        conditions.append(sa.or_(HOSTS.c.hypervisor_hostname.in_(names),
                                 HOSTS.c.service_name.in_(names),
                                 HOSTS.c.id.in_(ids)))
    return conditions


def _count_done(action, claimed, ctx):
    """Run ``action(ctx, *row)`` on each claimed row; count the successes.

    A failure is logged and counts as not done: the claim expires and a
    later poll, of this engine or another, tries again.
    """
    done = 0
    for row in claimed:
        try:
            done += bool(action(ctx, *row))
        except Exception:
            LOG.exception('%s of %s failed; a later poll retries it',
                          action.__name__, row[0])
    return done


def _grace_period(value):
    """The grace period in seconds, or None for none."""
    if value is None:
        return None
    duration = dates.parse_duration(value, 'grace_period')
    return int(duration.total_seconds())


def _held_until(lease, grace_period):
    """The end of what the reservation books: the end and the grace."""
    return lease['end_date'] + datetime.timedelta(seconds=grace_period or 0)


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
