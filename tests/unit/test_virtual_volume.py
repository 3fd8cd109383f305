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

"""The virtual:volume plugin's request validation (no DB, no Cinder)."""

from oslo_config import cfg

from reservation_ext import clock
from reservation_ext import exceptions
from reservation_ext.plugins import virtual_volume
from tests import base

VOLUME = '6f3c5b1e-2a4d-4c8e-9b7a-1d2e3f405162'


class ValidateTest(base.TestCase):

    def setUp(self):
        super().setUp()
        self.plugin = virtual_volume.VirtualVolumePlugin(cfg.CONF,
                                                         clock.SYSTEM)

    def assertInvalid(self, field, **values):
        error = self.assertRaises(exceptions.InvalidInput,
                                  self.plugin.validate, values)
        self.assertEqual(field, error.field)

    def test_an_update_may_change_the_size_and_the_end_only(self):
        reservation = {'size_gb': 1}
        self.assertEqual({'size_gb': 3}, self.plugin.prepare_update(
            None, reservation, {'size_gb': '3'}))
        for values, field in [({'size_gb': 0}, 'size_gb'),
                              ({'on_end': 'keep'}, 'on_end'),
                              ({'volume_id': VOLUME}, 'volume_id')]:
            error = self.assertRaises(exceptions.InvalidInput,
                                      self.plugin.prepare_update, None,
                                      reservation, values)
            self.assertEqual(field, error.field)

    def test_defaults(self):
        self.assertEqual(
            {'size_gb': 10, 'volume_id': VOLUME, 'volume_type': None,
             'availability_zone': None, 'on_end': 'delete'},
            self.plugin.validate({'size_gb': '10', 'volume_id': VOLUME}))

    def test_all_fields(self):
        values = {'size_gb': 1, 'volume_id': VOLUME.upper(),
                  'volume_type': 'fast', 'availability_zone': 'nova',
                  'on_end': 'snapshot_delete'}
        self.assertEqual(dict(values, volume_id=VOLUME),
                         self.plugin.validate(values))

    def test_bad_input_names_the_field(self):
        self.assertInvalid('size_gb', volume_id=VOLUME)
        self.assertInvalid('size_gb', size_gb=0, volume_id=VOLUME)
        self.assertInvalid('size_gb', size_gb='ten', volume_id=VOLUME)
        self.assertInvalid('size_gb', size_gb=True, volume_id=VOLUME)
        self.assertInvalid('size_gb', size_gb=1.5, volume_id=VOLUME)
        self.assertInvalid('volume_id', size_gb=1)
        self.assertInvalid('volume_id', size_gb=1, volume_id='vol1')
        self.assertInvalid('volume_type', size_gb=1, volume_id=VOLUME,
                           volume_type='')
        self.assertInvalid('availability_zone', size_gb=1, volume_id=VOLUME,
                           availability_zone=3)
        self.assertInvalid('on_end', size_gb=1, volume_id=VOLUME,
                           on_end='shelve')
        self.assertInvalid('colour', size_gb=1, volume_id=VOLUME,
                           colour='red')

    def test_the_capacity_option_is_registered_off(self):
        self.assertEqual(0, cfg.CONF.reservation.volume_reservable_gb)
