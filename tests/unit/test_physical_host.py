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

import datetime

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
                         self.plugin.validate({'min': 1})['on_end'])
        self.assertEqual('release', self.plugin.validate(
            {'min': 1, 'on_end': 'release'})['on_end'])

    def test_every_end_policy_and_before_end_action_is_accepted(self):
        for on_end in ('release', 'delete_instances', 'recycle'):
            self.assertEqual(on_end, self.plugin.validate(
                {'min': 1, 'on_end': on_end})['on_end'])
        for before_end in ('default', '', 'snapshot'):
            self.assertEqual(before_end, self.plugin.validate(
                {'min': 1, 'before_end': before_end})['before_end'])

    def test_a_grace_period_is_a_duration_kept_in_seconds(self):
        for given, seconds in (('1h', 3600), ('1d12h', 129600),
                               (90, 90), ('600', 600), (None, None)):
            self.assertEqual(seconds, self.plugin.validate(
                {'min': 1, 'grace_period': given})['grace_period'])

    def test_a_grace_period_cannot_be_proposed(self):
        error = self.assertRaises(
            exceptions.InvalidInput, self.plugin.validate_proposal,
            {'min': 1, 'grace_period': '1h'})
        self.assertEqual('grace_period', error.field)

    def test_the_hosts_are_held_for_the_grace_period_too(self):
        end = datetime.datetime(2027, 1, 12, 9, 0)
        self.assertEqual(end + datetime.timedelta(hours=1),
                         physical_host._held_until({'end_date': end}, 3600))
        self.assertEqual(end, physical_host._held_until({'end_date': end},
                                                        None))

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
        self.assertInvalid('on_end', min=1, on_end='explode')
        self.assertInvalid('on_end', min=1, on_end=None)
        self.assertInvalid('before_end', min=1, before_end='backup')
        self.assertInvalid('grace_period', min=1, grace_period='soon')
        self.assertInvalid('grace_period', min=1, grace_period=0)
        self.assertInvalid('grace_period', min=1, grace_period=-5)
        self.assertInvalid('grace_period', min=1, grace_period=[1])
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
