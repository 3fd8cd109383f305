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
from oslo_config import fixture as conffixture

from reservation_ext import clock
from reservation_ext import conf as conf_mod
from reservation_ext import exceptions
from reservation_ext.plugins import physical_host
from tests import base


class ValidateTest(base.TestCase):

    def setUp(self):
        super().setUp()
        self.conf = cfg.ConfigOpts()
        conf_mod.register_opts(self.conf)
        self.conf([], project='reservation')
        self.conf_fixture = self.useFixture(conffixture.Config(self.conf))
        self.plugin = physical_host.PhysicalHostPlugin(self.conf,
                                                       clock.SYSTEM)

    def assertInvalid(self, field, **values):
        error = self.assertRaises(exceptions.InvalidInput,
                                  self.plugin.validate, values)
        self.assertEqual(field, error.field)
        return error

    def test_defaults(self):
        values = self.plugin.validate({'min': '2', 'max': '3'})
        self.assertEqual(2, values['min'])
        self.assertEqual(3, values['max'])
        self.assertEqual('release', values['on_end'])
        self.assertEqual('default', values['before_end'])
        self.assertEqual('', values['hypervisor_properties'])
        self.assertEqual([], values['hosts'])
        self.assertIsNone(values['grace_period'])

    def test_on_end_defaults_to_the_host_on_end_option(self):
        self.conf_fixture.config(host_on_end='delete_instances',
                                 group='reservation')
        self.assertEqual('delete_instances',
                         self.plugin.validate({'min': 1, 'max': 1})['on_end'])
        self.assertEqual('release', self.plugin.validate(
            {'min': 1, 'max': 1, 'on_end': 'release'})['on_end'])

    def test_every_end_policy_and_before_end_action_is_accepted(self):
        for on_end in ('release', 'delete_instances', 'recycle'):
            self.assertEqual(on_end, self.plugin.validate(
                {'min': 1, 'max': 1, 'on_end': on_end})['on_end'])
        for before_end in ('default', '', 'snapshot'):
            self.assertEqual(before_end, self.plugin.validate(
                {'min': 1, 'max': 1, 'before_end': before_end})['before_end'])

    def test_a_grace_period_is_a_duration_kept_in_seconds(self):
        for given, seconds in (('1h', 3600), ('1d12h', 129600),
                               (90, 90), ('600', 600), (None, None)):
            self.assertEqual(seconds, self.plugin.validate(
                {'min': 1, 'max': 1, 'grace_period': given})['grace_period'])

    def test_a_grace_period_cannot_be_proposed(self):
        error = self.assertRaises(
            exceptions.InvalidInput, self.plugin.validate_proposal,
            {'min': 1, 'grace_period': '1h'})
        self.assertEqual('grace_period', error.field)

    def test_named_hosts_set_the_count(self):
        values = self.plugin.validate({'hosts': ['compute-1', 7]})
        self.assertEqual((2, 2), (values['min'], values['max']))

    def test_queries_in_both_forms_are_kept_as_text(self):
        values = self.plugin.validate({
            'min': 1, 'max': 1, 'hypervisor_properties': ['>=', '$vcpus', '8'],
            'resource_properties': '{"gpu": "s== true"}'})
        self.assertEqual('[">=", "$vcpus", "8"]',
                         values['hypervisor_properties'])
        self.assertEqual('{"gpu": "s== true"}',
                         values['resource_properties'])

    def test_constraints_are_compiled_once_when_checked(self):
        values = self.plugin.validate({
            'min': 1, 'max': 1,
            'hypervisor_properties': ['>=', '$vcpus', '8'],
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
        one = {'min': 1, 'max': 1}
        self.assertInvalid('min')
        self.assertInvalid('min', min=0, max=1)
        self.assertInvalid('max', min=1, max='two')
        self.assertInvalid('max', min=3, max=2)
        self.assertInvalid('min', min=True, max=1)
        self.assertInvalid('min_vcpus', min_vcpus=-1, **one)
        self.assertInvalid('hosts', hosts='compute-1')
        self.assertInvalid('on_end', on_end='explode', **one)
        self.assertInvalid('on_end', on_end=None, **one)
        self.assertInvalid('before_end', before_end='backup', **one)
        self.assertInvalid('grace_period', grace_period='soon', **one)
        self.assertInvalid('grace_period', grace_period=0, **one)
        self.assertInvalid('grace_period', grace_period=-5, **one)
        self.assertInvalid('grace_period', grace_period=[1], **one)
        self.assertInvalid('availability_zone', availability_zone='', **one)
        self.assertInvalid('region', region='RegionTwo', **one)
        self.assertInvalid('resource_properties',
                           resource_properties='["=", "$gpu"', **one)
        self.assertInvalid('hypervisor_properties',
                           hypervisor_properties=['bad'], **one)
        self.assertInvalid('min_local_gb', min_local_gb='lots', **one)
        self.assertInvalid('colour', colour='red', **one)

    def test_a_missing_max_is_refused_as_blazar_refuses_it(self):
        error = self.assertInvalid('max', min=1)
        self.assertEqual('max: Missing parameter max', str(error))
        error = self.assertInvalid('min', max=1)
        self.assertEqual('min: Missing parameter min', str(error))

    def test_python_blazarclients_empty_max_is_malformed(self):
        # What "--reservation resource_type=physical:host,min=1" sends.
        error = self.assertInvalid('max', min=1, max='',
                                   hypervisor_properties='',
                                   resource_properties='')
        self.assertEqual('max: Malformed parameter max (must be an '
                         'integer)', str(error))

    def test_a_count_below_one_has_blazars_message(self):
        error = self.assertInvalid('min', min=0, max=1)
        self.assertEqual('Malformed parameter min and max (must be greater '
                         'than or equal to 1)', error.reason)

    def test_a_max_below_the_min_has_blazars_message(self):
        error = self.assertInvalid('max', min=3, max=2)
        self.assertEqual('Invalid values for min/max of hosts. Max must be '
                         'equal to or larger than min.', error.reason)

    def test_a_proposal_of_a_minimum_alone_wants_that_many_hosts(self):
        values = self.plugin.validate_proposal({'min': 3})
        self.assertEqual((3, 3), (values['min'], values['max']))
        values = self.plugin.validate_proposal({})
        self.assertEqual((1, 1), (values['min'], values['max']))
        values = self.plugin.validate_query({'min': 1, 'max': 4})
        self.assertEqual((1, 4), (values['min'], values['max']))

    def test_own_region_is_accepted(self):
        self.plugin.validate({'min': 1, 'max': 1, 'region': 'RegionOne'})
