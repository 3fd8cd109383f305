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

"""The engine's power manager: idle reservable hosts off, on for bookings.

Every engine poll, after the host monitor, when the ``[power] driver``
switches anything (with ``noop``, the default, nothing at all happens):

1. Plan: one query reads every reservable host with its windows (the
   live allocations that the planner's :class:`~reservation_ext.planning.
   planner.Busy` counts, bookings and unexpired holds, that end after
   now, widened by ``[reservation] cleaning_time``);
   :func:`reservation_ext.power.policy.plan` gives each host's next
   transition, the hosts taken in the planner's order of preference
   (:mod:`reservation_ext.planning.preference`: ``[power]`` host weights,
   then id; the query reads them in it), and the rows whose planned
   transition changed get ``power_next_action``, ``power_next_at`` and
   ``power_next_reason``.
2. Switch each host whose transition is due, claimed as other engine
   work: one conditional UPDATE of the host row (the ``power_state`` this
   engine read, no live claim) sets ``power_claimed_by`` to a new token
   and ``power_claimed_until`` to now + ``[power] claim_timeout``, and a
   ``host_power_events`` row records the transition; only the engine
   whose UPDATE matched acts. It records the outcome under that token: an
   engine whose claim expired changes nothing, and the next poll of any
   engine takes the transition over. Every action is idempotent.

   - ``power_off``: a host that runs a server that is not preemptible
     stays on (``power_failure`` says why, and no claim is made); one
     that runs preemptible servers only stays on unless ``[power]
     reclaim_preemptible_for_power``, and then they are stopped the
     reclaimer's way (:meth:`~reservation_ext.engine.reclaim.Reclaimer.
     stop`). Then its nova-compute service is disabled with the reason
     :data:`DISABLED_REASON` ``, idle until <time>``; if a server landed
     meanwhile, the service is enabled again and the host stays on.
     Then the driver switches it off: ``off``.
   - ``power_on``: the driver switches it on: ``powering_on``.
3. Confirm each ``powering_on`` host: once Nova reports its service
   ``up``, the service is enabled (if it is disabled for the power
   manager's reason) and the host recorded ``on``. A host still not up
   ``[power] power_on_timeout`` seconds after it was switched on, or
   whose driver failed to switch it on for a booking, fails as the host
   monitor fails hosts (``failed_at``, ``failure`` ``power``,
   unreservable), so that the monitor's healing moves its bookings to
   another host; it recovers when it comes up.

A driver or Nova failure goes to the host's ``power_failure`` and its
event's outcome ``failed``; the claim is released, so that the next poll
retries the transition.
"""

import collections
import datetime
import uuid

from oslo_log import log as logging
import sqlalchemy as sa

from db import api as db_api
from db import tables
from reservation_ext import dates
from reservation_ext.planning import planner
from reservation_ext.power import drivers
from reservation_ext.power import policy
from reservation_ext.store import hosts as store_hosts

LOG = logging.getLogger(__name__)

HOSTS = tables.HOSTS
ALLOCATIONS = tables.ALLOCATIONS
CAPABILITIES = tables.CAPABILITIES
POWER_EVENTS = tables.POWER_EVENTS

# The start of the disabled_reason of a service that the power manager
# disabled to switch its host off (the host monitor leaves it alone).
DISABLED_REASON = 'reservation-ext: powered off'
# The host's failure when it did not come up (as the monitor's 'down').
FAILURE = 'power'
DONE = 'done'
FAILED = 'failed'
# host_power_events.detail and computehosts.power_failure are this long.
_DETAIL_LENGTH = 255

# A host as read for planning: its row, and the policy's view of it.
Reading = collections.namedtuple('Reading', 'row host')
# A transition this engine holds: its token, event row and host.
_Claim = collections.namedtuple('_Claim', 'token event_id read transition')


