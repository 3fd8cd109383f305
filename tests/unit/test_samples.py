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

"""The checked-in samples are what their generators make now."""

import difflib
import os
import subprocess
import sys

import fixtures

from tests import base

TOP = os.path.dirname(os.path.dirname(os.path.dirname(
    os.path.abspath(__file__))))


# The generators run in a fresh interpreter, as the commands do: defaults
# that other tests' imports changed in this process (Nova sets oslo.policy's
# enforce_new_defaults, for one) must not leak into the samples.
_GENERATORS = {
    'config': 'from oslo_config import generator; generator.main()',
    'policy': 'from oslo_policy import generator; generator.generate_sample()',
}


def _generate(kind, generator_config, output):
    subprocess.run([sys.executable, '-c', _GENERATORS[kind],
                    '--config-file', generator_config,
                    '--output-file', output], check=True,
                   capture_output=True)


class SamplesTest(base.TestCase):

    def _check(self, kind, command, generator_config, sample):
        output = os.path.join(self.useFixture(fixtures.TempDir()).path,
                              os.path.basename(sample))
        _generate(kind, os.path.join(TOP, generator_config), output)
        with open(os.path.join(TOP, sample)) as f:
            checked_in = f.read()
        with open(output) as f:
            generated = f.read()
        if checked_in != generated:
            self.fail(
                '%s is stale: regenerate it with "%s --config-file %s" and '
                'commit it.\n%s' % (sample, command, generator_config,
                                    ''.join(difflib.unified_diff(
                                        checked_in.splitlines(True),
                                        generated.splitlines(True),
                                        'checked in', 'generated'))))

    def test_config_sample_is_current(self):
        self._check('config', 'oslo-config-generator',
                    'etc/oslo-config-generator/reservation.conf',
                    'etc/reservation.conf.sample')

    def test_policy_sample_is_current(self):
        self._check('policy', 'oslopolicy-sample-generator',
                    'etc/oslo-policy-generator/reservation.conf',
                    'etc/reservation/policy.yaml.sample')
