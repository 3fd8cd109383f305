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

"""reservation-engine as a service, a real process driven by signals.

SIGTERM drains (the action under way finishes and is recorded), SIGHUP
applies the mutable options of the changed config file, SIGUSR2 writes a
Guru Meditation Report; the engine's heartbeat row lives from its start
to its clean stop.
"""

import os
import signal
import subprocess
import sys

import fixtures

from db import api as db_api
from reservation_ext import clock as clock_mod
from reservation_ext import context
from reservation_ext.states import EventStatus
from reservation_ext.states import EventType
from reservation_ext.states import LeaseStatus
from reservation_ext.store import engines as store_engines
from tests import base
from tests import fixtures as test_fixtures
from tests import plugins as test_plugins
from tests.unit import test_engine

# Hang guard for the waits below, not a performance expectation.
WAIT = 120
CONF = ('[DEFAULT]\ndebug = %s\n[reservation]\nevent_poll_interval = %s\n'
        '[reservation_database]\nconnection = %s\n')


def _wait_for(predicate, what):
    """Wait until ``predicate()``; fail after :data:`WAIT` seconds."""
    base.wait_until(predicate, what, WAIT)


def _heartbeats():
    """Return the heartbeat rows."""
    with db_api.context_manager.reader.using(
            context.get_admin_context()) as session:
        return store_engines.list_engines(session)


class EngineServiceTest(base.TestCase):
    """One engine process on a SQLite leases DB with the test plugin."""

    def setUp(self):
        super().setUp()
        self.useFixture(test_fixtures.TestPlugins())
        self.db_url = self.useFixture(test_fixtures.Database()).url
        tmp = self.useFixture(fixtures.TempDir()).path
        self.config_file = os.path.join(tmp, 'reservation.conf')
        self.log_file = os.path.join(tmp, 'engine.log')
        self.write_conf(debug='false', interval=0.05)

    def write_conf(self, debug, interval):
        """Write the engine's configuration file."""
        with open(self.config_file, 'w') as f:
            f.write(CONF % (debug, interval, self.db_url))

    def start_engine(self):
        """Start reservation-engine, logging to ``self.log_file``."""
        with open(self.log_file, 'w') as log:
            process = subprocess.Popen(
                [sys.executable, '-m', 'reservation_ext.cmd.engine',
                 '--config-file', self.config_file],
                stdin=subprocess.DEVNULL, stdout=log,
                stderr=subprocess.STDOUT)
        self.addCleanup(base.kill_if_running, process)
        return process

    def log(self):
        """Return what the engine wrote so far."""
        with open(self.log_file) as f:
            return f.read()

    def test_sigterm_lets_the_action_under_way_finish_and_be_recorded(self):
        now = clock_mod.SYSTEM.now()
        lease_id, reservation_id = test_engine.create_lease(
            start=now - test_engine.HOUR, end=now + test_engine.HOUR,
            sleep=2)
        process = self.start_engine()
        _wait_for(lambda: ('attempt_on_start', reservation_id) in
                  test_plugins.read_journal(), 'the start to begin')
        self.assertEqual(1, len(_heartbeats()))
        process.send_signal(signal.SIGTERM)
        self.assertEqual(0, process.wait(WAIT), self.log())
        self.assertIn(('on_start', reservation_id),
                      test_plugins.read_journal())
        lease, events, _ = test_engine.get_lease(lease_id)
        self.assertEqual(LeaseStatus.ACTIVE, lease['status'])
        self.assertEqual(EventStatus.DONE,
                         events[EventType.START_LEASE]['status'])
        # A clean stop removes the heartbeat; a dead engine's would stay.
        self.assertEqual([], _heartbeats())

    def test_the_engine_runs_on_threads_without_eventlet(self):
        # oslo.messaging imports oslo.service, whose default backend is
        # eventlet's; the engine's package makes it the threading one.
        probe = ('import reservation_ext.cmd.engine\n'
                 'from oslo_service import backend\n'
                 'from oslo_service import service\n'
                 'import socket, threading\n'
                 'print(backend.get_backend_type().value,'
                 ' socket.socket.__module__, threading.Thread.__module__)')
        result = subprocess.run([sys.executable, '-c', probe],
                                capture_output=True, text=True, check=True,
                                timeout=WAIT)
        self.assertEqual('threading socket threading',
                         result.stdout.strip(), result.stderr)

    def test_a_killed_engine_leaves_its_heartbeat_behind(self):
        process = self.start_engine()
        _wait_for(lambda: _heartbeats(), 'the heartbeat')
        process.kill()
        process.wait()
        row, = _heartbeats()
        self.assertEqual(process.pid, row['pid'])

    def test_sighup_applies_the_changed_log_level_and_poll_interval(self):
        self.write_conf(debug='false', interval=60)
        process = self.start_engine()
        _wait_for(lambda: 'started' in self.log(), 'the engine to start')
        self.write_conf(debug='true', interval=30)
        process.send_signal(signal.SIGHUP)
        _wait_for(lambda: 'reloaded its configuration' in self.log(),
                  'the reload')
        process.send_signal(signal.SIGUSR2)
        _wait_for(lambda: 'Configuration' in self.log() and
                  'event_poll_interval = 30.0' in self.log(),
                  'the Guru Meditation Report')
        report = self.log().split('Configuration', 1)[1]
        self.assertIn('debug = True', report)
        self.assertIn('event_poll_interval = 30.0', report)
        self.assertIn('reservation-engine', self.log().split(
            'Configuration', 1)[0])
        process.send_signal(signal.SIGTERM)
        self.assertEqual(0, process.wait(WAIT), self.log())
