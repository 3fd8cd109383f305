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

"""Engines run events at once on their workers, each event once.

Engines run as threads (:meth:`Engine.run`, real worker threads and claim
renewals) on an SQLite file DB, PostgreSQL and MariaDB. Slow actions are
those of :class:`WatchedPlugin`, which wait for a gate the test opens, or
sleep. The waits are bounded; nothing asserts how long anything took:
where a test needs time to pass (a claim timeout, polls of the other
engines), it waits for it, then checks what did not happen meanwhile.
"""

import collections
import datetime
import threading

from oslo_config import cfg
from oslo_utils import uuidutils
import sqlalchemy as sa

from db import api as db_api
from db import models
from reservation_ext.clients import plugin_clients
from reservation_ext import clock as clock_mod
from reservation_ext import conf as conf_mod
from reservation_ext import context
from reservation_ext.engine import runner
from reservation_ext.leases import notifications
from reservation_ext.states import EventStatus
from reservation_ext.states import EventType
from reservation_ext.states import LeaseStatus
from reservation_ext.store import leases as store_leases
from tests import base
from tests import fixtures as test_fixtures
from tests.functional import test_engine_multi as multi
from tests import plugins as test_plugins
from tests.unit import test_engine

CLOCK = clock_mod.SYSTEM
MINUTE = datetime.timedelta(minutes=1)
# Polls each engine makes while a test checks that something waits.
POLLS = 10
# Short, so that the tests wait for it to pass several times; long
# enough that a renewal, every third of it, is not starved on a busy
# test machine.
CLAIM_TIMEOUT = 3


class NoServers:
    """Nova, as the reclaim of a lease's start sees it: no server runs."""

    def servers_with_hints_on(self, service_name):
        """Return the servers on the host: none."""
        return []

    def servers_with_hints(self):
        """Return every server (the survey of preemptible work): none."""
        return []


class Watch:
    """What the engines' plugins of a test share: gates, and overlaps seen.

    ``gates``: ``{reservation id: threading.Event}``, the actions held
    until the event is set; ``overlaps``: ``(action, reservation id)`` of
    each action that began while another run of it was under way.
    """

    def __init__(self):
        self.gates = {}
        self.overlaps = []
        self._running = collections.Counter()
        self._lock = threading.Lock()

    def enter(self, key):
        """Count a run of ``key`` as begun; note it if one is under way."""
        with self._lock:
            if self._running[key]:
                self.overlaps.append(key)
            self._running[key] += 1

    def leave(self, key):
        """Count a run of ``key`` as over."""
        with self._lock:
            self._running[key] -= 1


class WatchedPlugin(test_plugins.JournalPlugin):
    """The journal plugin, its actions held at will and their runs watched.

    Each start and end journals ``enter_<action>`` when it begins, then
    waits while its reservation's gate in the :class:`Watch` is closed.
    """

    def __init__(self, conf, clock, watch):
        super().__init__(conf, clock, plugin_clients.PluginClients(
            conf, nova=NoServers()))
        self.watch = watch

    def on_start(self, ctx, lease, reservation):
        """Begin, wait for the gate, start as the journal plugin does."""
        self._watched('on_start', reservation, super().on_start, ctx, lease)

    def on_end(self, ctx, lease, reservation):
        """Begin, wait for the gate, end as the journal plugin does."""
        self._watched('on_end', reservation, super().on_end, ctx, lease)

    def _watched(self, action, reservation, act, ctx, lease):
        key = (action, reservation['id'])
        self.watch.enter(key)
        try:
            self._write('enter_' + action, reservation['id'])
            gate = self.watch.gates.get(reservation['id'])
            if gate is not None:
                gate.wait(multi.WAIT)
            act(ctx, lease, reservation)
        finally:
            self.watch.leave(key)


def _conf(**overrides):
    """Return a ConfigOpts polling every 20 ms, with ``[reservation]`` set."""
    conf = cfg.ConfigOpts()
    conf_mod.register_opts(conf)
    conf([], project='reservation-ext')
    overrides.setdefault('event_poll_interval', 0.02)
    for name, value in overrides.items():
        conf.set_override(name, value, group=conf_mod.GROUP)
    return conf


def _event(lease_id, event_type):
    """Return the row of a lease's event."""
    return test_engine.get_lease(lease_id)[1][event_type]


