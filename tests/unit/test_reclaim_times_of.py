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

"""When the preemptibles of given hosts are reclaimed at the latest.

:func:`reservation_ext.planning.preemptible_placement.reclaim_times_of`,
which the server views call.
"""

import datetime


from db import api as db_api
from reservation_ext import clock as clock_mod
from reservation_ext.planning import preemptible_placement
from reservation_ext.store import hosts as store_hosts
from tests import base
from tests import bookings

NOW = datetime.datetime(2030, 1, 1, 12, 0)
MINUTE = datetime.timedelta(minutes=1)


class ReclaimAfterTest(base.DBTestCase):

    def setUp(self):
        super().setUp()
        self.clock = clock_mod.ManualClock(NOW)
        with db_api.writer(self.ctx, self.clock) as session:
            self.hosts = {name: store_hosts.add_host(session, {
                'hypervisor_hostname': name, 'service_name': name,
                'vcpus': 8, 'memory_mb': 8192, 'local_gb': 100})
                for name in ('compute-1', 'compute-2')}

    def book(self, host, start, expires_at=None):
        """A booking of ``host`` for an hour (a proposal's hold: expiring)."""
        with db_api.writer(self.ctx, self.clock) as session:
            bookings.insert(session, self.hosts[host], start,
                            expires_at=expires_at)

    def reclaim_after(self, hostnames, lead_time=600, cleaning_time=0):
        with db_api.context_manager.reader.using(self.ctx) as session:
            return preemptible_placement.reclaim_times_of(
                session, NOW, hostnames, lead_time, cleaning_time)

    def test_the_next_booking_less_lead_and_cleaning_time_is_the_deadline(
            self):
        self.book('compute-1', NOW + 300 * MINUTE)
        self.book('compute-1', NOW + 120 * MINUTE)
        self.assertEqual({'compute-1': NOW + 110 * MINUTE},
                         self.reclaim_after(['compute-1']))
        self.assertEqual({'compute-1': NOW + 95 * MINUTE},
                         self.reclaim_after(['compute-1'], cleaning_time=15))

    def test_started_bookings_and_proposals_holds_set_no_deadline(self):
        self.book('compute-1', NOW - MINUTE)
        self.book('compute-2', NOW + 60 * MINUTE,
                  expires_at=NOW + 5 * MINUTE)
        self.assertEqual({}, self.reclaim_after(['compute-1', 'compute-2']))

    def test_only_the_hosts_asked_for_and_known_are_there(self):
        self.book('compute-1', NOW + 60 * MINUTE)
        self.book('compute-2', NOW + 60 * MINUTE)
        self.assertEqual({'compute-2': NOW + 50 * MINUTE},
                         self.reclaim_after(['compute-2', 'shared-1', None]))
        self.assertEqual({}, self.reclaim_after([]))

    def test_it_agrees_with_the_reclaim_times_of_every_host(self):
        self.book('compute-1', NOW + 60 * MINUTE)
        self.book('compute-2', NOW + 90 * MINUTE)
        with db_api.context_manager.reader.using(self.ctx) as session:
            every = preemptible_placement.reclaim_times(
                session, NOW, NOW + 1000 * MINUTE, 600, 5)
        self.assertEqual(every, self.reclaim_after(
            ['compute-1', 'compute-2'], cleaning_time=5))