def read_hosts(session, busy):
    """Read every reservable host with its windows, in one query.

    In the planner's order of preference (``busy.prefer``), the spares
    kept on being the first idle hosts in it; the windows are the
    allocations ``busy`` counts that end after ``busy.now``, widened by
    its margin.

    :returns: :class:`Reading` s (the computehosts row, the
        :class:`~reservation_ext.power.policy.Host`).
    """
    live = sa.and_(ALLOCATIONS.c.host_id == HOSTS.c.id,
                   ALLOCATIONS.c.end_date > busy.now - busy.margin,
                   *busy.counted())
    rows = session.execute(
        sa.select(HOSTS, ALLOCATIONS.c.start_date.label('w_start'),
                  ALLOCATIONS.c.end_date.label('w_end'))
        .select_from(HOSTS.outerjoin(ALLOCATIONS, live))
        .order_by(*busy.prefer.order_by(), ALLOCATIONS.c.start_date)).all()
    windows = collections.defaultdict(list)
    hosts = {}
    for row in rows:
        hosts[row.id] = row
        if row.w_start is not None:
            windows[row.id].append((row.w_start - busy.margin,
                                    row.w_end + busy.margin))
    return [Reading(row, policy.Host(
        id=row.id, state=row.power_state,
        managed=row.power_managed and row.service_name is not None,
        failed=row.failed_at is not None,
        windows=tuple(windows[row.id]))) for row in hosts.values()]


def switched_off(service):
    """Say whether a Nova service view was disabled by the power manager."""
    return (service.get('status') == 'disabled' and
            (service.get('disabled_reason') or '').startswith(
                DISABLED_REASON))