def _status(lease_id):
    """Return a lease's status."""
    return test_engine.get_lease(lease_id)[0]['status']


def _journaled(entry):
    """Return whether the journal has ``(action, reservation id)``."""
    return entry in test_plugins.read_journal()


def _ending_lease(end, **kwargs):
    """An ACTIVE lease whose start is done; its end is due at ``end``."""
    lease_id, reservation_id = test_engine.create_lease(
        start=end - test_engine.HOUR, end=end, status=LeaseStatus.ACTIVE,
        **kwargs)
    with db_api.writer(context.get_admin_context(), CLOCK) as session:
        session.execute(sa.update(models.Event.__table__).where(
            models.Event.lease_id == lease_id,
            models.Event.event_type == EventType.START_LEASE).values(
                status=EventStatus.DONE))
    return lease_id, reservation_id


def _book(host_name, *reservation_ids):
    """Book a reservable host for ``reservation_ids`` (whole, 2 hours)."""
    now = CLOCK.now()
    with db_api.writer(context.get_admin_context(), CLOCK) as session:
        host_id = session.execute(
            sa.insert(models.ComputeHost.__table__).values(
                hypervisor_hostname=host_name, service_name=host_name,
                vcpus=8, memory_mb=8192, local_gb=80, created_at=now)
        ).inserted_primary_key[0]
        session.execute(sa.insert(models.HostAllocation.__table__), [
            dict(id=uuidutils.generate_uuid(), host_id=host_id,
                 reservation_id=reservation_id, whole_host=True,
                 start_date=now - test_engine.HOUR,
                 end_date=now + test_engine.HOUR, created_at=now)
            for reservation_id in reservation_ids])


class _Engines:
    """Engines running as threads, with their polls counted.

    Every engine of a test shares the gates and the overlaps seen.
    """

    def __init__(self, test):
        self.watch = Watch()
        self.polls = {}
        self.stops = {}
        self.threads = {}
        test.addCleanup(self.stop_all)

    @property
    def overlaps(self):
        """The actions that began while another run of them was alive."""
        return self.watch.overlaps

    def hold(self, reservation_id):
        """Hold the actions of a reservation until :meth:`release`."""
        self.watch.gates[reservation_id] = threading.Event()

    def release(self, reservation_id):
        """Let the actions of a reservation go on."""
        self.watch.gates[reservation_id].set()

    def start(self, name, **overrides):
        """Start an engine ``name`` with the options ``overrides``."""
        conf = _conf(**overrides)
        self.polls[name] = 0

        def on_poll(ctx):
            self.polls[name] += 1

        engine = runner.Engine(
            conf, CLOCK, {test_plugins.RESOURCE_TYPE: self.plugin(conf)},
            notifications.get_notifier(conf), engine_id=name,
            on_poll=on_poll)
        self.stops[name] = threading.Event()
        self.threads[name] = threading.Thread(
            target=engine.run, args=(self.stops[name],), daemon=True)
        self.threads[name].start()
        return engine

    def plugin(self, conf):
        """Return the plugin of an engine with the options ``conf``."""
        return WatchedPlugin(conf, CLOCK, self.watch)

    def wait_polls(self, count=POLLS):
        """Wait until every running engine polled ``count`` more times."""
        since = dict(self.polls)
        for name in since:
            multi._wait_for(lambda: self.polls[name] >= since[name] + count,
                            'polls of ' + name)

    def stop_all(self):
        """Open every gate, stop every engine and wait for them."""
        for gate in self.watch.gates.values():
            gate.set()
        for stop in self.stops.values():
            stop.set()
        for thread in self.threads.values():
            thread.join(multi.WAIT)


