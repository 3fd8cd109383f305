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

"""Blazar 18 databases written by Blazar's own code, for the import tests.

``tests/blazar_peer_db.py`` runs under the peer venv (``.peer-venv``, made
by ``tools/peer-venv.sh``). Without that venv the tests skip, unless
``RESERVATION_REQUIRE_BLAZAR=1`` (as ``.ci/run`` sets) makes it a
failure. The import only reads Blazar's database: each one is written
once per test process and shared by the tests that ask for the same one.
"""

import atexit
import json
import os
import shutil
import subprocess
import tempfile

import fixtures

from bench import common as bench_common

SCRIPT = os.path.join(os.path.dirname(os.path.dirname(
    os.path.abspath(__file__))), 'blazar_peer_db.py')
PYTHON = os.path.join(bench_common.PEER_VENV, 'bin', 'python')
REQUIRED = os.environ.get('RESERVATION_REQUIRE_BLAZAR') == '1'
# {(now, stamp): (url, made)}: the databases written in this process.
_WRITTEN = {}


class BlazarDatabase(fixtures.Fixture):
    """A SQLite file that Blazar 18 wrote; ``url`` and ``made`` (ids).

    :param now: the leases' "now" (see ``tests/blazar_peer_db.py``).
    :param stamp: the alembic revision recorded (Blazar's head by default).
    :param options: more options of the script (``--started-instances``).
    """

    def __init__(self, test, now, stamp='head', *options):
        super().__init__()
        self.test, self.now, self.stamp = test, now, stamp
        self.options = options

    def _setUp(self):
        if not os.path.exists(PYTHON):
            message = ('Blazar 18 is not installed in %s: run '
                       'tools/peer-venv.sh' % bench_common.PEER_VENV)
            if REQUIRED:
                self.test.fail(message)
            self.test.skipTest(message)
        key = (self.now, self.stamp, self.options)
        if key not in _WRITTEN:
            _WRITTEN[key] = self._write()
        self.url, self.made = _WRITTEN[key]

    def _write(self):
        # Not in the test's temporary folder, which goes with the test.
        folder = tempfile.mkdtemp(prefix='blazar-peer-',
                                  dir=os.environ.get('TMPDIR', '/tmp'))
        atexit.register(shutil.rmtree, folder, True)
        url = 'sqlite:///' + os.path.join(folder, 'blazar.sqlite')
        result = subprocess.run(
            [PYTHON, SCRIPT, '--url', url, '--now', self.now.isoformat(),
             '--stamp', self.stamp, *self.options],
            capture_output=True, text=True, timeout=300)
        if result.returncode:
            self.test.fail('Blazar could not write its database:\n'
                           + result.stderr[-4000:])
        return url, json.loads(result.stdout.splitlines()[-1])

    def lease(self, name, index=0):
        """The ids (``lease``, ``reservation``) of the lease ``name``."""
        return self.made['leases'][name][index]
