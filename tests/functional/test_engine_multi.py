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

"""Several engines on one leases DB: every action runs exactly once.

Engines run as threads on a SQLite file DB, and as real
``reservation-engine`` processes on SQLite, PostgreSQL and MariaDB. The
waits are bounded; nothing asserts how long anything took.
"""

import collections
import datetime
import os
import signal
import subprocess
import sys
import threading

import fixtures
from oslo_config import cfg
import sqlalchemy as sa

from db import api as db_api
from db import models
from reservation_ext import clock as clock_mod
from reservation_ext import conf as conf_mod
from reservation_ext import context
from reservation_ext.engine import runner
from reservation_ext.leases import notifications
from reservation_ext import plugins
from reservation_ext.states import EventStatus
from reservation_ext.states import LeaseStatus
from tests import base
from tests import fixtures as test_fixtures
from tests import plugins as test_plugins
from tests.unit import test_engine

LEASES = 30
ENGINES = 3
# Hang guard for the waits below, not a performance expectation.
WAIT = 120
# Short, as the killed engine's claim must expire; long enough that the
# live engines' renewals, every third of it, are not starved on a busy
# test machine.
CLAIM_TIMEOUT = 4
ENGINE_SCRIPT = os.path.join(os.path.dirname(sys.executable),
                             'reservation-engine')


def _wait_for(predicate, what):
    """Wait until ``predicate()``; fail after :data:`WAIT` seconds."""
    base.wait_until(predicate, what, WAIT)


def _unfinished_events():
    ctx = context.get_admin_context()
    with db_api.context_manager.reader.using(ctx) as session:
        return session.scalar(
            sa.select(sa.func.count()).select_from(models.Event)
            .where(models.Event.status.not_in(EventStatus.FINISHED)))


def _engines_up():
    """Count the engines that wrote their heartbeat: they are running."""
    ctx = context.get_admin_context()
    with db_api.context_manager.reader.using(ctx) as session:
        return session.scalar(sa.select(sa.func.count()).select_from(
            models.EngineHeartbeat))


def _create_due_leases(count, **kwargs):
    """``count`` leases whose start and end are both due."""
    now = clock_mod.SYSTEM.now()
    return [test_engine.create_lease(
        start=now - test_engine.HOUR, end=now, **kwargs)
        for _ in range(count)]


class _MultiEngineMixin:

    def setUp(self):
        super().setUp()
        self.plugins_fixture = self.useFixture(test_fixtures.TestPlugins())

    def assert_all_ran_once(self, leases):
        counts = collections.Counter(test_plugins.read_journal())
        for lease_id, reservation_id in leases:
            self.assertEqual(1, counts[('on_start', reservation_id)])
            self.assertEqual(1, counts[('on_end', reservation_id)])
            lease, events, _ = test_engine.get_lease(lease_id)
            self.assertEqual(LeaseStatus.TERMINATED, lease['status'])
            self.assertEqual({EventStatus.DONE},
                             {e['status'] for e in events.values()})


