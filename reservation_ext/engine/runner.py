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
event is executed once. Each poll of :meth:`Engine.run` claims as many due
events as the engine has free workers (``[reservation] engine_workers``,
at most ``event_batch_size``), hands each to a worker thread of its own
(:mod:`.workers`) and polls on without waiting for them: a slow action
holds its worker, not the other events. A worker runs its event through
the plugins and records its outcome in a short transaction of its own,
conditioned on the claim (:mod:`.events`), while :mod:`.claims` renews
the claim every third of ``event_claim_timeout``, so that no claim
expires under a running action and no other engine takes the event over
while it runs.

A wait for the result of an action (a server ACTIVE or gone, a snapshot
active, a volume available or deleted) holds no worker: the worker
records what the event waits for and is free; every poll, before its
claim, an engine reads the statuses of what the waiting events wait
for and gives back those whose waits are over, to be claimed and run
again at once (:mod:`.waiting`).

The order that matters is kept by the claim: a lease's events run one
after another, and a start waits for the ends, due at or before it, of
the other leases on its hosts, while they run or are not tried yet
(:func:`reservation_ext.store.leases.claim_events`).

An engine that dies renews no claim: its events stay IN_PROGRESS until
their claims expire; they are then due again and another engine re-runs
them (plugin actions are idempotent). When its ``stop_event`` is set, an
engine claims nothing more, waits for the actions under way and records
them, then :meth:`Engine.run` returns.

The engine calls its ``checkpoint`` (given when it is built; by default
nothing) at the points where dying matters: :data:`CLAIMED` once a claim
is committed, :data:`PLUGIN_ACTION` before each plugin action, and
:data:`RECORDING` before an outcome is committed. The HA tests build
engines whose checkpoint kills the process there (``kill -9``).

