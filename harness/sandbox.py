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

"""A ``reservation-sandbox`` run in a temporary state directory.

:class:`SandboxFixture` runs the console script next to the running
Python, waits for ``sandbox ready`` and stops it with SIGTERM at cleanup,
checking that it exits 0. The end-to-end tests share one per class; the
soaks of ``bench/`` start one per run.
"""

import glob
import os
import shutil
import signal
import subprocess
import sys
import threading
import time

import fixtures

BIN_DIR = os.path.dirname(sys.executable)
READY_LINE = 'sandbox ready'
START_TIMEOUT = 180
STOP_TIMEOUT = 60
LOG_TAIL_LINES = 40
OPENRC = {'admin': 'openrc', 'demo': 'openrc-demo'}


def executable(name):
    """The console script ``name`` of this Python's environment."""
    path = os.path.join(BIN_DIR, name)
    return path if os.path.exists(path) else shutil.which(name)


def stop_all(processes, timeout=STOP_TIMEOUT):
    """SIGTERM every process, SIGKILL the ones that linger; their statuses.

    All get SIGTERM first, so that they drain at the same time.
    """
    for process in processes:
        process.send_signal(signal.SIGTERM)
    statuses = []
    for process in processes:
        try:
            statuses.append(process.wait(timeout))
        except subprocess.TimeoutExpired:
            process.kill()
            statuses.append(process.wait())
    return statuses


def parse_openrc(path):
    """The variables an openrc file exports."""
    env = {}
    with open(path) as openrc:
        for line in openrc:
            if line.startswith('export '):
                name, _, value = line[len('export '):].strip().partition('=')
                env[name] = value
    return env


class SandboxFixture(fixtures.Fixture):
    """A running reservation-sandbox in a temporary state directory.

    ``env[user]`` holds the openrc variables of ``admin`` and ``demo``;
    ``output`` what the sandbox printed up to ``sandbox ready``.
    """

    def __init__(self, hosts=4, options=()):
        super().__init__()
        self.hosts = hosts
        self.options = list(options)

    def _setUp(self):
        self.state_dir = self.useFixture(fixtures.TempDir()).path
        self.output = []
        self._ready = threading.Event()
        self.process = subprocess.Popen(
            [executable('reservation-sandbox'), '--state-dir',
             self.state_dir, '--hosts', str(self.hosts)] + self.options,
            stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT, text=True)
        self.addCleanup(self._stop)
        threading.Thread(target=self._read_output, daemon=True).start()
        self._wait_ready()
        self.env = {user: parse_openrc(os.path.join(self.state_dir, name))
                    for user, name in OPENRC.items()}

    def _read_output(self):
        # Also drains the pipe after ``sandbox ready``, so that the
        # sandbox never blocks on a full pipe.
        for line in self.process.stdout:
            self.output.append(line)
            if line.strip() == READY_LINE:
                self._ready.set()

    def _wait_ready(self):
        deadline = time.monotonic() + START_TIMEOUT
        while not self._ready.wait(1):
            if self.process.poll() is not None:
                raise AssertionError('reservation-sandbox ended with status '
                                     '%s before it was ready\n%s' % (
                                         self.process.returncode,
                                         self.diagnostics()))
            if time.monotonic() > deadline:
                raise AssertionError('reservation-sandbox not ready in %d '
                                     's\n%s' % (START_TIMEOUT,
                                                self.diagnostics()))

    def _stop(self):
        self.process.send_signal(signal.SIGTERM)
        try:
            status = self.process.wait(STOP_TIMEOUT)
        except subprocess.TimeoutExpired:
            self.process.kill()
            self.process.wait()
            raise AssertionError('reservation-sandbox did not stop in %d s '
                                 'after SIGTERM\n%s' % (STOP_TIMEOUT,
                                                        self.diagnostics()))
        if status != 0:
            raise AssertionError('reservation-sandbox exited with status %d '
                                 'after SIGTERM\n%s' % (status,
                                                        self.diagnostics()))

    def diagnostics(self):
        """What the sandbox printed and the tails of its logs."""
        parts = ['output:\n' + ''.join(self.output)]
        for path in sorted(glob.glob(os.path.join(self.state_dir, 'logs',
                                                  '*.log'))):
            with open(path, errors='replace') as log:
                tail = log.readlines()[-LOG_TAIL_LINES:]
            parts.append('%s:\n%s' % (path, ''.join(tail)))
        return '\n'.join(parts)
