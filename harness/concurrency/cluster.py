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

"""Lease API worker processes sharing one leases DB.

:class:`Cluster` binds a loopback socket per worker (so the ports are
known before any worker starts), starts each
:mod:`harness.concurrency.worker` with its socket, and waits until every
one says ``ready`` (bounded). :meth:`Cluster.stop` sends
SIGTERM to each worker it started and waits for it; a worker also gets
SIGTERM when the process that started it ends.
"""

import ctypes
import os
import select
import signal
import socket
import subprocess
import sys
import time

HOST = '127.0.0.1'
# The checkout, where ``python -m harness.concurrency.worker`` is found.
TOP = os.path.dirname(os.path.dirname(os.path.dirname(
    os.path.abspath(__file__))))
READY_TIMEOUT = 120
PR_SET_PDEATHSIG = 1
STOP_TIMEOUT = 20


class WorkerFailed(Exception):
    """A worker ended or did not get ready; the message has its log."""


class Cluster:
    """``count`` workers configured by ``config_file`` (a nova.conf).

    :param directory: where the logs go.
    """

    def __init__(self, config_file, count, directory):
        self.config_file = config_file
        self.count = count
        self.directory = directory
        self.endpoints = []
        self._workers = []

    def start(self):
        for index in range(self.count):
            sock = socket.socket()
            sock.bind((HOST, 0))
            sock.listen(128)
            sock.set_inheritable(True)
            name = 'lease-api-%d' % index
            log_path = os.path.join(self.directory, name + '.log')
            with open(log_path, 'ab') as log:
                popen = subprocess.Popen(
                    [sys.executable, '-m', 'harness.concurrency.worker',
                     '--config-file', self.config_file,
                     '--fd', str(sock.fileno()),
                     '--name', name],
                    stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                    stderr=log, pass_fds=[sock.fileno()],
                    env=_environment(), preexec_fn=_die_with_parent)
            self._workers.append((name, popen, log_path))
            self.endpoints.append('http://%s:%d/v1' % sock.getsockname())
            # The worker has its copy; the port stays taken by it.
            sock.close()
        deadline = time.monotonic() + READY_TIMEOUT
        for name, popen, log_path in self._workers:
            self._wait_ready(name, popen, log_path, deadline)
        return self

    @staticmethod
    def _wait_ready(name, popen, log_path, deadline):
        ready, _w, _x = select.select(
            [popen.stdout], [], [], max(0, deadline - time.monotonic()))
        line = popen.stdout.readline() if ready else b''
        if line.strip() != b'ready':
            with open(log_path, errors='replace') as log:
                raise WorkerFailed('%s is not ready (status %s): %r\n%s' % (
                    name, popen.poll(), line, log.read()[-4000:]))

    def stop(self):
        """Stop the workers this cluster started; their exit statuses."""
        statuses = []
        for _name, popen, _log in self._workers:
            if popen.poll() is None:
                popen.terminate()
            try:
                statuses.append(popen.wait(STOP_TIMEOUT))
            except subprocess.TimeoutExpired:
                popen.kill()
                statuses.append(popen.wait())
            popen.stdout.close()
        return statuses

    def errors(self):
        """The ERROR lines of the workers' logs (tracebacks included)."""
        lines = []
        for name, _popen, log_path in self._workers:
            with open(log_path, errors='replace') as log:
                lines += ['%s: %s' % (name, line.rstrip())
                          for line in log if ' ERROR ' in line]
        return lines


def _die_with_parent():
    # In the child before exec: the kernel sends it SIGTERM when the
    # process that started it ends, however it ends.
    ctypes.CDLL(None, use_errno=True).prctl(PR_SET_PDEATHSIG,
                                            signal.SIGTERM)


def _environment():
    env = dict(os.environ)
    env['PYTHONPATH'] = os.pathsep.join(
        [TOP] + [p for p in [env.get('PYTHONPATH')] if p])
    return env