class _ProcessesMixin(_MultiEngineMixin):
    """Real ``reservation-engine`` processes on ``self.db_url``."""

    def _config_file(self):
        path = os.path.join(self.useFixture(fixtures.TempDir()).path,
                            'reservation.conf')
        with open(path, 'w') as f:
            f.write('[reservation]\nevent_poll_interval = 0.05\n'
                    'event_claim_timeout = %d\nevent_batch_size = 5\n'
                    '[reservation_database]\nconnection = %s\n'
                    % (CLAIM_TIMEOUT, self.db_url))
        return path

    def start_engine(self, config_file):
        process = subprocess.Popen(
            [ENGINE_SCRIPT, '--config-file', config_file],
            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        self.addCleanup(base.kill_if_running, process)
        return process

    def test_processes_run_each_action_once(self):
        leases = _create_due_leases(LEASES)
        config_file = self._config_file()
        engines = [self.start_engine(config_file) for _ in range(ENGINES)]
        _wait_for(lambda: _unfinished_events() == 0, 'the events')
        # One engine may run every event before another is up: a process
        # still starting has no SIGTERM handler yet, and dies of it.
        _wait_for(lambda: _engines_up() == ENGINES, 'the engines')
        for process in engines:
            process.send_signal(signal.SIGTERM)
        self.assertEqual([0] * ENGINES, [p.wait(WAIT) for p in engines])
        self.assert_all_ran_once(leases)

    def test_killed_engine_loses_nothing(self):
        (lease_id, reservation_id), = _create_due_leases(1, sleep=1)
        config_file = self._config_file()
        first = self.start_engine(config_file)
        _wait_for(lambda: ('attempt_on_start', reservation_id) in
                  test_plugins.read_journal(), 'the first engine to start')
        first.kill()
        first.wait()
        self.assertNotIn(('on_start', reservation_id),
                         test_plugins.read_journal())

        second = self.start_engine(config_file)
        _wait_for(lambda: _unfinished_events() == 0, 'the second engine')
        second.send_signal(signal.SIGTERM)
        self.assertEqual(0, second.wait(WAIT))
        self.assert_all_ran_once([(lease_id, reservation_id)])
        self.assertEqual(2, test_plugins.attempts('on_start', reservation_id))

    def test_a_live_engine_keeps_a_long_action_and_a_killed_one_loses_it(
            self):
        # The action outlasts two claim timeouts.
        (lease_id, reservation_id), = _create_due_leases(
            1, sleep=2 * CLAIM_TIMEOUT + 2)
        config_file = self._config_file()
        first = self.start_engine(config_file)
        _wait_for(lambda: ('attempt_on_start', reservation_id) in
                  test_plugins.read_journal(), 'the first engine to start')
        claimed = test_engine.get_lease(lease_id)[1]['start_lease']
        second = self.start_engine(config_file)
        # The first claim's expiry passes while the second engine polls:
        # the first engine, alive, renewed its claim.
        _wait_for(lambda: clock_mod.SYSTEM.now() > claimed[
            'claim_expires_at'] + datetime.timedelta(seconds=1),
            'the first claim timeout')
        self.assertEqual(1, test_plugins.attempts('on_start',
                                                  reservation_id))
        first.kill()
        first.wait()
        self.assertNotIn(('on_start', reservation_id),
                         test_plugins.read_journal())

        # Dead, it renews nothing: the second engine takes the start over.
        _wait_for(lambda: _unfinished_events() == 0, 'the second engine')
        second.send_signal(signal.SIGTERM)
        self.assertEqual(0, second.wait(WAIT))
        self.assert_all_ran_once([(lease_id, reservation_id)])
        self.assertEqual(2, test_plugins.attempts('on_start', reservation_id))


class ThreadsSQLiteTest(_MultiEngineMixin, base.TestCase):

    def setUp(self):
        super().setUp()
        self.useFixture(test_fixtures.Database())

    def test_threads_run_each_action_once(self):
        leases = _create_due_leases(LEASES)
        conf = cfg.ConfigOpts()
        conf_mod.register_opts(conf)
        conf([], project='reservation-ext')
        conf.set_override('event_poll_interval', 0.01, group='reservation')
        conf.set_override('event_batch_size', 5, group='reservation')
        stop = threading.Event()
        threads = [threading.Thread(target=runner.Engine(
            conf, clock_mod.SYSTEM,
            plugins.load_plugins(conf, clock_mod.SYSTEM),
            notifications.get_notifier(conf),
            engine_id='thread-%d' % i).run, args=(stop,))
            for i in range(ENGINES)]
        for thread in threads:
            thread.start()
        try:
            _wait_for(lambda: _unfinished_events() == 0, 'the events')
        finally:
            stop.set()
            for thread in threads:
                thread.join(WAIT)
        self.assert_all_ran_once(leases)


class ProcessesSQLiteTest(_ProcessesMixin, base.TestCase):

    def setUp(self):
        super().setUp()
        self.db_url = self.useFixture(test_fixtures.Database()).url


class _OnServer(_ProcessesMixin):
    """The processes share the test class's database server."""

    def setUp(self):
        super().setUp()
        self.db_url = self.engine.url.render_as_string(hide_password=False)


class ProcessesPostgreSQLTest(_OnServer, base.PostgreSQLTestCase):
    pass


class ProcessesMySQLTest(_OnServer, base.MySQLTestCase):
    pass
