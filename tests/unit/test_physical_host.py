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
        self.assertInvalid('colour', min=1, colour='red')

    def test_own_region_is_accepted(self):
        self.plugin.validate({'min': 1, 'region': 'RegionOne'})
