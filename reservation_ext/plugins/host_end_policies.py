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

"""End policies: what happens to the hosts of a host lease when it ends.

:class:`HostEndPolicies` carries them out for
:class:`reservation_ext.plugins.physical_host.PhysicalHostPlugin`; the
functions below check a request's end-policy fields
(:func:`check_request`) and say how long its hosts are booked
(:func:`held_until`).

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

Work after the end event is done by :meth:`HostEndPolicies.run_pending`,
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

Tables: this module is the one that writes ``recycling_hosts``. It reads
``host_reservations`` but does not write it: the end phase
(``end_phase``, ``act_at``) is written by
:mod:`~reservation_ext.plugins.physical_host`, the one module that writes
that table, through the ``phases`` object it hands to
:class:`HostEndPolicies`.
"""

import datetime

from oslo_log import log as logging
import sqlalchemy as sa

from db import api as db_api
from db import tables
from reservation_ext import dates
from reservation_ext import exceptions
from reservation_ext.states import ReservationStatus
from reservation_ext import validation

LOG = logging.getLogger(__name__)

HOST_RESERVATIONS = tables.HOST_RESERVATIONS
HOSTS = tables.HOSTS
ALLOCATIONS = tables.ALLOCATIONS
RESERVATIONS = tables.RESERVATIONS
RECYCLING = tables.RECYCLING

ON_END = ('release', 'delete_instances', 'recycle')
# Blazar's values ('default', and '' from its older clients): nothing.
BEFORE_END = ('default', '', 'snapshot')
# host_reservations.end_phase.
GRACE = 'grace'
DONE = 'done'
# The lease event that the end of a reservation with a grace period
# begins (notification lease.event.grace_period_start).
GRACE_PERIOD_START = 'grace_period_start'
# The end-policy fields of a host request's JSON Schema.
SCHEMA_PROPERTIES = {
    'before_end': {'enum': list(BEFORE_END)},
    'on_end': {'enum': list(ON_END)},
    'grace_period': validation.nullable(validation.DURATION),
}


def check_request(values, conf):
    """Return the checked end-policy fields of a host request.

    ``before_end`` defaults to ``default`` and ``on_end`` to
    ``[reservation] host_on_end``; ``grace_period`` is in seconds, or
    None for none.
    """
    return {'before_end': values.get('before_end', 'default'),
            'on_end': values.get('on_end', conf.reservation.host_on_end),
            'grace_period': _grace_period(values.get('grace_period'))}


def refuse_in_proposal(values):
    """Refuse a grace period in a schedule proposals request.

    A proposal holds the window alone: a lease made from it could not be
    sure of the grace period after it.
    """
    if values.get('grace_period') is not None:
        raise exceptions.InvalidInput(
            'grace_period', 'cannot be proposed: a proposal holds the '
            'hosts for its window only')


def held_until(lease, grace_period):
    """Return the end of what a reservation books: its end plus grace."""
    return lease['end_date'] + datetime.timedelta(seconds=grace_period or 0)


def service_hosts(ctx, reservation_id):
    """Return the service names of the hosts booked for a reservation."""
    with db_api.context_manager.reader.using(ctx) as session:
        return session.scalars(
            sa.select(HOSTS.c.service_name).distinct()
            .join(ALLOCATIONS, ALLOCATIONS.c.host_id == HOSTS.c.id)
            .where(ALLOCATIONS.c.reservation_id == reservation_id)
            .order_by(HOSTS.c.service_name)).all()


