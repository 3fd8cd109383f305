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

"""An engine that loses its database carries on when the database returns.

A ``reservation-engine`` process reaches PostgreSQL or MariaDB through
a loopback TCP proxy that the test cuts: every open connection is closed
and new ones are closed as soon as they are accepted, as when the
database restarts or the network drops. Meanwhile due leases are written
straight to the database. The engine logs its failures and keeps
polling; once the proxy passes traffic again it runs the leases, each
action once. Builds on :mod:`tests.functional.test_engine_multi` (the
test plugin's journal, its due leases and waits).
"""

import os
import signal
import socket
import subprocess
import threading
import time

import fixtures

from tests import base
from tests.functional import test_engine_multi as multi

POLL_INTERVAL = 0.1
# Polls the engine makes while the database is away.
CUT_POLLS = 20
LEASES = 5
FAILURE_LOG = 'failed to process events'


class TcpProxy:
    """A loopback TCP proxy to ``upstream`` (host, port) that can be cut.

    ``port`` is where it listens on 127.0.0.1. :meth:`cut` closes every
    connection and closes each new one once accepted; :meth:`restore`
    passes traffic again.
    """

    def __init__(self, upstream):
        self.upstream = upstream
        self._listener = socket.create_server(('127.0.0.1', 0))
        self.port = self._listener.getsockname()[1]
        self._lock = threading.Lock()
        self._open = []
        self._cut = False
        self._closed = False
        threading.Thread(target=self._accept, daemon=True).start()

    def _accept(self):
        while True:
            try:
                client, _ = self._listener.accept()
            except OSError:
                return
            with self._lock:
                if self._cut:
                    client.close()
                    continue
                server = socket.create_connection(self.upstream)
                self._open += [client, server]
            for source, sink in ((client, server), (server, client)):
                threading.Thread(target=self._pump, args=(source, sink),
                                 daemon=True).start()

    @staticmethod
    def _pump(source, sink):
        try:
            while True:
                data = source.recv(65536)
                if not data:
                    break
                sink.sendall(data)
        except OSError:
            # The other direction closed both sockets (a cut).
            pass
        for sock in (source, sink):
            try:
                sock.shutdown(socket.SHUT_RDWR)
            except OSError:
                pass

    def cut(self):
        with self._lock:
            self._cut = True
            for sock in self._open:
                try:
                    sock.shutdown(socket.SHUT_RDWR)
                except OSError:
                    pass
                sock.close()
            self._open = []

    def restore(self):
        with self._lock:
            self._cut = False

    def close(self):
        self.cut()
        self._listener.close()


class _DatabaseOutageMixin:

    def setUp(self):
        super().setUp()
        url = self.engine.url
        self.proxy = TcpProxy((url.host or 'localhost', url.port or
                               self.DEFAULT_PORT))
        self.addCleanup(self.proxy.close)
        tmp = self.useFixture(fixtures.TempDir()).path
        self.log_path = os.path.join(tmp, 'engine.log')
        self.config_file = os.path.join(tmp, 'reservation.conf')
        with open(self.config_file, 'w') as conf:
            conf.write('[reservation]\nevent_poll_interval = %s\n'
                       'event_claim_timeout = %d\n'
                       '[reservation_database]\nconnection = %s\n' % (
                           POLL_INTERVAL, multi.CLAIM_TIMEOUT,
                           url.set(host='127.0.0.1', port=self.proxy.port)
                           .render_as_string(hide_password=False)))

    def start_engine(self):
        with open(self.log_path, 'ab') as log:
            process = subprocess.Popen(
                [multi.ENGINE_SCRIPT, '--config-file', self.config_file],
                stdout=log, stderr=subprocess.STDOUT)
        self.addCleanup(base.kill_if_running, process)
        return process

    def failures_logged(self):
        with open(self.log_path, errors='replace') as log:
            return log.read().count(FAILURE_LOG)

    def test_engine_carries_on_when_its_database_returns(self):
        before = multi._create_due_leases(LEASES)
        engine = self.start_engine()
        multi._wait_for(lambda: multi._unfinished_events() == 0,
                        'the leases before the outage')

        self.proxy.cut()
        during = multi._create_due_leases(LEASES)
        multi._wait_for(lambda: self.failures_logged() >= 2,
                        'the engine to log its lost database')
        time.sleep(CUT_POLLS * POLL_INTERVAL)
        self.assertIsNone(engine.poll(), 'the engine ended')
        # Each lease has a start and an end, none run yet.
        self.assertEqual(2 * LEASES, multi._unfinished_events())

        self.proxy.restore()
        multi._wait_for(lambda: multi._unfinished_events() == 0,
                        'the leases written during the outage')
        engine.send_signal(signal.SIGTERM)
        self.assertEqual(0, engine.wait(multi.WAIT))
        self.assert_all_ran_once(before + during)


class PostgreSQLOutageTest(_DatabaseOutageMixin, multi._MultiEngineMixin,
                           base.PostgreSQLTestCase):
    DEFAULT_PORT = 5432


class MySQLOutageTest(_DatabaseOutageMixin, multi._MultiEngineMixin,
                      base.MySQLTestCase):
    DEFAULT_PORT = 3306
