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

"""What an operator probes in the sandbox: healthcheck, status, engines.

nova-api serves oslo.middleware's healthcheck from the project's
api-paste.ini; ``reservation-status`` runs against the sandbox's
nova.conf as it would against a deployment's.
"""

import json
import subprocess
import sys
import time

import requests

from reservation_ext.sandbox import config
from tests.e2e import base

# Hang guard, not a performance expectation.
TIMEOUT = 60


class TestOperations(base.SandboxTestCase):
    """One sandbox with one host and one engine."""

    HOSTS = 1

    def status(self, *argv):
        """Run reservation-status on the sandbox's nova.conf."""
        layout = config.Layout.load(self.sandbox.state_dir)
        return subprocess.run(
            [sys.executable, '-m', 'reservation_ext.cmd.status',
             '--config-file', layout.path('nova.conf')] + list(argv),
            stdin=subprocess.DEVNULL, capture_output=True, text=True,
            timeout=base.CLI_TIMEOUT)

    def test_nova_api_answers_the_healthcheck_without_a_token(self):
        layout = config.Layout.load(self.sandbox.state_dir)
        response = requests.get(layout.url('nova') + '/healthcheck',
                                timeout=TIMEOUT)
        self.assertEqual(200, response.status_code)
        self.assertEqual('OK', response.text)

    def test_upgrade_check_passes_on_the_sandbox(self):
        result = self.status('upgrade', 'check', '--json')
        self.assertEqual(0, result.returncode,
                         result.stdout + result.stderr)
        checks = json.loads(result.stdout)['checks']
        self.assertEqual({0}, {check['result'] for check in checks},
                         checks)

    def test_engines_shows_the_sandbox_engine_up(self):
        # The engine records a poll every poll interval (1 s here).
        deadline = time.monotonic() + TIMEOUT
        result = self.status('engines')
        while result.returncode and time.monotonic() < deadline:
            time.sleep(1)
            result = self.status('engines')
        self.assertEqual(0, result.returncode, result.stdout + result.stderr)
        lines = result.stdout.splitlines()
        self.assertEqual('engine', lines[0].split()[0], result.stderr)
        [engine, blank, events] = lines[1:]
        self.assertEqual('up', engine.split()[-1], result.stdout)
        self.assertEqual('', blank)
        self.assertRegex(events, r'^Events: \d+ running, \d+ waiting for '
                                 r'their results')