class _ConcurrencyMixin:
    """The tests, on the DB of :meth:`use_database`."""

    def setUp(self):
        super().setUp()
        # The engines stop (a cleanup) before the DB goes.
        self.use_database()
        self.useFixture(test_fixtures.TestPlugins())
        self.engines = _Engines(self)

    def test_a_slow_end_does_not_hold_back_the_starts_behind_it(self):
        now = CLOCK.now()
        ending, slow = _ending_lease(now - MINUTE)
        starting = [test_engine.create_lease(start=now - MINUTE,
                                             end=now + test_engine.HOUR)
                    for _ in range(3)]
        self.engines.hold(slow)
        self.engines.start('one', engine_workers=2)
        multi._wait_for(lambda: _journaled(('enter_on_end', slow)),
                        'the slow end to begin')
        for lease_id, _ in starting:
            multi._wait_for(lambda: _status(lease_id) == LeaseStatus.ACTIVE,
                            'a start behind the slow end')
        self.assertEqual(LeaseStatus.TERMINATING, _status(ending))
        self.assertFalse(_journaled(('on_end', slow)))

        self.engines.release(slow)
        multi._wait_for(lambda: _status(ending) == LeaseStatus.TERMINATED,
                        'the slow end')
        self.assertEqual([], self.engines.overlaps)

    def test_an_engine_claims_no_more_events_than_it_has_free_workers(self):
        now = CLOCK.now()
        leases = [test_engine.create_lease(start=now - MINUTE,
                                           end=now + test_engine.HOUR)
                  for _ in range(5)]
        for _, reservation_id in leases:
            self.engines.hold(reservation_id)
        self.engines.start('one', engine_workers=2, event_batch_size=10)
        multi._wait_for(lambda: self._entered('on_start') == 2,
                        'two starts to begin')
        self.engines.wait_polls()
        starts = [_event(lease_id, EventType.START_LEASE)['status']
                  for lease_id, _ in leases]
        self.assertEqual(2, starts.count(EventStatus.IN_PROGRESS))
        self.assertEqual(3, starts.count(EventStatus.UNDONE))
        self.assertEqual(2, self._entered('on_start'))

        for _, reservation_id in leases:
            self.engines.release(reservation_id)
        for lease_id, _ in leases:
            multi._wait_for(lambda: _status(lease_id) == LeaseStatus.ACTIVE,
                            'every start')

    @staticmethod
    def _entered(action):
        """Count the ``action`` runs that began."""
        return sum(1 for entry, _ in test_plugins.read_journal()
                   if entry == 'enter_' + action)

    def test_a_claim_never_expires_under_a_running_action(self):
        timeout = CLAIM_TIMEOUT
        lease_id, reservation_id = test_engine.create_lease(
            start=CLOCK.now() - MINUTE, end=CLOCK.now() + test_engine.HOUR)
        self.engines.hold(reservation_id)
        self.engines.start('first', event_claim_timeout=timeout)
        multi._wait_for(lambda: _journaled(('enter_on_start',
                                            reservation_id)),
                        'the first engine to start')
        claim = _event(lease_id, EventType.START_LEASE)
        self.engines.start('second', event_claim_timeout=timeout)
        # Past three claim timeouts, with the second engine polling.
        past = claim['claim_expires_at'] + datetime.timedelta(
            seconds=2 * timeout)
        multi._wait_for(lambda: CLOCK.now() > past, 'the claim timeout')
        self.engines.wait_polls()

        start = _event(lease_id, EventType.START_LEASE)
        self.assertEqual(EventStatus.IN_PROGRESS, start['status'])
        self.assertEqual(claim['claimed_by'], start['claimed_by'])
        self.assertGreater(start['claim_expires_at'],
                           claim['claim_expires_at'])
        self.engines.release(reservation_id)
        multi._wait_for(lambda: _status(lease_id) == LeaseStatus.ACTIVE,
                        'the start')
        self.assertEqual(1, test_plugins.attempts('on_start',
                                                  reservation_id))
        self.assertEqual([], self.engines.overlaps)

    def test_no_event_runs_twice_while_its_first_run_is_alive(self):
        # Actions longer than the claim timeout, on three engines.
        leases = multi._create_due_leases(12, sleep=CLAIM_TIMEOUT + 0.5)
        for name in ('a', 'b', 'c'):
            self.engines.start(name, engine_workers=3, event_batch_size=2,
                               event_claim_timeout=CLAIM_TIMEOUT)
        multi._wait_for(lambda: multi._unfinished_events() == 0,
                        'the events')
        self.assertEqual([], self.engines.overlaps)
        for lease_id, reservation_id in leases:
            self.assertEqual(1, test_plugins.attempts('on_start',
                                                      reservation_id))
            self.assertEqual(1, test_plugins.attempts('on_end',
                                                      reservation_id))
            self.assertEqual(LeaseStatus.TERMINATED, _status(lease_id))

    def test_an_end_runs_before_a_start_on_its_host_at_the_same_instant(
            self):
        instant = CLOCK.now() - MINUTE
        ending, slow = _ending_lease(instant)
        following, after = test_engine.create_lease(
            start=instant, end=instant + test_engine.HOUR)
        elsewhere, other = test_engine.create_lease(
            start=instant, end=instant + test_engine.HOUR)
        _book('compute-1', slow, after)
        _book('compute-2', other)
        self.engines.hold(slow)
        for name in ('a', 'b', 'c'):
            self.engines.start(name, engine_workers=2)
        multi._wait_for(lambda: _journaled(('enter_on_end', slow)),
                        'the end to begin')
        multi._wait_for(lambda: _status(elsewhere) == LeaseStatus.ACTIVE,
                        'the start on another host')
        self.engines.wait_polls()
        self.assertEqual(EventStatus.UNDONE,
                         _event(following, EventType.START_LEASE)['status'])
        self.assertFalse(_journaled(('enter_on_start', after)))

        self.engines.release(slow)
        multi._wait_for(lambda: _status(following) == LeaseStatus.ACTIVE,
                        'the start after the end')
        journal = test_plugins.read_journal()
        self.assertLess(journal.index(('on_end', slow)),
                        journal.index(('enter_on_start', after)))

    def test_a_stopped_engine_returns_once_its_actions_are_recorded(self):
        lease_id, reservation_id = test_engine.create_lease(
            start=CLOCK.now() - MINUTE, end=CLOCK.now() + test_engine.HOUR)
        self.engines.hold(reservation_id)
        self.engines.start('one')
        multi._wait_for(lambda: _journaled(('enter_on_start',
                                            reservation_id)),
                        'the start to begin')
        self.engines.stops['one'].set()
        thread = self.engines.threads['one']
        # The action is held: the engine cannot have returned.
        thread.join(0.1)
        self.assertTrue(thread.is_alive())

        self.engines.release(reservation_id)
        thread.join(multi.WAIT)
        self.assertFalse(thread.is_alive())
        self.assertEqual(LeaseStatus.ACTIVE, _status(lease_id))
        self.assertEqual(EventStatus.DONE,
                         _event(lease_id, EventType.START_LEASE)['status'])


