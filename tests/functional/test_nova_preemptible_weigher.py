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

"""The ReservationWeigher in Nova's harness: preemptibles where they last.

Real nova-api, conductor and scheduler with ReservationFilter, Nova's own
weighers and the ReservationWeigher, Placement and fake computes.
compute-1 (2 vCPUs) is an ordinary host, too small for the 4-vCPU
flavor of these tests; compute-2, compute-3 and compute-4 (the largest,
where Nova's RAM weigher alone puts a server) are reservable.
"""

import datetime

from reservation_ext import clock as clock_mod
from tests.functional import nova_base

HOUR = datetime.timedelta(hours=1)
HOST_KEY = 'OS-EXT-SRV-ATTR:hypervisor_hostname'
RESERVABLE = ('compute-2', 'compute-3', 'compute-4')
WEIGHER = 'nova_filters.reservation_weigher.ReservationWeigher'


class PreemptibleWeigherTest(nova_base.NovaTestCase):

    def setUp(self):
        self.flags(weight_classes=['nova.scheduler.weights.all_weighers',
                                   WEIGHER], group='filter_scheduler')
        super().setUp()
        for name in RESERVABLE:
            self.add_reservable_host(name)
        self.now = clock_mod.SYSTEM.now().replace(second=0, microsecond=0)
        self.large = self._create_flavor(
            memory_mb=1024, vcpu=4, disk=1, ephemeral=0,
            extra_spec={'reservation:preemptible': 'true'})

    def lease_host(self, host, starts_in):
        """A lease of ``host`` that starts ``starts_in`` from now."""
        start = self.now + starts_in
        self.lease_one_host('on-' + host, host, nova_base.lease_date(start),
                            nova_base.lease_date(start + HOUR))

    def host_of_a_preemptible_server(self):
        server = self.user_api(nova_base.OTHER).post_server({
            'server': self._build_server(flavor_id=self.large,
                                         networks='none')})
        return self._wait_for_state_change(server, 'ACTIVE')[HOST_KEY]

    def test_without_bookings_nova_s_own_weighers_choose(self):
        self.assertEqual('compute-4', self.host_of_a_preemptible_server())

    def test_a_preemptible_server_goes_where_the_next_booking_is_last(self):
        self.lease_host('compute-4', 2 * HOUR)
        self.lease_host('compute-3', 4 * HOUR)
        self.lease_host('compute-2', 6 * HOUR)
        self.assertEqual('compute-2', self.host_of_a_preemptible_server())

    def test_a_host_booked_soon_loses_to_hosts_booked_later_or_never(self):
        self.lease_host('compute-4', 2 * HOUR)
        self.assertIn(self.host_of_a_preemptible_server(),
                      ('compute-2', 'compute-3'))

    def test_a_booking_beyond_the_horizon_counts_as_none(self):
        self.flags(preemptible_weigher_horizon=3600, group='reservation')
        self.lease_host('compute-4', 3 * HOUR)
        self.lease_host('compute-3', HOUR)
        # compute-4 and compute-2 weigh alike; Nova's RAM weigher picks
        # the larger.
        self.assertEqual('compute-4', self.host_of_a_preemptible_server())
