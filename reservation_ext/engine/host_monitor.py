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

"""The engine's host monitor: failed reservable hosts, their bookings healed.

With ``[reservation] host_monitor`` set, every engine poll does, as
Blazar's polling monitor:

1. Detect (once per ``host_monitor_interval`` seconds over all engines):
   the engine whose conditional UPDATE moves the one row of
   ``host_monitor_state`` from a ``next_check`` that has come to the next
   one reads the nova-compute services (``GET
   /os-services?binary=nova-compute``); the other engines skip it. With
   an interval of 0 every engine reads them every poll. A reservable host
   whose service is ``down`` or ``disabled`` fails: one conditional
   UPDATE sets its ``failed_at`` and ``failure`` and makes it unreservable
   ``WHERE failed_at IS NULL``; a failed host whose service is up and
   enabled recovers ``WHERE failed_at IS NOT NULL``. Engines that read
   the services at once (an interval of 0) make each change once, by the
   engine whose UPDATE matched. A host Nova does not list is left as it
   is, and so is one that the power manager
   (:mod:`reservation_ext.engine.power_manager`) switched off or is
   switching on
   (``power_state`` not ``on``), or whose service it disabled to switch
   the host off (the ``disabled_reason`` it wrote): its service is down
   and disabled on purpose, and the power manager fails it (``failure``
   ``power``) when it does not come up in time.
2. Heal (every poll while a booking is due): each reservation (pending or
   active, of a pending or active lease) with bookings on failed hosts
   that start within ``healing_interval`` minutes gets, in one writer
   transaction, a replacement for each booking that its plugin's
   :meth:`~reservation_ext.plugins.base.ResourcePlugin.heal_request`
   finds free (:mod:`reservation_ext.planning.healing`: the move is the
   booking's claim, the planner's compare-and-swap the replacement's).
   A started reservation that got one has ``resources_changed``; one that
   did not has ``missing_resources``, and its lease ``degraded``. A
   reservation with ``missing_resources`` is searched again only in the
   poll that read the services (so at most once per interval over all
   engines), not in every poll: its search found nothing, and a host it
   may take frees up rarely.
3. Act on Nova for the moves of started reservations, outside the
   transaction: the plugin's ``on_heal`` (a host lease's aggregate takes
   the replacement, the failed host goes back to the free pool). The
   moved rows keep ``moved_from`` under the claim ``move_claimed_until``
   until that is done; a claim that expired (its engine died) is taken
   over by the next poll of any engine.
4. Clear: a reservation none of whose bookings is on a failed host any
   more (the host came back, or a later poll found a replacement) loses
   ``missing_resources``, and a lease with no such reservation
   ``degraded``, with conditional UPDATEs.

Each lease whose booking moved or whose ``degraded`` changed is sent
``lease.update`` (the lease view after the change, as every lease
notification). ``degraded`` follows ``missing_resources`` alone: a
started reservation that got its replacement (``resources_changed``) has
all it asked for, so its lease is not degraded, and ``degraded`` clears
when the host comes back, as the reservation keeps its replacement.
"""

import datetime
import functools

from oslo_db import exception as db_exc
from oslo_log import log as logging
import sqlalchemy as sa

from db import api as db_api
from db import tables
from reservation_ext.engine import power_manager
from reservation_ext import exceptions
from reservation_ext.leases import notifications
from reservation_ext.leases import views
from reservation_ext.planning import healing
from reservation_ext.planning import planner
from reservation_ext.power import policy
from reservation_ext import states
from reservation_ext.store import allocations as store_allocations
from reservation_ext.store import hosts as store_hosts
from reservation_ext.store import leases as store_leases

LOG = logging.getLogger(__name__)

HOSTS = tables.HOSTS
ALLOCATIONS = tables.ALLOCATIONS
RESERVATIONS = tables.RESERVATIONS
LEASES = tables.LEASES
MONITOR_STATE = tables.MONITOR_STATE

DOWN = 'down'
DISABLED = 'disabled'
# The lease and reservation statuses whose bookings are healed; a lease
# in another (starting, updating, ...) waits for a later poll.
_HEALED_LEASES = (states.LeaseStatus.PENDING, states.LeaseStatus.ACTIVE)
_HEALED_RESERVATIONS = (states.ReservationStatus.PENDING,
                        states.ReservationStatus.ACTIVE)


