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

"""ReservationWeigher's raw weights: seconds until a host's reclaim.

On SQLite, PostgreSQL and MariaDB, with real nova HostStates and the
weigher's clock fixed. compute-0 .. compute-3 are reservable, compute-4
and compute-5 are the shared pool. The lead time is 600 s, the horizon
six hours.
"""

import datetime

from nova import objects
from nova.scheduler import weights

from nova_filters import reservation_weigher
from reservation_ext import clock as clock_mod
from tests import base
from tests import fixtures
from tests.functional import test_preemptible_filter

NOW = test_preemptible_filter.NOW
MINUTE = datetime.timedelta(minutes=1)
HOUR = datetime.timedelta(hours=1)
NAMES = test_preemptible_filter.NAMES
HORIZON = 6 * 3600.0
PREEMPTIBLE = test_preemptible_filter.PREEMPTIBLE


class _WeigherTests(test_preemptible_filter.PreemptibleHosts):

    def setUp(self):
        super().setUp()
        self.flags(preemptible_weigher_horizon=int(HORIZON),
                   group='reservation')
        self.weigher = reservation_weigher.ReservationWeigher(
            clock=clock_mod.ManualClock(NOW))

    def weights(self, extra_specs=PREEMPTIBLE, **hints):
        """``{hostname: raw weight}`` of every host for one request."""
        spec = objects.RequestSpec(
            project_id='other', scheduler_hints={
                key: [value] for key, value in hints.items()},
            flavor=objects.Flavor(extra_specs=extra_specs))
        weighed = [weights.WeighedHost(host, 0.0)
                   for host in self.host_states]
        return dict(zip(NAMES, self.weigher.weigh_objects(weighed, spec)))

    def test_hosts_without_bookings_weigh_the_horizon(self):
        self.assertEqual(dict.fromkeys(NAMES, HORIZON), self.weights())

    def test_a_host_weighs_the_seconds_until_the_engine_reclaims_there(self):
        self.book('compute-0', NOW + 2 * HOUR)
        self.book('compute-1', NOW + HOUR, whole_host=False)
        found = self.weights()
        self.assertEqual(2 * 3600.0 - 600, found['compute-0'])
        self.assertEqual(3600.0 - 600, found['compute-1'])
        self.assertEqual(HORIZON, found['compute-2'])

    def test_the_first_of_a_hosts_bookings_decides(self):
        self.book('compute-0', NOW + 3 * HOUR)
        self.book('compute-0', NOW + HOUR)
        self.assertEqual(3600.0 - 600, self.weights()['compute-0'])

    def test_the_cleaning_time_brings_the_reclaim_forward(self):
        self.flags(cleaning_time=5, group='reservation')
        self.book('compute-0', NOW + HOUR)
        self.assertEqual(3600.0 - 600 - 300, self.weights()['compute-0'])

    def test_a_booking_reclaimed_beyond_the_horizon_counts_as_none(self):
        self.book('compute-0', NOW + 6 * HOUR + 10 * MINUTE)
        self.book('compute-1', NOW + 6 * HOUR + 11 * MINUTE)
        found = self.weights()
        self.assertEqual(HORIZON, found['compute-0'])
        self.assertEqual(HORIZON, found['compute-1'])

    def test_a_booking_that_started_counts_as_none(self):
        self.book('compute-0', NOW - 10 * MINUTE, whole_host=False,
                  status='active')
        self.assertEqual(HORIZON, self.weights()['compute-0'])

    def test_a_booking_within_the_lead_time_weighs_nothing(self):
        self.book('compute-0', NOW + 5 * MINUTE)
        self.assertEqual(0.0, self.weights()['compute-0'])

    def test_the_reclaim_times_are_read_once_then_only_their_generation(
            self):
        for name in NAMES[:4]:
            self.book(name, NOW + HOUR)
        statements = self.useFixture(fixtures.Statements(self.engine))

        def selects():
            return [statement for statement in statements.statements
                    if statement.lstrip().startswith('SELECT')]
        self.weights()
        # The generation, the reclaim times, when they may change.
        self.assertEqual(3, len(selects()), selects())
        self.assertEqual(3600.0 - 600, self.weights()['compute-3'])
        self.assertEqual(4, len(selects()), selects())
        self.assertIn('booking_state', selects()[-1])

    def test_a_new_booking_that_comes_first_moves_the_reclaim(self):
        self.book('compute-0', NOW + 3 * HOUR)
        self.assertEqual(3 * 3600.0 - 600, self.weights()['compute-0'])
        self.book('compute-0', NOW + HOUR)
        self.assertEqual(3600.0 - 600, self.weights()['compute-0'])

    def test_the_next_booking_counts_once_the_first_has_started(self):
        clock = clock_mod.ManualClock(NOW)
        self.weigher = reservation_weigher.ReservationWeigher(clock=clock)
        self.book('compute-0', NOW + HOUR, whole_host=False)
        self.book('compute-0', NOW + 3 * HOUR, whole_host=False)
        self.assertEqual(3600.0 - 600, self.weights()['compute-0'])
        clock.advance(hours=1)
        self.assertEqual(2 * 3600.0 - 600, self.weights()['compute-0'])

    def test_any_other_request_weighs_nothing_and_reads_nothing(self):
        self.book('compute-0', NOW + HOUR)
        statements = self.useFixture(fixtures.Statements(self.engine))
        for found in (self.weights({}), self.weights(reserved='True'),
                      self.weights(PREEMPTIBLE, reservation='r1')):
            self.assertEqual(dict.fromkeys(NAMES, 0.0), found)
        self.assertEqual([], statements.statements)


class PreemptibleWeigherSQLiteTest(_WeigherTests, base.DBTestCase):
    pass


class PreemptibleWeigherPostgreSQLTest(_WeigherTests,
                                       base.PostgreSQLTestCase):
    pass


class PreemptibleWeigherMySQLTest(_WeigherTests, base.MySQLTestCase):
    pass
