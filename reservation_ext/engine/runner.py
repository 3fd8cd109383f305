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

"""The lease engine: runs due lease events through the resource plugins.

Any number of engines (threads or processes) may share one leases DB; each
event is executed once:

1. Claim, in one writer transaction: select up to ``event_batch_size`` due
   events (``FOR UPDATE SKIP LOCKED`` on PostgreSQL, so that engines do not
   queue on each other's rows; SQLite serializes writers with ``BEGIN
   IMMEDIATE``), then ``UPDATE ... SET status='IN_PROGRESS', claimed_by=
   <token>, claim_expires_at=<now + event_claim_timeout> WHERE id IN
   (<candidates>) AND <still claimable> RETURNING ...`` (on MariaDB, which
   has no ``UPDATE ... RETURNING``, the rows are locked, updated and read
   back: :func:`db.api.update_returning`). The token is new for every
   claim, so only the returned rows are ours. The same
   transaction moves the leases to STARTING / TERMINATING. These writes,
   and those of step 3, are made by :mod:`reservation_ext.store.leases`.
2. Run the plugin actions, outside any transaction.
3. Record all outcomes of the batch in one transaction; every write is
   conditioned on the event still being claimed with our token, so an
   engine whose claim expired cannot overwrite the work of its successor.

An engine that dies keeps its events IN_PROGRESS until the claim expires;
they are then due again and another engine re-runs them (plugin actions
are idempotent). An engine only starts an event while at least half of the
claim timeout is left, and records its outcomes at least every poll
interval; the events it did not start go back to UNDONE.

The engine calls its ``checkpoint`` (given when it is built; by default
nothing) at the points where dying matters: :data:`CLAIMED` once a claim
is committed, :data:`PLUGIN_ACTION` before each plugin action, and
:data:`RECORDING` before the outcomes are committed. The HA tests build
engines whose checkpoint kills the process there (``kill -9``).

After the events, every poll stops the preemptible servers in the way of
the bookings that start within the lead time
(:mod:`reservation_ext.engine.reclaim`); a lease's start does so for its
own bookings first. Then every poll runs each plugin's
:meth:`~reservation_ext.plugins.base.ResourcePlugin.run_pending`: work
that is due outside of the lease events (a host reservation's grace
period that ended, hosts that recycle), which the plugin claims in the DB
by its own rules. Last, with ``[reservation] host_monitor``, the host
monitor (:mod:`reservation_ext.engine.host_monitor`) heals the bookings
on failed hosts, and the power manager
(:mod:`reservation_ext.engine.power_manager`) switches idle reservable
hosts off
and on again for their bookings (with a ``[power] driver`` that switches).
"""

import collections
import datetime
import os
import socket
import uuid

from oslo_log import log as logging
import sqlalchemy as sa

from db import api as db_api
from db import tables
from reservation_ext.clients import plugin_clients
from reservation_ext import context
from reservation_ext.enforcement import enforcer
from reservation_ext.engine import host_monitor
from reservation_ext.engine import power_manager
from reservation_ext.engine import reclaim
from reservation_ext.leases import notifications
from reservation_ext.leases import views
from reservation_ext.power import drivers
from reservation_ext import states
from reservation_ext.store import leases as store_leases

LOG = logging.getLogger(__name__)

LEASES = tables.LEASES

EventType = states.EventType
LeaseStatus = states.LeaseStatus
ReservationStatus = states.ReservationStatus

_Step = collections.namedtuple(
    '_Step', 'action lease_during lease_done reservations_done')
# What each event type does. ``lease_during`` is set when the event is
# claimed, ``lease_done`` and ``reservations_done`` when it succeeds.
_STEPS = {
    EventType.START_LEASE: _Step('on_start', LeaseStatus.STARTING,
                                 LeaseStatus.ACTIVE,
                                 ReservationStatus.ACTIVE),
    EventType.BEFORE_END_LEASE: _Step('before_end', None, None, None),
    EventType.END_LEASE: _Step('on_end', LeaseStatus.TERMINATING,
                               LeaseStatus.TERMINATED,
                               ReservationStatus.DELETED),
}

# Where an engine calls its checkpoint (see the module doc).
CLAIMED = 'claimed'
PLUGIN_ACTION = 'plugin_action'
RECORDING = 'recording'
CHECKPOINTS = (CLAIMED, PLUGIN_ACTION, RECORDING)