class ConcurrencySQLiteTest(_ConcurrencyMixin, base.TestCase):
    """On an SQLite file, which threads share as processes do."""

    def use_database(self):
        self.useFixture(test_fixtures.Database())


class _OnServer(_ConcurrencyMixin):
    """On the test class's database server, set up by its setUp."""

    def use_database(self):
        pass


class ConcurrencyPostgreSQLTest(_OnServer, base.PostgreSQLTestCase):
    pass


class ConcurrencyMySQLTest(_OnServer, base.MySQLTestCase):
    pass


class _SliceClaimTests:
    """Which starts a claim takes while an end on their host is due."""

    def claimed(self, instant, resource_type):
        """The event types claimed, an end and a start sharing a host.

        Both reservations get ``resource_type``; the end is due at
        ``instant`` and not tried yet, the start due at the same instant.
        """
        ending, theirs = _ending_lease(instant)
        following, mine = test_engine.create_lease(
            start=instant, end=instant + test_engine.HOUR)
        _book('compute-1', theirs, mine)
        with db_api.writer(context.get_admin_context(), CLOCK) as session:
            session.execute(sa.update(models.Reservation.__table__).where(
                models.Reservation.id.in_([theirs, mine])).values(
                    resource_type=resource_type))
            claimed = store_leases.claim_events(
                session, CLOCK.now(), 'token', CLOCK.now() + MINUTE, 10)
        return sorted((event['lease_id'] == following, event['event_type'])
                      for event in claimed)

    def test_a_whole_host_start_waits_for_the_end_on_its_host(self):
        self.assertEqual([(False, EventType.END_LEASE)],
                         self.claimed(CLOCK.now() - MINUTE, 'physical:host'))

    def test_a_slice_start_does_not_wait_for_a_slice_end_on_its_host(self):
        self.assertEqual([(False, EventType.END_LEASE),
                          (True, EventType.START_LEASE)],
                         self.claimed(CLOCK.now() - MINUTE,
                                      'virtual:instance'))


class SliceClaimSQLiteTest(_SliceClaimTests, base.TestCase):

    def setUp(self):
        super().setUp()
        self.useFixture(test_fixtures.Database())


class SliceClaimPostgreSQLTest(_SliceClaimTests, base.PostgreSQLTestCase):
    pass