After the claim, every poll stops the preemptible servers in the way of
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
hosts off and on again for their bookings (with a ``[power] driver``
that switches); every ``[reservation] preemptible_work_interval``, the
survey (:mod:`reservation_ext.engine.preemptible_work`) writes the
preemptible work each host runs, which the planner weighs. These run in
the polling thread, one after another, as they claim their own work in
the DB.
"""

import os
import socket
import time

from oslo_log import log as logging

from reservation_ext.clients import plugin_clients
from reservation_ext import context
from reservation_ext.enforcement import enforcer
from reservation_ext.engine import claims
from reservation_ext.engine import events
from reservation_ext.engine import host_monitor
from reservation_ext.engine import power_manager
from reservation_ext.engine import preemptible_work
from reservation_ext.engine import reclaim
from reservation_ext.engine import waiting
from reservation_ext.engine import workers
from reservation_ext.power import drivers

LOG = logging.getLogger(__name__)

# Where an engine calls its checkpoint (see the module doc); named here,
# where the HA tests and harnesses that build engines find them.
CLAIMED = events.CLAIMED
PLUGIN_ACTION = events.PLUGIN_ACTION
RECORDING = events.RECORDING
CHECKPOINTS = events.CHECKPOINTS


def _clients(conf, plugins):
    """Return the clients the plugins act through (they share them).

    The service user's when no plugin has any.
    """
    for plugin in plugins.values():
        clients = getattr(plugin, 'clients', None)
        if clients is not None:
            return clients
    return plugin_clients.PluginClients(conf)


class Engine:
    """Runs the due events of the leases DB.

    :param conf: a ConfigOpts with the ``[reservation]`` options
    :param clock: the source of "now" (:mod:`reservation_ext.clock`)
    :param plugins: ``{resource_type: ResourcePlugin}``; their actions
        run in several threads at once
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
    :param survey: the
        :class:`~reservation_ext.engine.preemptible_work.WorkSurvey` of
        the hosts' preemptible work (by default one acting through the
        plugins' clients)
    :param checkpoint: ``checkpoint(point, event)``, called at each of
        :data:`CHECKPOINTS` with the event concerned, in the thread that
        runs it; by default it does nothing
    :param on_poll: ``on_poll(ctx)``, called in the polling thread after
        every poll of :meth:`run` in which the DB answered the claim (the
        service records the engine's last successful poll with it); its
        failures are logged. By default nothing is called.
    """

    def __init__(self, conf, clock, plugins, notifier, engine_id=None,
                 enforcement=None, reclaimer=None, monitor=None,
                 power=None, survey=None, checkpoint=None, on_poll=None):
        self.conf = conf.reservation
        self.clock = clock
        self.plugins = plugins
        self.engine_id = engine_id or '%s:%d' % (socket.gethostname(),
                                                 os.getpid())
        self.reclaimer = reclaimer or reclaim.Reclaimer(
            conf, clock, _clients(conf, plugins), notifier)
        self.monitor = monitor or host_monitor.HostMonitor(
            conf, clock, plugins, _clients(conf, plugins), notifier)
        self.power = power or power_manager.PowerManager(
            conf, clock, drivers.load(conf), _clients(conf, plugins),
            self.reclaimer, self.engine_id)
        self.survey = survey or preemptible_work.WorkSurvey(
            conf, clock, _clients(conf, plugins))
        self.events = events.EventRunner(
            conf, clock, plugins, notifier, self.engine_id,
            enforcement or enforcer.disabled(conf), self.reclaimer,
            checkpoint)
        self.waits = waiting.WaitWatcher(
            clock, self.events,
            waiting.ResourceStatuses(_clients(conf, plugins)),
            self.engine_id)
        self._next_wait_check = 0
        self.claims = claims.ClaimKeeper(conf, clock, self.engine_id)
        self.workers = workers.Workers(self.conf.engine_workers,
                                       'engine-%s' % self.engine_id)
        self.on_poll = on_poll

    def run(self, stop_event):
        """Process events until ``stop_event`` (a threading.Event) is set.

        Polls again at once while there is work and a free worker, else
        every ``event_poll_interval`` seconds (sooner when all workers
        were busy and one is free again). Once ``stop_event`` is set, it
        claims nothing more and returns when the events under way are
        recorded.
        """
        try:
            while not stop_event.is_set():
                if not self._poll():
                    self._idle(stop_event)
        finally:
            self.workers.drain()

    def _idle(self, stop_event):
        """Wait for the next poll (see :meth:`run`)."""
        if self.workers.free():
            stop_event.wait(self.conf.event_poll_interval)
        else:
            self.workers.wait_free(self.conf.event_poll_interval)

    def _poll(self):
        """Claim events for the free workers and start them; run the rest.

        Return whether there is more to do at once.
        """
        ctx = context.get_admin_context()
        self._end_waits(ctx)
        limit = min(self.workers.free(), self.conf.event_batch_size)
        try:
            claimed = self.events.claim(ctx, limit)
        except Exception:
            # A DB outage must not end the service; the next poll
            # retries and expired claims make sure nothing is lost.
            LOG.exception('Engine %s failed to process events',
                          self.engine_id)
            return False
        for one in claimed:
            self.workers.submit(self._run_claimed, one, True)
        self._polled(ctx)
        done = self._run_periodic(ctx)
        # A full claim may have left due events behind.
        return done > 0 or (limit > 0 and len(claimed) == limit)

    def _end_waits(self, ctx):
        """Fail the late waits, give back those that are over (logged).

        At most once per poll interval: a busy engine polls again at once,
        and each look reads the servers from Nova.
        """
        if time.monotonic() < self._next_wait_check:
            return
        self._next_wait_check = (time.monotonic() +
                                 self.conf.event_poll_interval)
        try:
            self.waits.run(ctx)
        except Exception:
            # Nova or the DB failed: the next poll reads them again.
            LOG.exception('Engine %s failed to look at the waiting events',
                          self.engine_id)

    def _polled(self, ctx):
        """Tell ``on_poll`` that the DB answered this poll."""
        if self.on_poll is None:
            return
        try:
            self.on_poll(ctx)
        except Exception:
            # The hook is the service's; the events go on without it.
            LOG.exception('Engine %s: on_poll failed', self.engine_id)

    def run_once(self, defer_waits=False):
        """Claim up to ``event_batch_size`` due events and run them.

        One after another in this thread, in the order of the claim (at
        one instant, ends first), each recorded when it is done: one
        deterministic poll, for tests and tools; :meth:`run` runs events
        at once. Then reclaim preemptible capacity and run the plugins'
        pending work. Return how many events were run (successfully or
        not) plus how many hosts were reclaimed and pieces of pending work
        were finished. Raises what the DB raises.

        An action waits for its results in this thread, unless
        ``defer_waits``: then, as in :meth:`run`, the event is recorded as
        waiting, and a later call, which first looks at the waiting
        events, runs it again once its waits are over (their count is
        added).
        """
        ctx = context.get_admin_context()
        ended = self.waits.run(ctx) if defer_waits else 0
        claimed = self.events.claim(ctx, self.conf.event_batch_size)
        for one in claimed:
            self._run_held(ctx, one, defer_waits)
        return ended + len(claimed) + self._run_periodic(ctx)

    def _run_held(self, ctx, claimed, defer_waits):
        """Run a claimed event, its claim renewed until it is recorded."""
        with self.claims.holding(claimed.event['id'], claimed.token):
            self.events.record(ctx, claimed, self.events.act(
                ctx, claimed, defer_waits))

    def _run_claimed(self, claimed, defer_waits):
        """Run a claimed event in a worker; log what it raises."""
        try:
            # A context of its own: a context carries its transactions.
            self._run_held(context.get_admin_context(), claimed,
                           defer_waits)
        except Exception:
            # Recording failed (the DB is out of reach): the claim expires
            # and the event runs again (plugin actions are idempotent).
            LOG.exception('Engine %s failed to run event %s',
                          self.engine_id, claimed.event['id'])

    def _run_periodic(self, ctx):
        """Run the work of every poll besides the events; count it."""
        return (self._guarded(ctx, self.reclaimer.run,
                              'reclaiming preemptible capacity') +
                self._run_pending(ctx) +
                self._guarded(ctx, self.monitor.run, 'the host monitor') +
                self._guarded(ctx, self.power.run, 'the power manager') +
                self._guarded(ctx, self.survey.run,
                              'the survey of preemptible work'))

    def _guarded(self, ctx, work, what):
        """Run ``work(ctx)``; count what it did, 0 if it failed (logged).

        Nova or the DB failed: what was due stays due (a host to reclaim,
        a transition, a failed host), or the last figures stand (the
        survey), and a later poll tries again.
        """
        try:
            return work(ctx)
        except Exception:
            LOG.exception('Engine %s: %s failed', self.engine_id, what)
            return 0

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
