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

"""The physical:host plugin's request validation (no DB, no Nova)."""

from oslo_config import cfg

from reservation_ext import clock
from reservation_ext import exceptions
from reservation_ext.plugins import physical_host
from tests import base


class ValidateTest(base.TestCase):

    def setUp(self):
        super().setUp()
        self.plugin = physical_host.PhysicalHostPlugin(cfg.CONF,
                                                       clock.SYSTEM)

    def assertInvalid(self, field, **values):
        error = self.assertRaises(exceptions.InvalidInput,
                                  self.plugin.validate, values)
        self.assertEqual(field, error.field)

    def test_defaults(self):
        values = self.plugin.validate({'min': '2', 'max': '3'})
        self.assertEqual(2, values['min'])
        self.assertEqual(3, values['max'])
        self.assertEqual('release', values['on_end'])
        self.assertEqual('default', values['before_end'])
        self.assertEqual('', values['hypervisor_properties'])
        self.assertEqual([], values['hosts'])

    def test_named_hosts_set_the_count(self):
        values = self.plugin.validate({'hosts': ['compute-1', 7]})
        self.assertEqual((2, 2), (values['min'], values['max']))

    def test_queries_in_both_forms_are_kept_as_text(self):
        values = self.plugin.validate({
            'min': 1, 'hypervisor_properties': ['>=', '$vcpus', '8'],
            'resource_properties': '{"gpu": "s== true"}'})
        self.assertEqual('[">=", "$vcpus", "8"]',
                         values['hypervisor_properties'])
        self.assertEqual('{"gpu": "s== true"}',
                         values['resource_properties'])

    def test_constraints_are_compiled_once_when_checked(self):
        values = self.plugin.validate({
            'min': 1, 'hypervisor_properties': ['>=', '$vcpus', '8'],
            'resource_properties': '{"gpu": "s== true"}', 'min_vcpus': '4',
            'availability_zone': 'nova', 'hosts': ['compute-1']})
        # Both queries, min_vcpus, the zone and the named hosts.
        self.assertEqual(5, len(values['conditions']))

    def test_a_named_host_that_is_not_an_id_or_name_is_named(self):
        self.assertInvalid('hosts[1]', hosts=['compute-1', ''])
        self.assertInvalid('hosts[0]', hosts=[{'id': 7}])

    def test_numbers_as_text_are_numbers(self):
        values = self.plugin.validate({'min': '1', 'max': '2',
                                       'min_memory_mb': '2048'})
        self.assertEqual((1, 2, 2048), (values['min'], values['max'],
                                        values['min_memory_mb']))

    def test_bad_input_names_the_field(self):
        self.assertInvalid('min')
        self.assertInvalid('min', min=0)
        self.assertInvalid('max', min=1, max='two')
        self.assertInvalid('max', min=3, max=2)
        self.assertInvalid('min', min=True)
        self.assertInvalid('min_vcpus', min=1, min_vcpus=-1)
        self.assertInvalid('hosts', hosts='compute-1')
        self.assertInvalid('on_end', min=1, on_end='recycle')
        self.assertInvalid('before_end', min=1, before_end='snapshot')
        self.assertInvalid('availability_zone', min=1, availability_zone='')
        self.assertInvalid('region', min=1, region='RegionTwo')
        self.assertInvalid('resource_properties', min=1,
                           resource_properties='["=", "$gpu"')
        self.assertInvalid('hypervisor_properties', min=1,
                           hypervisor_properties=['bad'])
        self.assertInvalid('min_local_gb', min=1, min_local_gb='lots')
        self.assertInvalid('colour', min=1, colour='red')

    def test_own_region_is_accepted(self):
        self.plugin.validate({'min': 1, 'region': 'RegionOne'})
