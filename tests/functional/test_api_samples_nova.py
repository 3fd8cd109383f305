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

"""The API reference's samples of the lease API and of Nova's additions.

Inside Nova's harness (the lease API mounted in nova-api, the server
middleware, a real engine): each test sends the request samples of
``doc/api_samples`` and compares every answer with its response sample
(:mod:`tests.api_samples`), in the order a user would make the calls.
The samples' dates are in 2030, so the leases start later whatever day
the tests run; the engine runs at the sample's start.
"""

import datetime
import json
import urllib.parse

from tests import api_samples
from tests.functional import nova_base

# The harness's endpoint (in links without the port), as the reference
# shows it.
ENDPOINT = 'http://openstack.example.com'
ALIASES = {nova_base.NOVA_URL: ENDPOINT,
           'http://' + urllib.parse.urlsplit(nova_base.NOVA_URL).hostname:
           ENDPOINT}
START = datetime.datetime(2030, 1, 10, 9, 1)


class APISamplesTest(nova_base.NovaTestCase):

    def setUp(self):
        super().setUp()
        self.samples = api_samples.Samples(self, aliases=ALIASES)

    def lease_call(self, method, path, status, request=None, response=None,
                   admin=False):
        """Send a lease API call with the request sample ``request``.

        The call is an administrator's when ``admin``, else a member's of
        the owner project; the answer is compared with the response sample
        ``response``.
        """
        body = self.samples.request(request) if request else None
        if admin:
            answer = self.admin_lease_api(method, path, body, expect=status)
        else:
            answer = self.lease_api(method, path, body, expect=status)
        if response:
            self.samples.check(response, answer)
        else:
            self.assertIsNone(answer)
        return answer

    def compute_call(self, api, method, path, status, request=None,
                     response=None):
        """The same for Nova's compute API, through ``api``."""
        body = (json.dumps(self.samples.request(request)) if request
                else None)
        answer = api.api_request(path.lstrip('/'), method=method, body=body,
                                 check_response_status=[status])
        if response:
            return self.samples.check(response, answer.json())
        self.assertEqual(b'', answer.content)
        return None

    def test_the_host_and_lease_samples_are_what_the_api_answers(self):
        host = self.lease_call('POST', '/os-hosts', 201, 'hosts/host-create',
                               'hosts/host-create', admin=True)['host']
        host_path = '/os-hosts/' + host['id']
        self.lease_call('GET', '/os-hosts', 200, None, 'hosts/host-list',
                        admin=True)
        self.lease_call('GET', host_path, 200, None, 'hosts/host-show',
                        admin=True)
        self.lease_call('PUT', host_path, 200, 'hosts/host-update',
                        'hosts/host-update', admin=True)
        self.lease_call('GET', '/os-hosts/properties', 200, None,
                        'hosts/host-property-list', admin=True)
        self.lease_call('PATCH', '/os-hosts/properties/rack', 200,
                        'hosts/host-property-update',
                        'hosts/host-property-update', admin=True)
        self.lease_call('GET', '/os-hosts/properties?detail=1&all=1', 200,
                        None, 'hosts/host-property-list-detail', admin=True)

        lease = self.lease_call('POST', '/leases', 201,
                                'leases/lease-create',
                                'leases/lease-create')['lease']
        lease_path = '/leases/' + lease['id']
        self.lease_call('GET', '/leases', 200, None, 'leases/lease-list')
        self.lease_call('GET', lease_path, 200, None, 'leases/lease-show')
        self.lease_call('GET', '/os-hosts/allocations', 200, None,
                        'hosts/allocation-list', admin=True)
        self.lease_call('GET', host_path + '/allocation', 200, None,
                        'hosts/allocation-show', admin=True)

        # At the start, the reservation hint boots onto the leased host.
        self.run_engine(START)
        server = self.compute_call(
            self.user_api(nova_base.OWNER), 'POST', '/servers', 202,
            'servers/server-create-host-reservation',
            'servers/server-create-host-reservation')['server']
        self._wait_for_state_change(server, 'ACTIVE')
        self.lease_call('PUT', lease_path, 200, 'leases/lease-update',
                        'leases/lease-update')
        self.lease_call('DELETE', lease_path, 204)
        self.lease_call('DELETE', host_path, 204, admin=True)
        self.lease_call('GET', '/os-hosts', 200, None,
                        'hosts/host-list-empty', admin=True)

    def test_the_planning_samples_are_what_the_api_answers(self):
        self.lease_call('POST', '/os-hosts', 201, 'hosts/host-create',
                        'hosts/host-create', admin=True)
        # Room for the capacity lease's second server on another host.
        self.add_reservable_host('compute-3')
        self.lease_call('GET', '/availability?resource_type=physical:host'
                        '&start=2030-01-10 09:00&end=2030-01-20 09:00'
                        '&resource_properties=["=", "$gpu", "true"]', 200,
                        None, 'availability/availability-show')
        self.lease_call('POST', '/leases/proposals', 201,
                        'proposals/proposals-create',
                        'proposals/proposals-create')
        self.lease_call('POST', '/leases', 201,
                        'proposals/lease-create-from-proposal',
                        'proposals/lease-create-from-proposal')
        self.lease_call('POST', '/leases', 201,
                        'leases/lease-create-capacity',
                        'leases/lease-create-capacity')

    def test_the_server_samples_are_what_nova_answers(self):
        self.add_reservable_host('compute-2')
        user = self.user_api(nova_base.OWNER)
        server = self.compute_call(
            user, 'POST', '/servers', 202, 'servers/server-create-reserved',
            'servers/server-create-reserved')['server']
        self._wait_for_state_change(server, 'RESERVED')
        path = '/servers/' + server['id']
        self.compute_call(user, 'GET', path, 200, None,
                          'servers/server-show-reserved')
        # The lease API's call when a lease update changes the flavor,
        # then the engine's at the lease's start, as an administrator.
        self.compute_call(self.admin_api, 'POST', path + '/action', 202,
                          'servers/server-action-reservation-flavor')
        self.compute_call(self.admin_api, 'POST', path + '/action', 202,
                          'servers/server-action-reservation-start')
        self._wait_for_state_change(server, 'ACTIVE')
        self.compute_call(user, 'GET', path, 200, None,
                          'servers/server-show-leased')