class HostEndPolicies:
    """Carry out the end policies of host reservations, on Nova.

    :param clients: the plugin's clients
        (:class:`~reservation_ext.clients.plugin_clients.PluginClients`),
        whose ``nova`` it acts through.
    :param phases: writes a reservation's end phase to
        ``host_reservations``: ``begin_grace(ctx, reservation_id,
        act_at)``, ``set_end_phase(ctx, reservation_id, phase)`` and
        ``claim_graces(ctx, now, claimed_until)``, which returns the
        ``(reservation_id, on_end)`` of the grace periods over at ``now``,
        claimed until ``claimed_until``.
    """

    def __init__(self, conf, clock, clients, phases):
        self.conf = conf
        self.clock = clock
        self.clients = clients
        self.phases = phases

    @property
    def nova(self):
        """Return the Nova client that the end policies act through."""
        return self.clients.nova

    def before_end(self, ctx, reservation):
        """Snapshot every server on the hosts if ``before_end`` says so."""
        if reservation.get('before_end') != 'snapshot':
            return
        for host in service_hosts(ctx, reservation['id']):
            for server in self.nova.servers_on(host):
                self.nova.snapshot_server(server)

    def on_end(self, ctx, lease, reservation):
        """Carry out ``on_end``, or begin the grace period before it.

        :returns: the lease events the end began (``grace_period_start``
            when it began a grace period).
        """
        grace = reservation.get('grace_period')
        if grace:
            self.phases.begin_grace(ctx, reservation['id'],
                                    held_until(lease, grace))
            return [GRACE_PERIOD_START]
        self._end(ctx, reservation['id'], reservation['on_end'])
        return []

    def on_delete(self, ctx, reservation):
        """End a started reservation at once, without its grace period."""
        # A start that failed half-way may have left the lease aggregate.
        if reservation['status'] == ReservationStatus.ACTIVE or (
                _end_phase(ctx, reservation['id']) == GRACE) or (
                reservation['status'] != ReservationStatus.DELETED and
                self.nova.find_aggregate(reservation['id'])):
            self._end(ctx, reservation['id'], reservation['on_end'])

    def run_pending(self, ctx):
        """End the grace periods that are over; recycle the hosts.

        See the module doc for how engines share this work.

        :returns: how many pieces of work were finished.
        """
        finished = _count_done(self._end, self._claim_graces(ctx), ctx)
        return finished + _count_done(
            self._recycle, self._claim_recycling(ctx), ctx)

    def _end(self, ctx, reservation_id, on_end):
        """Carry out ``on_end`` now (every step may run again)."""
        hosts = service_hosts(ctx, reservation_id)
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
        taken = () if on_end == 'recycle' else _held_elsewhere(
            ctx, reservation_id)
        for host in hosts:
            if host not in taken:
                self.nova.add_to_aggregate(pool, host)
        self.nova.delete_aggregate(reservation_id)
        self.phases.set_end_phase(ctx, reservation_id, DONE)
        return True

    def _claim_graces(self, ctx):
        """Claim the grace periods now over; return their rows.

        The rows are ``(reservation_id, on_end)``; their ``act_at`` moves
        on by the claim timeout.
        """
        now = self.clock.now()
        return self.phases.claim_graces(
            ctx, now, now + datetime.timedelta(
                seconds=self.conf.reservation.event_claim_timeout))

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
        """Claim the recycling hosts due a check; return their rows.

        The rows are ``(host_id, service_name)``; their ``check_at``
        moves on by the poll interval.
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
        if not _held_now(ctx, host_id):
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


def _end_phase(ctx, reservation_id):
    """Return a reservation's end phase: None, ``grace`` or ``done``."""
    with db_api.context_manager.reader.using(ctx) as session:
        return session.scalar(sa.select(HOST_RESERVATIONS.c.end_phase).where(
            HOST_RESERVATIONS.c.reservation_id == reservation_id))


def _held_elsewhere(ctx, reservation_id):
    """Return the service names of a reservation's hosts another holds.

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


def _held_now(ctx, host_id):
    """Return whether a started host reservation holds the host (its pool).

    Not a reserved server's slice: those hosts stay in the free pool.
    """
    with db_api.context_manager.reader.using(ctx) as session:
        return session.scalar(sa.select(sa.exists().where(
            ALLOCATIONS.c.host_id == host_id, ALLOCATIONS.c.whole_host,
            ALLOCATIONS.c.reservation_id == RESERVATIONS.c.id,
            RESERVATIONS.c.status == ReservationStatus.ACTIVE)))


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
    """Return the grace period in seconds, or None for none."""
    if value is None:
        return None
    duration = dates.parse_duration(value, 'grace_period')
    return int(duration.total_seconds())
