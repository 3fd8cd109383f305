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

"""The external enforcement service decides on ``nova boot`` hints too.

Nova's harness with the lease middleware of nova-api, whose lease service
has ``[enforcement] enabled_filters = ExternalServiceFilter`` pointing at
a real HTTP service speaking Blazar's protocol
(:mod:`tests.enforcement_service`).
"""

import datetime
import json

from nova.tests.functional.api import client

from reservation_ext import dates
from tests import enforcement_service
from tests.functional import nova_base

HOUR = datetime.timedelta(hours=1)


class NovaEnforcementTest(nova_base.NovaTestCase):

    def setUp(self):
        self.service = self.useFixture(
            enforcement_service.EnforcementService())
        # Before the API (and with it the middleware) is loaded.
        self.flags(enabled_filters=['ExternalServiceFilter'],
                   external_service_base_endpoint=self.service.url,
                   group='enforcement')
        super().setUp()
        self.api_user = self.user_api(nova_base.OWNER)
        self.flavor = self._create_flavor(memory_mb=4096, vcpu=1, disk=1,
                                          ephemeral=0)
        self.add_reservable_host('compute-4')

    def post_server(self, lease_name):
        start = (datetime.datetime.utcnow() + HOUR).replace(microsecond=0)
        request = {'server': self._build_server(
            name='vm1', flavor_id=self.flavor, networks='none'),
            'os:scheduler_hints': {
                'reserved': 'True', 'lease_params': json.dumps({
                    'name': lease_name,
                    'start': dates.format_date(start),
                    'end': dates.format_date(start + HOUR)})}}
        return self.api_user.post_server(request)

    def test_a_refused_reserved_boot_is_403_and_creates_nothing(self):
        self.service.refuse_names['vm-lease'] = 'No VMs for you this week.'
        error = self.assertRaises(client.OpenStackApiException,
                                  self.post_server, 'vm-lease')
        self.assertEqual(403, error.response.status_code)
        self.assertEqual('No VMs for you this week.',
                         error.response.json()['forbidden']['message'])
        self.assertEqual([], self.api_user.get_servers())
        self.assertEqual([], self.lease_api('GET', '/leases')['leases'])

    def test_an_allowed_reserved_boot_was_shown_to_the_service(self):
        server = self.post_server('vm-lease')
        self._wait_for_state_change(server, 'RESERVED')
        [call] = self.service.calls
        self.assertEqual('/v1/check-create', call['path'])
        lease = call['body']['lease']
        self.assertEqual(('vm-lease', nova_base.OWNER, 'virtual:instance'),
                         (lease['name'], lease['project_id'],
                          lease['reservations'][0]['resource_type']))
