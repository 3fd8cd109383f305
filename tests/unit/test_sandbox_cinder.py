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

"""The sandbox's cinder.conf: several pools, and our scheduler filter.

Cinder itself runs these settings in
:mod:`tests.functional.test_cinder_reservation_filter`, which starts the
same backends in Cinder's harness.
"""

import configparser
import importlib.metadata
import os

from reservation_ext.sandbox import config
from tests import base
from tests import sandbox_files

TOP = os.path.dirname(os.path.dirname(os.path.dirname(
    os.path.abspath(__file__))))
FILTERS_NAMESPACE = 'cinder.scheduler.filters'


def _filter_classes():
    """The class names Cinder's scheduler may enable, by entry point.

    Cinder's own, as installed, and ours, as ``setup.cfg`` declares them
    (the test's environment may predate them).
    """
    parser = configparser.ConfigParser(interpolation=None)
    parser.read(os.path.join(TOP, 'setup.cfg'))
    ours = [line.partition('=')[2].strip() for line in parser[
        'entry_points'][FILTERS_NAMESPACE].splitlines() if line.strip()]
    installed = [entry_point.value for entry_point in
                 importlib.metadata.entry_points(group=FILTERS_NAMESPACE)]
    return {value.rpartition(':')[2] for value in ours + installed}, ours


class SandboxCinderTest(base.TestCase):

    def setUp(self):
        super().setUp()
        self.conf = sandbox_files.write(self, ['cinder'])['cinder']

    def test_cinder_has_two_backends_reporting_three_pools(self):
        self.assertEqual('hdd,ssd', self.conf.get('DEFAULT',
                                                  'enabled_backends'))
        self.assertEqual(
            [('hdd', 'hdd', 'bronze'), ('ssd', 'ssd', 'gold,silver')],
            [(backend, self.conf.get(backend, 'volume_backend_name'),
              self.conf.get(backend, 'sandbox_pools'))
             for backend in ('hdd', 'ssd')])
        self.assertEqual(config.FAKE_VOLUME_DRIVER, self.conf.get(
            'backend_defaults', 'volume_driver'))
        self.assertEqual(['sandbox@hdd#bronze', 'sandbox@ssd#gold',
                          'sandbox@ssd#silver'], config.cinder_pools())

    def test_cinder_schedules_with_its_default_filters_then_ours(self):
        self.assertEqual(
            'AvailabilityZoneFilter,CapacityFilter,CapabilitiesFilter,'
            'ReservationFilter',
            self.conf.get('DEFAULT', 'scheduler_default_filters'))
        # ... which reads the leases DB, as the extension does.
        self.assertTrue(self.conf.get('reservation_database', 'connection'))

    def test_every_enabled_filter_is_a_class_cinder_finds(self):
        classes, ours = _filter_classes()
        self.assertEqual(
            ['cinder_ext.reservation_filter:ReservationFilter'], ours)
        self.assertEqual([], [name for name in config.CINDER_FILTERS
                              if name not in classes])
