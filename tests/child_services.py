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

"""The sandbox's services that tests run in a child process of their own.

A child (Neutron's, :mod:`tests.neutron_service`; Cinder's,
:mod:`tests.cinder_service`) is started once per test process, on a
socket the test process bound, and shared by its tests; it says when it
serves through a pipe (as the sandbox's children do,
:mod:`reservation_ext.sandbox.process`) and ends with the test process.
"""

import atexit
import os
import shutil
import subprocess
import tempfile
import time

TOP = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
START_TIMEOUT = 120


def state_dir(name):
    """Make the child's directory.

    Not tempfile's default directory: oslotest makes it one per test,
    removed at the test's end, and the child outlives the test.
    """
    return tempfile.mkdtemp(prefix=name + '-',
                            dir=os.environ.get('TMPDIR') or '/tmp')


class Child:
    """A child process that serves on ``sock`` once it said ready.

    :param argv: its command, to which the pipe and the socket are added
        (``--ready-fd``, ``--listen <name>=<fd>``).
    :param directory: its state directory, removed when it stops; its
        output goes to ``<name>.log`` there.
    """

    def __init__(self, name, argv, sock, directory):
        self.name = name
        self.state_dir = directory
        self.log_path = os.path.join(directory, name + '.log')
        ready_r, ready_w = os.pipe()
        with open(self.log_path, 'ab') as log:
            self.popen = subprocess.Popen(
                argv + ['--ready-fd', str(ready_w),
                        '--listen', '%s=%d' % (name, sock.fileno())],
                stdin=subprocess.DEVNULL, stdout=log,
                stderr=subprocess.STDOUT, cwd=TOP,
                pass_fds=(ready_w, sock.fileno()),
                env=dict(os.environ, PYTHONPATH=TOP))
        os.close(ready_w)
        sock.close()
        atexit.register(self.stop)
        with os.fdopen(ready_r, 'rb') as ready:
            deadline = time.monotonic() + START_TIMEOUT
            while not ready.read(5):
                if self.popen.poll() is not None or \
                        time.monotonic() > deadline:
                    raise RuntimeError('%s did not start:\n%s'
                                       % (name, self.log_tail()))

    def log_tail(self):
        """The last lines of the child's output."""
        with open(self.log_path, errors='replace') as log:
            return ''.join(log.readlines()[-40:])

    def stop(self):
        """End the child and remove its directory."""
        if self.popen.poll() is None:
            self.popen.terminate()
            self.popen.wait(30)
        shutil.rmtree(self.state_dir, ignore_errors=True)