def _no_checkpoint(point, event):
    """Do nothing, carry on: the default checkpoint."""


# The outcome of one event: ``reason`` is None on success; ``notices``
# the further lease events that the plugins said it began.
_Outcome = collections.namedtuple('_Outcome', 'event reason final notices')


def _sources(new_status):
    """List the statuses from which a lease may move to ``new_status``."""
    return sorted(s for s in LeaseStatus.TRANSITIONS
                  if LeaseStatus.can_move(s, new_status))


def _clients(conf, plugins):
    """Return the clients the plugins act through (they share them).

    The service user's when no plugin has any.
    """
    for plugin in plugins.values():
        clients = getattr(plugin, 'clients', None)
        if clients is not None:
            return clients
    return plugin_clients.PluginClients(conf)


def _event_order(event):
    """Order within a batch: by time; at one instant, ends before the rest.

    A batch has one event per lease (:func:`store_leases.claim_events`
    claims none of a lease with an earlier event unfinished), so this
    only orders leases: one that ends frees its hosts before another that
    starts on them at the same instant takes them (back-to-back leases).
    """
    return (event['time'], event['event_type'] != EventType.END_LEASE,
            event['id'])


class _Batch:
    """Claimed events with their leases and reservations."""

    def __init__(self, token, events, leases, reservations):
        self.token = token
        self.events = sorted(events, key=_event_order)
        self.leases = leases
        self.reservations = reservations


