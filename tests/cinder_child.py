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
clashes with Nova's, so the test runner's worker must not import it. A
module with such tests defines them only when :func:`inside` its child
(``env`` set to 1), and otherwise one test that calls :func:`run`.
"""

import os
import subprocess
import sys

# Cinder's harness first: it monkey patches the child with eventlet,
# before the tests package would switch Nova to native threads (which it
# leaves alone in a process that has eventlet already).
CHILD_MAIN = ('import sys; import cinder.tests.functional; '
              'from testtools import run; '
              'run.main(["testtools.run", "%s"], sys.stdout)')
TOP = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def inside(env):
    """Whether this process is the child that ``env`` marks."""
    return os.environ.get(env) == '1'


def run(test, module, env):
    """Run ``module``'s tests in a child; ``test`` asserts they passed.

    :returns: the child's output.
    """
    child = subprocess.run(
        [sys.executable, '-c', CHILD_MAIN % module],
        cwd=TOP, env=dict(os.environ, **{env: '1'}),
        stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
        timeout=600)
    test.assertEqual(0, child.returncode, child.stdout[-20000:])
    test.assertIn('\nOK', child.stdout)
    return child.stdout
