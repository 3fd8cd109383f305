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

"""The engine's reclaim: preemptible servers give way to bookings in time.

Preemptible servers
(:mod:`reservation_ext.planning.preemptible_placement`) run on
reservable capacity that the planner books as if they were not there.
Every poll, and once more in a lease's start (so that a lease made to
start now does not start late), the engine stops the ones in the way of
the bookings that start within ``[reservation] preemption_lead_time``:

1. Claim (after a read that finds any, so that an idle poll takes no
   writer lock), in one writer transaction: the bookings (host_allocations rows
   of reservations) that start by ``now + lead time``, have not ended,
   were not reclaimed for their current start (``reclaimed_for``) and
   that no other engine holds (``reclaim_claimed_until``, set to ``now +
   event_claim_timeout``). A lease's start takes its own bookings over,
   whoever holds them: the actions are idempotent.
2. For each host of a claimed booking, outside any transaction: list its
   servers through Nova (service user, microversion 2.100: the flavor's
   extra specs and the scheduler hints), pick the preemptible ones and
   decide with :func:`reservation_ext.planning.reclaim_choice.to_reclaim`
   which stop: the host's usable size (Nova's reserve and allocation
   ratios applied, :mod:`reservation_ext.planning.host_capacity`) must hold
   every booking running on it by then, the other servers that are no
   booking's, and the preemptibles that stay. Each one that stops is
   deleted or shelved and offloaded (``[reservation]
   preemptible_on_reclaim``), then ``instance.preempted`` is sent.
3. Record, per host that succeeded: ``reclaimed_for = start_date``, and
   (unless the survey is off) the preemptible work left on the host
   (:func:`reservation_ext.engine.preemptible_work.record`). A host that
   failed keeps its claim until it expires; a later poll retries. A
   booking moved to another start is reclaimed again; from the lead
   time on the filter lets no new preemptible onto its host.

``instance.preempted`` (publisher ``reservation``, priority INFO) has the
payload :data:`reservation_ext.leases.notification_schema.PREEMPTED`;
its ``reason`` says why: ``booking`` (a booking starts on the host at
``booking_start``) or ``power_off`` (the idle host is switched off). Two
engines may both act on a host whose claim expired while the first was
still at work: a server is then stopped once, and may be notified twice.
"""

import collections
import datetime
import math

from oslo_log import log as logging
import sqlalchemy as sa

from db import api as db_api
from db import tables
from reservation_ext import dates
from reservation_ext.engine import preemptible_work
from reservation_ext.leases import notification_schema
from reservation_ext.planning import host_capacity
from reservation_ext.planning import preemptible_placement
from reservation_ext.planning import reclaim_choice
from reservation_ext.planning import work_at_stake
from reservation_ext.store import allocations as store_allocations

LOG = logging.getLogger(__name__)

PREEMPTED = 'instance.preempted'

HOSTS = tables.HOSTS
ALLOCATIONS = tables.ALLOCATIONS
RESERVATIONS = tables.RESERVATIONS
INSTANCE_RESERVATIONS = tables.INSTANCE_RESERVATIONS

# A claimed booking: the host it is on and who needs it from when.
Booking = collections.namedtuple(
    'Booking', 'id host_id start_date reservation_id lease_id')
# A host's servers as a start's reclaim listed them: when, and the
# bookings whose needs that reclaim served.
_Listing = collections.namedtuple('_Listing', 'at booking_ids')


