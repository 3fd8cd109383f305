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

"""An enforcement service written for Blazar, in front of the sandbox.

``reservation-sandbox --enforcement-url`` enables ExternalServiceFilter
against a small HTTP service started by the test
(:mod:`tests.enforcement_service`), which speaks Blazar's protocol. The
unmodified python-blazarclient meets its refusals.
"""

from tests.e2e import base
from tests import enforcement_service

RESERVABLE = {'compute-3': 'true', 'compute-4': 'true'}
HOST = 'resource_type=physical:host,min=1,max=1,' \
       'resource_properties=["=", "$gpu", "true"]'
REFUSAL = 'Your allocation does not cover this lease.'


class TestExternalEnforcement(base.SandboxTestCase):

    @classmethod
    def setUpClass(cls):
        cls.service = enforcement_service.EnforcementService()
        cls.service.setUp()
        cls.OPTIONS = ('--enforcement-url', cls.service.url)
        try:
            super().setUpClass()
        except Exception:
            cls.service.cleanUp()
            raise

    @classmethod
    def tearDownClass(cls):
        super().tearDownClass()
        cls.service.cleanUp()

    def setUp(self):
        super().setUp()
        self.add_reservable_hosts(RESERVABLE)
        self.service.refuse_names['too-long'] = REFUSAL

    def create(self, name, expect_failure=False):
        return self.run_cli(['openstack', 'reservation', 'lease', 'create',
                             '--reservation', HOST, '--start-date',
                             '2031-07-01 09:00', '--end-date',
                             '2031-07-02 09:00', name], user='demo',
                            expect_failure=expect_failure)

    def names(self):
        return [lease['name'] for lease in self.run_json(
            ['openstack', 'reservation', 'lease', 'list'], user='demo')]

    def test_a_refused_create_is_403_with_the_message_and_makes_nothing(self):
        error = self.create('too-long', expect_failure=True)
        self.assertIn(REFUSAL, error)
        self.assertNotIn('too-long', self.names())
        self.assertEqual('/v1/check-create', self.service.paths()[-1])

    def test_an_allowed_lease_is_created_and_its_delete_is_told(self):
        self.assertIn('Created a new lease', self.create('fine'))
        self.assertIn('fine', self.names())
        self.run_cli(['openstack', 'reservation', 'lease', 'delete', 'fine'],
                     user='demo')
        self.assertEqual(['/v1/check-create', '/v1/on-end'],
                         [call['path'] for call in self.service.calls
                          if call['body']['lease'].get('name') == 'fine'])

    def test_a_refused_update_leaves_the_lease_as_it_was(self):
        self.create('renamed-later')
        before = self.run_json(['openstack', 'reservation', 'lease', 'show',
                                'renamed-later'], user='demo')
        self.service.refuse_names['renamed-later'] = REFUSAL
        error = self.run_cli(['openstack', 'reservation', 'lease', 'set',
                              '--prolong-for', '1d', 'renamed-later'],
                             user='demo', expect_failure=True)
        self.assertIn(REFUSAL, error)
        self.assertEqual(before, self.run_json(
            ['openstack', 'reservation', 'lease', 'show', 'renamed-later'],
            user='demo'))
        self.service.refuse_names.pop('renamed-later')
        self.addCleanup(self.run_cli, ['openstack', 'reservation', 'lease',
                                       'delete', 'renamed-later'],
                        user='demo')