class PowerManager:
    """Switches idle reservable hosts off and on again for their bookings.

    :param conf: a ConfigOpts with the ``[reservation]`` and ``[power]``
        options.
    :param clock: the source of "now" (:mod:`reservation_ext.clock`).
    :param driver: the :class:`~reservation_ext.power.drivers.PowerDriver`
        (:func:`reservation_ext.power.drivers.load`).
    :param clients: the plugins' clients; ``clients.nova`` (the service
        user's :class:`~reservation_ext.clients.compute.NovaClient`) acts
        on Nova (read at first use only).
    :param reclaimer: the engine's
        :class:`~reservation_ext.engine.reclaim.Reclaimer`, which lists a
        host's servers and stops preemptible ones.
    :param engine_id: who claims transitions.
    """

    def __init__(self, conf, clock, driver, clients, reclaimer, engine_id):
        self.conf = conf
        self.clock = clock
        self.driver = driver
        self.clients = clients
        self.reclaimer = reclaimer
        self.engine_id = engine_id

    def run(self, ctx):
        """Run one poll: plan, switch what is due, confirm hosts coming up.

        :returns: how many hosts were switched, confirmed or failed.
        """
        if not self.driver.switches:
            return 0
        now = self.clock.now()
        reads = self._read(ctx, now)
        planned = policy.plan([read.host for read in reads], now,
                              policy.Settings.from_conf(self.conf))
        self._record_plan(ctx, reads, planned, now)
        done = 0
        for read in reads:
            transition = planned[read.row.id]
            try:
                if read.host.state == policy.POWERING_ON:
                    done += self._confirm(ctx, read)
                elif transition is not None and transition.due(now):
                    done += self._switch(ctx, read, transition)
            except Exception:
                # Nova or the DB failed: a later poll tries again.
                LOG.exception('Power: host %s failed',
                              read.row.hypervisor_hostname)
        return done

    def _read(self, ctx, now):
        with db_api.context_manager.reader.using(ctx) as session:
            return read_hosts(session, planner.Busy.from_conf(now, self.conf))

    def _record_plan(self, ctx, reads, planned, now):
        """Write the planned transitions of the hosts where they changed.

        A transition that stays due keeps the time it became due (the
        policy says "now" at every poll). ``power_failure`` concerns a due
        transition: it is cleared when none is due any more, unless the
        host failed (it then says why).
        """
        changed = []
        for read in reads:
            row, transition = read.row, planned[read.row.id]
            recorded = (row.power_next_action, row.power_next_at,
                        row.power_next_reason)
            values = _planned(row, transition, now)
            if values != recorded:
                stale = row.failed_at is None and not (
                    transition and transition.due(now))
                changed.append((row.id, values, stale))
        if not changed:
            return
        with db_api.writer(ctx, self.clock) as session:
            for host_id, (action, at, reason), stale in changed:
                store_hosts.record_power_plan(session, host_id, action, at,
                                              reason, clear_failure=stale)

    def _switch(self, ctx, read, transition):
        if transition.action == policy.POWER_OFF:
            return self._power_off(ctx, read, transition)
        return self._power_on(ctx, read, transition)

    def _power_off(self, ctx, read, transition):
        name = read.row.service_name
        preemptible, others = self.reclaimer.servers_on(name)
        kept = _kept_on(preemptible, others,
                        self.conf.power.reclaim_preemptible_for_power)
        if kept:
            self._note(ctx, read, kept)
            return 0
        claim = self._claim(ctx, read, transition)
        if claim is None:
            return 0
        try:
            for server in preemptible:
                self.reclaimer.stop(ctx, server,
                                    read.row.hypervisor_hostname)
            landed = self._switch_off(ctx, read, transition)
        except Exception as e:
            LOG.exception('Power: switching host %s off failed',
                          read.row.hypervisor_hostname)
            return self._finish(ctx, claim, failure=_describe(e))
        if landed:
            return self._finish(ctx, claim, failure=(
                'not switched off: server(s) %s landed on it meanwhile'
                % ', '.join(landed)))
        return self._finish(ctx, claim, state=policy.OFF)

    def _switch_off(self, ctx, read, transition):
        """Disable the service, check again, switch off.

        :returns: the ids of the servers that landed meanwhile (the host
            then stays on, its service enabled again).
        """
        name = read.row.service_name
        self.clients.nova.set_compute_service(
            name, False, _disabled_reason(read, transition))
        try:
            landed = sorted(server['id'] for servers in
                            self.reclaimer.servers_on(name)
                            for server in servers)
            if not landed:
                self.driver.power_off(self._target(ctx, read.row))
                return []
        except Exception:
            # A host that stays on takes servers again.
            self.clients.nova.set_compute_service(name, True)
            raise
        self.clients.nova.set_compute_service(name, True)
        return landed

    def _power_on(self, ctx, read, transition):
        claim = self._claim(ctx, read, transition)
        if claim is None:
            return 0
        try:
            self.driver.power_on(self._target(ctx, read.row))
        except Exception as e:
            LOG.exception('Power: switching host %s on failed',
                          read.row.hypervisor_hostname)
            # A booking waits for it: its bookings are healed elsewhere.
            return self._finish(ctx, claim, failure=_describe(e),
                                fail_host=transition.reason ==
                                policy.BOOKING)
        return self._finish(ctx, claim, state=policy.POWERING_ON)

    def _confirm(self, ctx, read):
        """Confirm a host coming up: on once its service is up, or failed."""
        row = read.row
        service = self.clients.nova.compute_service(row.service_name)
        now = self.clock.now()
        if service is not None and service['state'] == 'up':
            if switched_off(service):
                self.clients.nova.set_compute_service(row.service_name, True)
            with db_api.writer(ctx, self.clock) as session:
                confirmed = store_hosts.confirm_powered_on(session, row.id,
                                                           now)
                if confirmed:
                    store_hosts.recover_from_power(session, row.id, FAILURE)
            if confirmed:
                LOG.info('Power: host %s is on', row.hypervisor_hostname)
            return confirmed
        timeout = datetime.timedelta(seconds=self.conf.power.power_on_timeout)
        if row.failed_at is not None or now - row.power_changed_at < timeout:
            return 0
        with db_api.writer(ctx, self.clock) as session:
            return _fail(session, row, now,
                         'nova-compute not up %d s after the host was '
                         'switched on' % self.conf.power.power_on_timeout,
                         while_powering_on=True)

    def _note(self, ctx, read, why):
        """Record why a host stays on (when that changed)."""
        if read.row.power_failure == why:
            return
        with db_api.writer(ctx, self.clock) as session:
            store_hosts.note_power_failure(session, read.row.id, why)

    def _claim(self, ctx, read, transition):
        """Hold the host for ``transition``, or None if another engine has.

        The UPDATE matches only while the host is in the state read and no
        live claim holds it.
        """
        now = self.clock.now()
        token = '%s:%s' % (self.engine_id, uuid.uuid4().hex)
        until = now + datetime.timedelta(seconds=self.conf.power.claim_timeout)
        with db_api.writer(ctx, self.clock) as session:
            if not store_hosts.claim_power_transition(
                    session, read.row.id, read.host.state, now, token,
                    until):
                return None
            event_id = session.execute(sa.insert(POWER_EVENTS).values(
                host_id=read.row.id, action=transition.action,
                reason=transition.reason, engine=token,
                started_at=now)).inserted_primary_key[0]
        LOG.info('Power: %s of host %s (%s)', transition.action,
                 read.row.hypervisor_hostname, transition.reason)
        return _Claim(token, event_id, read, transition)

    def _finish(self, ctx, claim, state=None, failure=None, fail_host=False):
        """Record a claimed transition's outcome, if the claim still holds.

        :param state: the host's new power state (a success).
        :param failure: why it failed (the state stays).
        :param fail_host: also fail the host (``failure`` ``power``).
        :returns: 1 if the host was switched (and that recorded), else 0:
            a failure is retried at the next poll, not in this one.
        """
        now = self.clock.now()
        with db_api.writer(ctx, self.clock) as session:
            if not store_hosts.record_power_outcome(
                    session, claim.read.row.id, claim.token, now, state,
                    _cut(failure)):
                LOG.warning('Power: the claim on host %s expired; its %s '
                            'is left to a later poll',
                            claim.read.row.hypervisor_hostname,
                            claim.transition.action)
                return 0
            session.execute(sa.update(POWER_EVENTS).where(
                POWER_EVENTS.c.id == claim.event_id).values(
                    finished_at=now, outcome=FAILED if failure else DONE,
                    detail=_cut(failure)))
            if fail_host:
                _fail(session, claim.read.row, now, _cut(failure))
        return int(state is not None)

    def _target(self, ctx, row):
        """Return the host as power drivers see it."""
        with db_api.context_manager.reader.using(ctx) as session:
            properties = dict(session.execute(
                sa.select(CAPABILITIES.c.name, CAPABILITIES.c.value)
                .where(CAPABILITIES.c.host_id == row.id)).all())
        return drivers.Target(row.hypervisor_hostname, row.service_name,
                              properties)