def failure_of(service):
    """Return a service view's ``down``, ``disabled`` or None (up, enabled)."""
    if service['state'] != 'up':
        return DOWN
    if service['status'] != 'enabled':
        return DISABLED
    return None


def changes(hosts, services):
    """Tell which hosts fail and which recover, from Nova's services.

    :param hosts: ``{service_name: failed}`` of the reservable hosts
        (``failed``: the failure recorded now, or None).
    :param services: Nova's nova-compute services (``host``, ``state``,
        ``status``).
    :returns: ``(failing, recovered)``: ``{service_name: failure}`` of the
        hosts that fail now, and the service names of those that are back.
    """
    failing, recovered = {}, []
    for service in services:
        name = service['host']
        if name not in hosts or power_manager.switched_off(service):
            continue
        failure = failure_of(service)
        if failure and not hosts[name]:
            failing[name] = failure
        elif failure is None and hosts[name]:
            recovered.append(name)
    return failing, sorted(recovered)


class HostMonitor:
    """Detects failed reservable hosts and heals the bookings on them.

    :param conf: a ConfigOpts with the ``[reservation]`` and ``[power]``
        options.
    :param clock: the source of "now" (:mod:`reservation_ext.clock`).
    :param plugins: ``{resource_type: ResourcePlugin}``.
    :param clients: the plugins' clients; ``clients.nova`` reads the
        services (at first use only).
    :param notifier: from
        :func:`reservation_ext.leases.notifications.get_notifier`.
    """

    def __init__(self, conf, clock, plugins, clients, notifier):
        self.conf = conf.reservation
        # The healing's searches: the cleaning time and [power] preference.
        self.busy = functools.partial(planner.Busy.from_conf, conf=conf)
        self.clock = clock
        self.plugins = plugins
        self.clients = clients
        self.notifier = notifier

    def run(self, ctx):
        """Run one poll: detect failures (when due), heal, act on Nova, clear.

        :returns: how many hosts changed state, reservations were healed
            or marked, moves were finished and leases cleared.
        """
        if not self.conf.host_monitor:
            return 0
        checked = self._claim_check(ctx)
        done = self._detect(ctx) if checked else 0
        notices = set()
        done += self._heal(ctx, notices, checked)
        done += self._finish_moves(ctx)
        done += self._clear(ctx, notices)
        self._notify(ctx, notices)
        return done

    def _claim_check(self, ctx):
        """Say whether this engine reads Nova's services in this poll.

        The engine whose UPDATE moves ``next_check`` on from a time that
        has come holds this interval's read. The first claim makes the
        row; of two engines making it at once, the second skips.
        """
        interval = self.conf.host_monitor_interval
        if not interval:
            return True
        now = self.clock.now()
        with db_api.context_manager.reader.using(ctx) as session:
            next_check = session.scalar(sa.select(MONITOR_STATE.c.next_check)
                                        .where(MONITOR_STATE.c.id == 1))
        if next_check is not None and next_check > now:
            return False
        values = {'next_check': now + datetime.timedelta(seconds=interval)}
        with db_api.writer(ctx, self.clock) as session:
            if next_check is not None:
                return bool(session.execute(
                    sa.update(MONITOR_STATE).where(
                        MONITOR_STATE.c.id == 1,
                        MONITOR_STATE.c.next_check <= now)
                    .values(**values)).rowcount)
            try:
                with session.begin_nested():
                    session.execute(
                        sa.insert(MONITOR_STATE).values(id=1, **values))
            except db_exc.DBDuplicateEntry:
                return False
            return True

    def _detect(self, ctx):
        """Record the hosts that failed or came back; return how many."""
        with db_api.context_manager.reader.using(ctx) as session:
            # A host that the power manager switched off (or on, until
            # Nova reports it up) is its to watch.
            hosts = dict(session.execute(
                sa.select(HOSTS.c.service_name, HOSTS.c.failure)
                .where(HOSTS.c.power_state == policy.ON)).all())
        if not hosts:
            return 0
        failing, recovered = changes(hosts,
                                     self.clients.nova.compute_services())
        if not failing and not recovered:
            return 0
        now = self.clock.now()
        changed = 0
        # Each change is made by the engine whose UPDATE matched.
        with db_api.writer(ctx, self.clock) as session:
            for name, failure in sorted(failing.items()):
                if store_hosts.mark_failed(session, name, failure, now):
                    LOG.warning('Reservable host %s: nova-compute is %s',
                                name, failure)
                    changed += 1
            for name in recovered:
                if store_hosts.mark_recovered(session, name, now):
                    LOG.warning('Reservable host %s: nova-compute is back',
                                name)
                    changed += 1
        return changed

    def _heal(self, ctx, notices, checked):
        """Heal each reservation with due bookings; return how many.

        The reservations already missing resources only when ``checked``
        (this engine read the services in this poll).
        """
        now = self.clock.now()
        searched = [] if checked else [~RESERVATIONS.c.missing_resources]
        with db_api.context_manager.reader.using(ctx) as session:
            due = session.execute(
                sa.select(RESERVATIONS.c.id, RESERVATIONS.c.lease_id)
                .distinct()
                .join(ALLOCATIONS,
                      ALLOCATIONS.c.reservation_id == RESERVATIONS.c.id)
                .join(LEASES, LEASES.c.id == RESERVATIONS.c.lease_id)
                .where(*healing.due(now, self.conf.healing_interval),
                       RESERVATIONS.c.status.in_(_HEALED_RESERVATIONS),
                       LEASES.c.status.in_(_HEALED_LEASES), *searched)
                .order_by(RESERVATIONS.c.id)).all()
        healed = 0
        for reservation_id, lease_id in due:
            try:
                outcome = self._heal_reservation(ctx, reservation_id,
                                                 lease_id)
            except Exception:
                # Nothing was written: a later poll tries again.
                LOG.exception('Healing reservation %s failed',
                              reservation_id)
                continue
            if outcome is not None:
                healed += 1
                self._act(ctx, *outcome)
                notices.add(lease_id)
        return healed

    @db_api.retry_on_conflict(exceptions.ConcurrentUpdate)
    def _heal_reservation(self, ctx, reservation_id, lease_id):
        """Move the due bookings of one reservation; mark what is missing.

        :returns: None when nothing changed, else ``(lease, reservation,
            moves)`` with the moves that Nova must see (a started
            reservation's).
        """
        now = self.clock.now()
        with db_api.writer(ctx, self.clock) as session:
            lease, reservation = _read(session, self.plugins, lease_id,
                                       reservation_id)
            due = healing.bookings(session, reservation_id, now,
                                   self.conf.healing_interval)
            if reservation is None or not due:
                return None
            plugin = views.plugin_for(self.plugins,
                                      reservation['resource_type'])
            request = plugin.heal_request(reservation)
            started = reservation['status'] == states.ReservationStatus.ACTIVE
            moves, missing = [], [booking.host_id for booking in due]
            if request is not None:
                moves, missing = healing.replace(
                    session, reservation_id, due, request,
                    self.busy(now),
                    self._claim_until() if started else None)
            changed = False
            if moves and started:
                changed = store_leases.mark_resources_changed(
                    session, reservation_id)
            if missing:
                changed |= store_leases.mark_missing(session, reservation_id)
                changed |= store_leases.mark_degraded(session, lease_id)
            if missing and changed:
                LOG.warning('Reservation %s of lease %s: no free host '
                            'replaces failed host(s) %s; the lease is '
                            'degraded', reservation_id, lease_id,
                            sorted(set(missing)))
            if not (moves or changed):
                return None
            for move in moves:
                LOG.info('Reservation %s: booking %s moved from failed host '
                         '%s to host %s', reservation_id, move.allocation_id,
                         move.from_host, move.to_host)
            return lease, reservation, moves if started else []

    def _claim_until(self):
        return self.clock.now() + datetime.timedelta(
            seconds=self.conf.event_claim_timeout)

    def _act(self, ctx, lease, reservation, moves):
        """Do the Nova side of a started reservation's moves, then record them.

        A failure leaves the rows claimed: the claim expires and
        :meth:`_finish_moves` of a later poll does it again.
        """
        if not moves:
            return
        try:
            self._on_heal(ctx, lease, reservation,
                          [(move.from_host, move.to_host) for move in moves])
        except Exception:
            LOG.exception('Reservation %s: acting on Nova for its moved '
                          'bookings failed; a later poll retries it',
                          reservation['id'])
            return
        self._moved(ctx, [move.allocation_id for move in moves])

    def _on_heal(self, ctx, lease, reservation, host_pairs):
        """Call the plugin's ``on_heal`` with service names."""
        ids = {host for pair in host_pairs for host in pair}
        with db_api.context_manager.reader.using(ctx) as session:
            names = dict(session.execute(
                sa.select(HOSTS.c.id, HOSTS.c.service_name)
                .where(HOSTS.c.id.in_(ids))).all())
        plugin = views.plugin_for(self.plugins, reservation['resource_type'])
        plugin.on_heal(ctx, lease, reservation, [
            (names[failed], names[replacement])
            for failed, replacement in host_pairs])

    def _moved(self, ctx, allocation_ids):
        with db_api.writer(ctx, self.clock) as session:
            store_allocations.finish_moves(session, allocation_ids)

    def _finish_moves(self, ctx):
        """Take over the Nova side of moves whose claim expired."""
        now = self.clock.now()
        with db_api.context_manager.reader.using(ctx) as session:
            if not session.scalar(sa.select(sa.exists().where(
                    store_allocations.expired_moves(now)))):
                return 0
        with db_api.writer(ctx, self.clock) as session:
            claimed = store_allocations.claim_expired_moves(
                session, now, self._claim_until())
            by_reservation = {}
            for row in session.execute(
                    sa.select(ALLOCATIONS.c.id, ALLOCATIONS.c.reservation_id,
                              ALLOCATIONS.c.moved_from, ALLOCATIONS.c.host_id)
                    .where(ALLOCATIONS.c.id.in_(claimed))):
                by_reservation.setdefault(row.reservation_id, []).append(
                    healing.Move(row.id, row.moved_from, row.host_id))
            targets = {}
            for reservation_id, moves in by_reservation.items():
                lease_id = session.scalar(
                    sa.select(RESERVATIONS.c.lease_id)
                    .where(RESERVATIONS.c.id == reservation_id))
                targets[reservation_id] = _read(
                    session, self.plugins, lease_id, reservation_id)
        for reservation_id, moves in by_reservation.items():
            self._act(ctx, *targets[reservation_id], moves)
        return len(by_reservation)

    def _clear(self, ctx, notices):
        """Clear missing_resources and degraded that no failure keeps."""
        now = self.clock.now()
        with db_api.context_manager.reader.using(ctx) as session:
            if not session.scalar(sa.select(
                    sa.exists().where(store_leases.unmissing(
                        healing.failed_hosts(), now)) |
                    sa.exists().where(store_leases.undegraded()))):
                return 0
        with db_api.writer(ctx, self.clock) as session:
            store_leases.clear_missing(session, healing.failed_hosts(), now)
            cleared = store_leases.clear_degraded(session)
        for lease_id in cleared:
            LOG.info('Lease %s is no longer degraded', lease_id)
        notices.update(cleared)
        return len(cleared)

    def _notify(self, ctx, lease_ids):
        """Send ``lease.update`` with the view of each of ``lease_ids``."""
        if not lease_ids or not self.notifier.is_enabled():
            return
        with db_api.context_manager.reader.using(ctx) as session:
            payloads = notifications.read_payloads(
                session, self.plugins,
                views.lease_views_by_id(session, self.plugins, lease_ids))
        now = self.clock.now()
        for payload in payloads:
            notifications.notify(self.notifier, ctx,
                                 notifications.LEASE_UPDATE, payload, now)


def _read(session, plugins, lease_id, reservation_id):
    """Read ``(lease, reservation)`` as the plugins get them; None if gone."""
    rows = session.execute(sa.select(LEASES).where(
        LEASES.c.id == lease_id)).all()
    if not rows:
        return None, None
    lease = views.lease_dicts(session, rows)[lease_id]
    reservation = next(
        (view for view in views.reservation_views(
            session, plugins, [lease_id]).get(lease_id, [])
         if view['id'] == reservation_id), None)
    return lease, reservation
