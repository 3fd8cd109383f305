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

"""The instance-capacity form of virtual:instance: request validation."""

from oslo_config import cfg

from reservation_ext import clock
from reservation_ext import exceptions
from reservation_ext.plugins import virtual_instance
from tests import base

# What python-blazarclient's CLI sends for
# --reservation resource_type=virtual:instance,vcpus=2,memory_mb=2048,
# disk_gb=20,amount=3,affinity=False (resource_type taken off).
CLI_BODY = {'vcpus': 2, 'memory_mb': 2048, 'disk_gb': 20, 'amount': 3,
            'affinity': 'False', 'resource_properties': ''}


class ValidateTest(base.TestCase):

    def setUp(self):
        super().setUp()
        self.plugin = virtual_instance.VirtualInstancePlugin(cfg.CONF,
                                                             clock.SYSTEM)

    def validate(self, **changes):
        return self.plugin.validate(dict(CLI_BODY, **changes))

    def assertInvalid(self, field, **changes):
        error = self.assertRaises(exceptions.InvalidInput, self.validate,
                                  **changes)
        self.assertEqual(field, error.field)

    def test_a_blazar_cli_body_is_the_capacity_form(self):
        self.assertEqual(
            {'vcpus': 2, 'memory_mb': 2048, 'disk_gb': 20, 'amount': 3,
             'affinity': False, 'resource_properties': '',
             'on_end': 'delete', 'source_flavor': None},
            self.validate())

    def test_affinity_is_a_boolean_null_or_their_names(self):
        for given, meant in ((True, True), ('True', True), ('true', True),
                             (False, False), ('false', False), (None, None),
                             ('None', None), ('null', None)):
            self.assertIs(meant, self.validate(affinity=given)['affinity'])

    def test_a_capability_query_is_kept_as_text(self):
        self.assertEqual('["=", "$gpu", "true"]', self.validate(
            resource_properties=['=', '$gpu', 'true'])[
                'resource_properties'])

    def test_bad_input_names_the_field(self):
        self.assertInvalid('amount', amount='')
        self.assertInvalid('amount', amount=0)
        self.assertInvalid('vcpus', vcpus='two')
        self.assertInvalid('affinity', affinity='maybe')
        self.assertInvalid('affinity', affinity=1)
        self.assertInvalid('resource_properties',
                           resource_properties='["=", "$gpu"')
        self.assertInvalid('vcpus', vcpus=0, memory_mb=0, disk_gb=0)
        self.assertInvalid('build', build=1)

    def test_a_missing_field_is_named(self):
        body = dict(CLI_BODY)
        del body['amount']
        error = self.assertRaises(exceptions.InvalidInput,
                                  self.plugin.validate, body)
        self.assertEqual('amount', error.field)