def _planned(row, transition, now):
    """Return ``(action, at, reason)`` of ``transition`` as the row records it.

    A transition that was due already keeps the time it became due.
    """
    if transition is None:
        return None, None, None
    at = transition.at
    if transition.due(now) and row.power_next_at is not None and \
            row.power_next_at <= now:
        at = row.power_next_at
    return transition.action, at, transition.reason


def _kept_on(preemptible, others, reclaim_preemptible):
    """Say why a host with these servers stays on, or return None."""
    if others:
        return _cut('not switched off: it runs server(s) that are not '
                    'preemptible: %s' % ', '.join(
                        sorted(server['id'] for server in others)))
    if preemptible and not reclaim_preemptible:
        return ('not switched off: it runs %d preemptible server(s) and '
                '[power] reclaim_preemptible_for_power is false'
                % len(preemptible))
    return None


def _disabled_reason(read, transition):
    """Return the service's disabled_reason while the host is off."""
    upcoming = [start for start, _end in read.host.windows
                if start >= transition.at]
    if not upcoming:
        return DISABLED_REASON + ', idle'
    return '%s, idle until %s' % (DISABLED_REASON,
                                  dates.format_date(min(upcoming)))


def _fail(session, row, now, why, while_powering_on=False):
    """Fail a host as the host monitor does (``failure`` ``power``)."""
    failed = store_hosts.fail_for_power(session, row.id, FAILURE, why, now,
                                        while_powering_on)
    if failed:
        LOG.warning('Power: reservable host %s failed: %s',
                    row.hypervisor_hostname, why)
    return failed


def _describe(error):
    return '%s: %s' % (type(error).__name__, error) if str(error) else \
        type(error).__name__


def _cut(text):
    return text if text is None else text[:_DETAIL_LENGTH]
