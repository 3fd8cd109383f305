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

"""Tests in Cinder's harness, run in a child process.

Cinder monkey patches its process with eventlet and its configuration
clashes with Nova's, so the test runner's worker (which runs Nova's
harness and multiprocessing pools) must not import it. A module with such
tests defines them only when :data:`IN_CINDER` (the child, started with
``RESERVATION_CINDER_HARNESS=1``), and otherwise one subclass of
:class:`CinderHarness` that runs the module again in that child.
"""

import os
import subprocess
import sys

from tests import base

CHILD_ENV = 'RESERVATION_CINDER_HARNESS'
IN_CINDER = os.environ.get(CHILD_ENV) == '1'
# Cinder's harness first: it monkey patches the child with eventlet,
# before the tests package would switch Nova to native threads (which it
# leaves alone in a process that has eventlet already).
CHILD_MAIN = ('import sys; import cinder.tests.functional; '
              'from testtools import run; '
              'run.main(["testtools.run", "%s"], sys.stdout)')
TOP = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
# hypothesis loads its plugins' entry points at import, trio's among them
# (selenium needs trio), and trio does not import under eventlet.
NO_PLUGINS = 'HYPOTHESIS_NO_PLUGINS'
# A hang guard for the whole child, not a performance expectation.
CHILD_TIMEOUT = 900


class CinderHarness(base.TestCase):
    """Run the Cinder-side tests of :attr:`module` in a child process."""

    #: The module whose tests the child runs (set by each subclass).
    module = None

    def setUp(self):
        if IN_CINDER:
            # Before the configuration is parsed: options registered in
            # the child (keystonemiddleware's) would need values.
            self.skipTest('the child runs the tests themselves')
        super().setUp()

    def test_in_cinder_harness(self):
        self.child_output = run(self, self.module)


def run(test, module):
    """Run ``module``'s tests in a child; ``test`` asserts they passed.

    :returns: the child's output.
    """
    child = subprocess.run(
        [sys.executable, '-c', CHILD_MAIN % module],
        cwd=TOP, env=dict(os.environ, **{CHILD_ENV: '1', NO_PLUGINS: '1'}),
        stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
        timeout=CHILD_TIMEOUT)
    test.assertEqual(0, child.returncode, child.stdout[-20000:])
    test.assertIn('\nOK', child.stdout)
    return child.stdout