class Engine:
    """Runs the due events of the leases DB.

    :param conf: a ConfigOpts with the ``[reservation]`` options
    :param clock: the source of "now" (:mod:`reservation_ext.clock`)
    :param plugins: ``{resource_type: ResourcePlugin}``
    :param notifier: from
        :func:`reservation_ext.leases.notifications.get_notifier`
    :param engine_id: who claims events (default: host name and process id)
    :param enforcement: the
        :class:`~reservation_ext.enforcement.enforcer.Enforcement` told of
        every lease end (by default one with no filters)
    :param reclaimer: the
        :class:`~reservation_ext.engine.reclaim.Reclaimer` of preemptible
        capacity (by default one acting through the plugins' clients)
    :param monitor: the
        :class:`~reservation_ext.engine.host_monitor.HostMonitor` of the
        reservable hosts (by default one acting through the plugins'
        clients; idle unless ``[reservation] host_monitor``)
    :param power: the
        :class:`~reservation_ext.engine.power_manager.PowerManager` of the
        reservable hosts (by default one with the ``[power] driver``,
        acting through the plugins' clients and ``reclaimer``; idle with
        the ``noop`` driver)
    :param checkpoint: ``checkpoint(point, event)``, called at each of
        :data:`CHECKPOINTS` with the event concerned (the first of the
        batch for :data:`RECORDING`); by default it does nothing
    """

    def __init__(self, conf, clock, plugins, notifier, engine_id=None,
                 enforcement=None, reclaimer=None, monitor=None,
                 power=None, checkpoint=None):
        self.conf = conf.reservation
        self.clock = clock
        self.plugins = plugins
        self.notifier = notifier
        self.engine_id = engine_id or '%s:%d' % (socket.gethostname(),
                                                 os.getpid())
        self.enforcement = enforcement or enforcer.disabled(conf)
        self.reclaimer = reclaimer or reclaim.Reclaimer(
            conf, clock, _clients(conf, plugins), notifier)
        self.monitor = monitor or host_monitor.HostMonitor(
            conf, clock, plugins, _clients(conf, plugins), notifier)
        self.power = power or power_manager.PowerManager(
            conf, clock, drivers.load(conf), _clients(conf, plugins),
            self.reclaimer, self.engine_id)
        self.checkpoint = checkpoint or _no_checkpoint

    def run(self, stop_event):
        """Process events until ``stop_event`` (a threading.Event) is set.

        Polls again at once while there is work, else every
        ``event_poll_interval`` seconds.
        """
        while not stop_event.is_set():
            try:
                busy = self.run_once() > 0
            except Exception:
                # A DB outage must not end the service; the next poll
                # retries and expired claims make sure nothing is lost.
                LOG.exception('Engine %s failed to process events',
                              self.engine_id)
                busy = False
            if not busy:
                stop_event.wait(self.conf.event_poll_interval)

    def run_once(self):
        """Claim up to ``event_batch_size`` due events and run them.

        Then reclaim preemptible capacity and run the plugins' pending
        work. Return how many events were run (successfully or not) plus
        how many hosts were reclaimed and pieces of pending work were
        finished.
        """
        ctx = context.get_admin_context()
        return (self._run_events(ctx) + self._reclaim(ctx) +
                self._run_pending(ctx) + self._watch_hosts(ctx) +
                self._switch_hosts(ctx))

    def _watch_hosts(self, ctx):
        try:
            return self.monitor.run(ctx)
        except Exception:
            # Nova or the DB failed: the next poll reads the services again.
            LOG.exception('Engine %s: the host monitor failed',
                          self.engine_id)
            return 0

    def _switch_hosts(self, ctx):
        try:
            return self.power.run(ctx)
        except Exception:
            # A due transition stays due: the next poll plans it again.
            LOG.exception('Engine %s: the power manager failed',
                          self.engine_id)
            return 0

    def _reclaim(self, ctx):
        try:
            return self.reclaimer.run(ctx)
        except Exception:
            # As for pending work: what failed stays due for a later poll.
            LOG.exception('Engine %s: reclaiming preemptible capacity '
                          'failed', self.engine_id)
            return 0

    def _run_events(self, ctx):
        batch = self._claim(ctx)
        if batch is None:
            return 0
        self.checkpoint(CLAIMED, batch.events[0])
        outcomes = self._execute(ctx, batch)
        self.checkpoint(RECORDING, batch.events[0])
        self._notify(ctx, self._record(ctx, batch, outcomes),
                     {o.event['id']: o.notices for o in outcomes})
        return len(outcomes)

    def _run_pending(self, ctx):
        """Run each plugin's pending work; a failing plugin stops no other."""
        finished = 0
        for resource_type, plugin in sorted(self.plugins.items()):
            try:
                finished += plugin.run_pending(ctx)
            except Exception:
                # What failed stays due: a later poll retries it.
                LOG.exception('Engine %s: pending work of %s failed',
                              self.engine_id, resource_type)
        return finished

    def _claim(self, ctx):
        now = self.clock.now()
        token = '%s:%s' % (self.engine_id, uuid.uuid4().hex)
        expires = now + datetime.timedelta(
            seconds=self.conf.event_claim_timeout)
        with db_api.writer(ctx, self.clock) as session:
            events = store_leases.claim_events(
                session, now, token, expires, self.conf.event_batch_size)
            if not events:
                return None
            self._mark_leases(session, events)
            return self._load(session, token, events)

    @staticmethod
    def _mark_leases(session, events):
        """Move the leases of claimed events to STARTING / TERMINATING."""
        for event_type, step in _STEPS.items():
            lease_ids = [e['lease_id'] for e in events
                         if e['event_type'] == event_type]
            if step.lease_during and lease_ids:
                store_leases.begin_leases(session, lease_ids,
                                          _sources(step.lease_during),
                                          step.lease_during)

    def _load(self, session, token, events):
        """Load the claimed events with what their plugins get (as the API)."""
        lease_ids = list({e['lease_id'] for e in events})
        leases = views.lease_dicts(session, session.execute(
            sa.select(LEASES).where(LEASES.c.id.in_(lease_ids))).all())
        reservations = collections.defaultdict(list, views.reservation_views(
            session, self.plugins, lease_ids))
        return _Batch(token, events, leases, reservations)

    def _execute(self, ctx, batch):
        """Run the batch's events in order, within the claim's time.

        Stop starting events when half the claim timeout or the poll
        interval is over, so that every started event has time to finish
        before its claim expires and outcomes are recorded regularly.
        """
        deadline = self.clock.now() + datetime.timedelta(
            seconds=min(self.conf.event_claim_timeout / 2.0,
                        self.conf.event_poll_interval))
        outcomes = []
        for event in batch.events:
            if self.clock.now() >= deadline:
                break
            outcomes.append(self._run_event(ctx, batch, event))
        return outcomes

    def _run_event(self, ctx, batch, event):
        step = _STEPS[event['event_type']]
        lease = batch.leases[event['lease_id']]
        if step.lease_during and lease['status'] != step.lease_during:
            return _Outcome(event, 'lease %s is %s, cannot run %s' % (
                lease['id'], lease['status'], event['event_type']), True, ())
        notices = []
        reservations = batch.reservations[lease['id']]
        if event['event_type'] == EventType.END_LEASE and \
                not event['attempts']:
            # Once per end, before the plugins act, as Blazar; a retry
            # does not tell the filters again.
            self.enforcement.on_end(ctx, lease, reservations)
        try:
            if event['event_type'] == EventType.START_LEASE:
                # A lease made to start now had no lead time.
                self.reclaimer.reclaim_lease(ctx, lease['id'])
            for reservation in reservations:
                plugin = views.plugin_for(self.plugins,
                                          reservation['resource_type'])
                self.checkpoint(PLUGIN_ACTION, event)
                notices += getattr(plugin, step.action)(
                    ctx, lease, reservation) or ()
        except Exception as e:
            reason = '%s: %s' % (step.action, str(e) or type(e).__name__)
            attempts = event['attempts'] + 1
            final = attempts >= self.conf.event_max_attempts
            LOG.log(logging.ERROR if final else logging.WARNING,
                    'Event %(id)s (%(type)s of lease %(lease)s), attempt '
                    '%(attempt)d of %(max)d failed: %(reason)s',
                    {'id': event['id'], 'type': event['event_type'],
                     'lease': lease['id'], 'attempt': attempts,
                     'max': self.conf.event_max_attempts, 'reason': reason})
            return _Outcome(event, reason, final, ())
        return _Outcome(event, None, False, sorted(set(notices)))

    def _record(self, ctx, batch, outcomes):
        """Write the outcomes; return the events recorded as DONE.

        Every write is conditioned on the event still being claimed with
        the batch's token.
        """
        token = batch.token
        now = self.clock.now()
        with db_api.writer(ctx, self.clock) as session:
            done = []
            for event_type in EventType.ALL:
                done += self._record_done(
                    session, token, event_type,
                    [o.event for o in outcomes
                     if o.reason is None and
                     o.event['event_type'] == event_type])
            for outcome in outcomes:
                if outcome.reason is not None:
                    self._record_failure(session, token, now, outcome)
            started = {o.event['id'] for o in outcomes}
            unstarted = [e['id'] for e in batch.events
                         if e['id'] not in started]
            if unstarted:
                store_leases.release_events(session, unstarted, token)
        return done

    @staticmethod
    def _record_done(session, token, event_type, events):
        if not events:
            return []
        done_ids = store_leases.finish_events(
            session, [e['id'] for e in events], token)
        done = [e for e in events if e['id'] in done_ids]
        step = _STEPS[event_type]
        lease_ids = [e['lease_id'] for e in done]
        if step.lease_done and lease_ids:
            store_leases.complete_leases(session, lease_ids,
                                         step.lease_during, step.lease_done)
            store_leases.set_reservations_status(session, lease_ids,
                                                 step.reservations_done)
        return done

    def _record_failure(self, session, token, now, outcome):
        event = outcome.event
        attempts = event['attempts'] + 1
        if not outcome.final:
            backoff = self.conf.event_retry_backoff * 2 ** (attempts - 1)
            store_leases.retry_event(
                session, event['id'], token, attempts,
                now + datetime.timedelta(seconds=backoff), outcome.reason)
            return
        if store_leases.fail_event(session, event['id'], token, attempts,
                                   outcome.reason):
            store_leases.fail_lease(session, event['lease_id'],
                                    _sources(LeaseStatus.ERROR),
                                    outcome.reason)

    def _notify(self, ctx, done, notices):
        """Send lease.event.<type> for the events recorded as DONE.

        Then ``lease.event.<notice>`` for each of ``notices[event id]``,
        the further lease events the event began. The payload is the lease
        as the API shows it after the event, with its resources (the same
        shape as the lease.create/update/delete payloads); ``event_time``
        is when the events were recorded.
        """
        if not done or not self.notifier.is_enabled():
            return
        with db_api.context_manager.reader.using(ctx) as session:
            leases = {payload['id']: payload
                      for payload in notifications.read_payloads(
                          session, self.plugins, views.lease_views_by_id(
                              session, self.plugins,
                              {e['lease_id'] for e in done}))}
        now = self.clock.now()
        for event in done:
            if event['lease_id'] not in leases:
                continue
            for event_type in [event['event_type']] + list(
                    notices.get(event['id'], ())):
                notifications.notify(
                    self.notifier, ctx,
                    notifications.event_type_of(event_type),
                    leases[event['lease_id']], now)
