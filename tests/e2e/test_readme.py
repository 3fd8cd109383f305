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

"""The README's quick start, run as written against a fresh sandbox.

Every command of its code blocks after ``./run-sandbox`` and
``./run-tests``, in order, in one shell whose PATH has no client until an
openrc file puts them there (:mod:`tests.e2e.doc_runner`).
"""

import os

import fixtures

from tests.e2e import base
from tests.e2e import doc_runner

README = os.path.join(doc_runner.CHECKOUT, 'README.md')
FIRST = 'With the sandbox running, in another shell'
LAST = 'In Horizon, the unmodified blazar-dashboard plugin'


class TestReadme(base.SandboxTestCase):

    def test_every_quick_start_command_works_as_written(self):
        with open(README) as readme:
            commands = doc_runner.readme_commands(readme.read(), FIRST, LAST)
        self.assertGreater(len(commands), 30)
        workdir = self.useFixture(fixtures.TempDir()).path
        shell = doc_runner.DocShell(self.sandbox.state_dir, workdir)
        self.addCleanup(shell.close)
        for command in commands:
            ran, status, output = shell.run(command)
            self.assertEqual(0, status, 'README command failed:\n%s\n%s'
                             % (ran, output))
        # What the last commands said they did, checked once more.
        final = shell.run('openstack reservation lease list -f value '
                          '-c name -c status 2>/dev/null | sort')[2]
        self.assertEqual(
            ['capacity1 ACTIVE', 'data-run ACTIVE', 'gpu-run PENDING',
             'lease1 ACTIVE', 'pair PENDING'],
            [line for line in final.splitlines() if ' ' in line])
