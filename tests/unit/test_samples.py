"""The checked-in samples are what their generators make now."""

import difflib
import os

import fixtures
from oslo_config import cfg
from oslo_config import generator as config_generator
from oslo_policy import generator as policy_generator

from tests import base

TOP = os.path.dirname(os.path.dirname(os.path.dirname(
    os.path.abspath(__file__))))


def _generate_config(generator_config, output):
    conf = cfg.ConfigOpts()
    config_generator.register_cli_opts(conf)
    conf(['--config-file', generator_config, '--output-file', output],
         project='reservation-ext')
    config_generator.generate(conf)


def _generate_policy(generator_config, output):
    policy_generator.generate_sample(
        args=['--config-file', generator_config, '--output-file', output],
        conf=cfg.ConfigOpts())


class SamplesTest(base.TestCase):

    def _check(self, generate, command, generator_config, sample):
        output = os.path.join(self.useFixture(fixtures.TempDir()).path,
                              os.path.basename(sample))
        generate(os.path.join(TOP, generator_config), output)
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
        self._check(_generate_config, 'oslo-config-generator',
                    'etc/oslo-config-generator/reservation.conf',
                    'etc/reservation.conf.sample')

    def test_policy_sample_is_current(self):
        self._check(_generate_policy, 'oslopolicy-sample-generator',
                    'etc/oslo-policy-generator/reservation.conf',
                    'etc/reservation/policy.yaml.sample')
