"""etc/reservation.conf.sample is what oslo-config-generator makes now."""

import difflib
import os

import fixtures
from oslo_config import cfg
from oslo_config import generator

from tests import base

TOP = os.path.dirname(os.path.dirname(os.path.dirname(
    os.path.abspath(__file__))))
GENERATOR_CONFIG = os.path.join('etc', 'oslo-config-generator',
                                'reservation.conf')
SAMPLE = os.path.join(TOP, 'etc', 'reservation.conf.sample')


class ConfigSampleTest(base.TestCase):

    def _generate(self):
        output = os.path.join(self.useFixture(fixtures.TempDir()).path,
                              'reservation.conf.sample')
        conf = cfg.ConfigOpts()
        generator.register_cli_opts(conf)
        conf(['--config-file', os.path.join(TOP, GENERATOR_CONFIG),
              '--output-file', output], project='reservation-ext')
        generator.generate(conf)
        with open(output) as f:
            return f.read()

    def test_sample_is_current(self):
        with open(SAMPLE) as f:
            checked_in = f.read()
        generated = self._generate()
        if checked_in != generated:
            self.fail(
                '%s is stale: regenerate it with "oslo-config-generator '
                '--config-file %s" (or "tox -e genconfig") and commit it.\n%s'
                % (os.path.relpath(SAMPLE, TOP), GENERATOR_CONFIG,
                   ''.join(difflib.unified_diff(
                       checked_in.splitlines(True),
                       generated.splitlines(True),
                       'checked in', 'generated'))))
