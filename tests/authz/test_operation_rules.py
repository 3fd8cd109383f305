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

"""Nova's rule of a call, found from its documented rules.

(Cinder cannot be imported in this process: its uses, on reserved
volumes, are in the authorization table's Cinder rows.)
"""

from nova import policies as nova_policies

from reservation_ext import operation_rules
from tests import base


class OperationRulesTest(base.TestCase):

    def setUp(self):
        super().setUp()
        self.servers = operation_rules.OperationRules(
            nova_policies.list_rules(), '/servers/{server_id}')

    def test_a_server_action_has_its_own_rule(self):
        self.assertEqual(
            ['os_compute_api:servers:reboot',
             'os_compute_api:os-migrate-server:migrate',
             'os_compute_api:os-lock-server:unlock'],
            [self.servers.rule('POST', '/action', action)
             for action in ('reboot', 'migrate', 'unlock')])

    def test_a_server_update_is_not_taken_for_the_fields_it_shows(self):
        self.assertEqual('os_compute_api:servers:update',
                         self.servers.rule('PUT'))

    def test_paths_below_the_server_match_their_templates(self):
        self.assertEqual('os_compute_api:server-metadata:update',
                         self.servers.rule('PUT', '/metadata/colour'))

    def test_an_undocumented_call_has_no_rule(self):
        self.assertIsNone(self.servers.rule('POST', '/action',
                                            'os-reservation-start'))
        self.assertIsNone(self.servers.rule('PATCH'))

    def test_the_documented_actions_are_listed(self):
        self.assertIn('reboot', self.servers.actions())
        self.assertNotIn('os-reservation-start', self.servers.actions())
