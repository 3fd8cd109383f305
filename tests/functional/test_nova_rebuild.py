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

"""Rebuilds of servers whose host became reservable, in Nova's harness.

A rebuild with a new image asks the scheduler whether the server's own
host is still fine; ReservationFilter lets Nova skip it there
(``RUN_ON_REBUILD = False``), whatever the pools became since the build.
"""

import datetime

from reservation_ext import clock as clock_mod
from tests.functional import nova_base

OWNER = nova_base.OWNER
OTHER = nova_base.OTHER
# Two images of Nova's fake Glance.
FIRST_IMAGE = '155d900f-4e14-4e4c-a73d-069cbf4541e6'
NEW_IMAGE = 'a2459075-d96c-40d5-893e-577ff92e721c'


class RebuildTest(nova_base.NovaTestCase):

    def setUp(self):
        super().setUp()
        self.now = clock_mod.SYSTEM.now()
        self.start = self.now + datetime.timedelta(hours=1)
        self.end = self.now + datetime.timedelta(days=1)
        for host in ('compute-1', 'compute-2', 'compute-3'):
            self.add_reservable_host(host)

    def rebuild(self, server, project):
        """Rebuild ``server`` with NEW_IMAGE as ``project``; wait for it."""
        self.user_api(project).post_server_action(
            server['id'], {'rebuild': {'imageRef': NEW_IMAGE}})
        # A rebuild the scheduler refuses never reaches the compute.
        self._wait_for_instance_action_event(
            server, 'rebuild', 'compute_rebuild_instance', 'success')
        return self._wait_for_state_change(server, 'ACTIVE')

    def test_a_server_whose_host_became_reservable_can_be_rebuilt(self):
        server = self.boot(project=OTHER)
        self.assertEqual('compute-4',
                         server['OS-EXT-SRV-ATTR:hypervisor_hostname'])
        self.add_reservable_host('compute-4')

        server = self.rebuild(server, OTHER)

        self.assertEqual(NEW_IMAGE, server['image']['id'])
        self.assertEqual('compute-4',
                         server['OS-EXT-SRV-ATTR:hypervisor_hostname'])

    def test_a_server_left_by_a_released_host_lease_can_be_rebuilt(self):
        lease = self.lease_api('POST', '/leases', {
            'name': 'hpc', 'start_date': nova_base.lease_date(self.start),
            'end_date': nova_base.lease_date(self.end),
            'reservations': [{
                'resource_type': 'physical:host', 'min': 1, 'max': 1,
                'hosts': ['compute-2'], 'on_end': 'release'}]})['lease']
        self.run_engine(self.start + datetime.timedelta(minutes=1))
        server = self.boot(
            hints={'reservation': lease['reservations'][0]['id']})
        self.assertEqual(FIRST_IMAGE, server['image']['id'])
        self.run_engine(self.end + datetime.timedelta(minutes=1))
        self.assertEqual('TERMINATED', self.lease_api(
            'GET', '/leases/' + lease['id'])['lease']['status'])

        server = self.rebuild(server, OWNER)

        self.assertEqual(NEW_IMAGE, server['image']['id'])
        self.assertEqual('compute-2',
                         server['OS-EXT-SRV-ATTR:hypervisor_hostname'])