class Reclaimer:
    """Stops the preemptible servers in the way of bookings.

    :param conf: a ConfigOpts with the ``[reservation]`` options.
    :param clock: the source of "now" (:mod:`reservation_ext.clock`).
    :param clients: the plugins' clients; ``clients.nova`` acts on Nova
        (read at first use only).
    :param notifier: from
        :func:`reservation_ext.leases.notifications.get_notifier`.
    """

    def __init__(self, conf, clock, clients, notifier):
        self.conf = conf
        self.clock = clock
        self.clients = clients
        self.notifier = notifier
        # {host id: _Listing} of the starts' reclaims (see reclaim_lease).
        self._listed = {}

    def run(self, ctx):
        """Reclaim for the bookings due within the lead time.

        :returns: how many hosts were reclaimed.
        """
        due = self._due()
        # Most polls find nothing: a read, without a writer's lock.
        with db_api.context_manager.reader.using(ctx) as session:
            if not session.scalar(sa.select(sa.exists().where(due))):
                return 0
        return self._reclaim(ctx, self._claim(ctx, due, due))

    def reclaim_lease(self, ctx, lease_id):
        """Reclaim for a lease's bookings now (in its start).

        Also the bookings reclaimed ahead: a preemptible that the
        scheduler placed while the host was still open may have landed
        after that reclaim listed the host's servers. Not again when
        another start listed the host, at or after these bookings'
        start, for them too: in a burst, the leases starting together on
        one host are served by one listing (a preemptible placed before
        the host closed, ``preemption_lead_time`` earlier, and landing
        after that listing would have been on its way for all that time).

        :raises: what Nova's calls raise, so that the start is retried.
        """
        claimed = self._claim(ctx, sa.and_(
            RESERVATIONS.c.lease_id == lease_id,
            ALLOCATIONS.c.end_date > self.clock.now()))
        for host_id, bookings in _by_host(claimed).items():
            if self._listed_for(host_id, bookings):
                self._record(ctx, bookings)
            else:
                self._listed[host_id] = self._reclaim_host(ctx, host_id,
                                                           bookings)

    def _listed_for(self, host_id, bookings):
        """Say whether a start's listing of the host served ``bookings``."""
        listing = self._listed.get(host_id)
        return listing is not None and all(
            booking.id in listing.booking_ids and
            booking.start_date <= listing.at for booking in bookings)

    def _due(self):
        """Return SQL condition: a booking to reclaim for, not claimed now."""
        now = self.clock.now()
        lead = datetime.timedelta(
            seconds=self.conf.reservation.preemption_lead_time)
        return sa.and_(ALLOCATIONS.c.start_date <= now + lead,
                       sa.or_(ALLOCATIONS.c.reclaim_claimed_until.is_(None),
                              ALLOCATIONS.c.reclaim_claimed_until < now),
                       *self._unreclaimed())

    def _unreclaimed(self):
        return (ALLOCATIONS.c.reservation_id.is_not(None),
                ALLOCATIONS.c.end_date > self.clock.now(),
                sa.or_(ALLOCATIONS.c.reclaimed_for.is_(None),
                       ALLOCATIONS.c.reclaimed_for !=
                       ALLOCATIONS.c.start_date))

    def _claim(self, ctx, which, recheck=sa.true()):
        """Claim the bookings matching ``which``; return them.

        ``recheck`` (on host_allocations alone) is checked again by the
        UPDATE: on PostgreSQL, a concurrent claimer waits for our row
        locks and then tests it against what we committed, so it loses
        the rows we took.
        """
        until = self.clock.now() + datetime.timedelta(
            seconds=self.conf.reservation.event_claim_timeout)
        with db_api.writer(ctx, self.clock) as session:
            ids = sa.select(ALLOCATIONS.c.id).join(
                RESERVATIONS,
                RESERVATIONS.c.id == ALLOCATIONS.c.reservation_id).where(
                    which)
            claimed = store_allocations.claim_for_reclaim(
                session, ids, recheck, until)
            leases = dict(session.execute(
                sa.select(RESERVATIONS.c.id, RESERVATIONS.c.lease_id).where(
                    RESERVATIONS.c.id.in_({row.reservation_id
                                           for row in claimed}))).all())
        return [Booking(*row, leases[row.reservation_id]) for row in claimed]

    def _reclaim(self, ctx, claimed):
        """Reclaim each host of ``claimed``; a failure stops no other."""
        done = 0
        for host_id, bookings in _by_host(claimed).items():
            try:
                self._reclaim_host(ctx, host_id, bookings)
                done += 1
            except Exception:
                # The claim expires and a later poll retries the host.
                LOG.exception('Reclaiming host %s for reservation %s failed',
                              host_id, bookings[0].reservation_id)
        return done

    def _reclaim_host(self, ctx, host_id, bookings):
        """Stop what must stop on one host, then record its bookings.

        Return the :data:`_Listing` of the host's servers it made.
        """
        listed_at = self.clock.now()
        host, needed, reserved = self._read_host(ctx, host_id)
        servers = self.clients.nova.servers_with_hints_on(host.service_name)
        first = min(bookings, key=lambda booking: booking.start_date)
        stopped = self._to_stop(host, list(needed.values()), reserved,
                                servers)
        for server in stopped:
            self.stop(ctx, server, host.hypervisor_hostname, first)
        self._record(ctx, bookings, self._work_left(host, servers, stopped))
        return _Listing(listed_at, frozenset(needed))

    def _work_left(self, host, servers, stopped):
        """Return ``(host, {host id: Work})`` left, or None (no survey)."""
        if not self.conf.reservation.preemptible_work_interval:
            return None
        left = [server for server in servers if server not in stopped]
        return host, work_at_stake.of_servers(
            left, {host.hypervisor_hostname: host.id})

    def _read_host(self, ctx, host_id):
        """Read what a host must serve: ``(host, needed, reserved)``.

        ``needed``: ``{booking id: size}`` of the bookings on it that run
        by the lead time (the size None for a whole host); ``reserved``:
        the reserved servers of those bookings (counted in ``needed``
        already).
        """
        horizon = self.clock.now() + datetime.timedelta(
            seconds=self.conf.reservation.preemption_lead_time)
        on_host = sa.and_(ALLOCATIONS.c.host_id == host_id,
                          ALLOCATIONS.c.reservation_id.is_not(None),
                          ALLOCATIONS.c.start_date <= horizon,
                          ALLOCATIONS.c.end_date > self.clock.now())
        with db_api.context_manager.reader.using(ctx) as session:
            host = session.execute(sa.select(HOSTS).where(
                HOSTS.c.id == host_id)).one()
            needed = {row.id: None if row.whole_host else
                      (row.vcpus, row.memory_mb, row.disk_gb)
                      for row in session.execute(
                          sa.select(ALLOCATIONS).where(on_host))}
            reserved = set(session.scalars(
                sa.select(INSTANCE_RESERVATIONS.c.server_id).where(
                    INSTANCE_RESERVATIONS.c.reservation_id.in_(
                        sa.select(ALLOCATIONS.c.reservation_id)
                        .where(on_host)))))
        return host, needed, reserved

    def _to_stop(self, host, needed, reserved, servers):
        """Return the servers (Nova's views) that give way, newest first."""
        by_id = {server['id']: server for server in servers}
        mine, others = [], []
        for server in servers:
            # A booking's server first: a reserved server runs on its
            # slice until its lease ends, whatever its flavor says.
            if _is_booked(server, reserved):
                continue
            if preemptible_placement.server_is_preemptible(server):
                mine.append(reclaim_choice.Server(
                    server['id'], _size(server), server['created']))
            else:
                others.append(_size(server))
        capacity = host_capacity.from_nova_conf(self.conf).of(
            host.vcpus, host.memory_mb, host.local_gb)
        return [by_id[chosen.id] for chosen in reclaim_choice.to_reclaim(
            capacity, needed, mine, _total(others))]

    def servers_on(self, service_name):
        """Return a host's servers, Nova's views: ``(preemptible, others)``."""
        servers = self.clients.nova.servers_with_hints_on(service_name)
        preemptible = preemptible_placement.server_is_preemptible
        return ([server for server in servers if preemptible(server)],
                [server for server in servers if not preemptible(server)])

    def stop(self, ctx, server, hostname, booking=None):
        """Delete or shelve one preemptible server, then say so.

        :param booking: the :class:`Booking` it gives way to; None when
            the host is switched off
            (:mod:`reservation_ext.engine.power_manager`).
        """
        action = self.conf.reservation.preemptible_on_reclaim
        LOG.info('Preempting server %s on %s for %s (%s)', server['id'],
                 hostname, 'reservation %s' % booking.reservation_id
                 if booking else 'switching the host off', action)
        if action == 'shelve':
            self.clients.nova.shelve_offload(server['id'])
        else:
            self.clients.nova.delete_servers([server['id']])
        if self.notifier.is_enabled():
            self.notifier.info(ctx, PREEMPTED, {
                'server_id': server['id'],
                'project_id': server['tenant_id'],
                'host': hostname,
                'lease_id': booking and booking.lease_id,
                'reservation_id': booking and booking.reservation_id,
                'action': action,
                'reason': (notification_schema.REASON_BOOKING if booking
                           else notification_schema.REASON_POWER_OFF),
                'booking_start': booking and dates.format_date(
                    booking.start_date),
                'payload_version': notification_schema.PREEMPTED_VERSION,
                'event_time': dates.format_date(self.clock.now())})

    def _record(self, ctx, bookings, left=None):
        """Record the bookings reclaimed for their claimed starts.

        A booking moved since it was claimed is reclaimed again.

        :param left: ``(host, {host id: Work})``: the preemptible work
            left on the host listed, to record; None: no listing.
        """
        with db_api.writer(ctx, self.clock) as session:
            for booking in bookings:
                store_allocations.mark_reclaimed(session, booking.id,
                                                 booking.start_date)
            if left is not None:
                host, work = left
                preemptible_work.record(session, work, self.clock.now(),
                                        host_ids=[host.id])


def _by_host(bookings):
    by_host = collections.defaultdict(list)
    for booking in bookings:
        by_host[booking.host_id].append(booking)
    return dict(sorted(by_host.items()))


def _is_booked(server, reserved):
    """Say whether a bookings' size on the host counts the server already.

    A reserved server (one of ``reserved``), or one booted with an
    instance-capacity reservation's flavor (on its seat).
    """
    extra_specs = server.get('flavor', {}).get('extra_specs') or {}
    return (server['id'] in reserved or
            preemptible_placement.RESERVED_FLAVOR_SPEC in extra_specs)


def _size(server):
    """Get a server's ``(vcpus, memory_mb, disk_gb)`` from its flavor view."""
    flavor = server.get('flavor', {})
    return (flavor.get('vcpus', 0), flavor.get('ram', 0),
            flavor.get('disk', 0) + flavor.get('ephemeral', 0) +
            math.ceil((flavor.get('swap') or 0) / 1024))


def _total(sizes):
    return tuple(sum(column) for column in zip((0, 0, 0), *sizes))
