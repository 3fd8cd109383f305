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

"""ReservationFilter's rule for preemptible requests.

On SQLite, PostgreSQL and MariaDB, with real nova HostStates and the filter's
clock fixed. compute-0 .. compute-3 are reservable, compute-4 and
compute-5 are the shared pool. The lead time is 600 s: a booking that
starts in 70 minutes reclaims its host in an hour.
"""

import datetime
import uuid

from nova import objects
import sqlalchemy as sa

from db import models
from nova_filters import reservation_filter
from reservation_ext import clock as clock_mod
from reservation_ext import conf as conf_mod
from tests import base
from tests import bookings
from tests import fixtures
from tests.functional import test_reservation_filter

NOW = datetime.datetime(2030, 1, 1, 12, 0)
MINUTE = datetime.timedelta(minutes=1)
ALLOCATIONS = models.HostAllocation.__table__
RECYCLING = models.RecyclingHost.__table__
REQUESTS = models.InstanceReservation.__table__
NAMES = test_reservation_filter.NAMES
EVERY_HOST = NAMES
PREEMPTIBLE = {'reservation:preemptible': 'true'}
RUNTIME = 'reservation:preemptible_runtime'
HOUR = 60 * MINUTE


class PreemptibleHosts(test_reservation_filter.FilterHosts):
    """The filter's hosts, with bookings made straight in the leases DB."""

    now = NOW

    def setUp(self):
        super().setUp()
        self.flags(preemption_lead_time=600, group='reservation')

    def flags(self, **kwargs):
        group = kwargs.pop('group')
        for name, value in kwargs.items():
            conf_mod.CONF.set_override(name, value, group=group)
            self.addCleanup(conf_mod.CONF.clear_override, name, group=group)

    def book(self, name, start, minutes=60, whole_host=True,
             status='pending'):
        """A reservation in ``status`` booking ``name`` from ``start``."""
        with self.writer() as session:
            return bookings.insert(
                session, self.host_ids[name], start, minutes, whole_host,
                status, size=(0, 0, 0) if whole_host else (1, 512, 0))[1]


class _PreemptibleFilterTests(PreemptibleHosts):

    def passing(self, extra_specs=PREEMPTIBLE, **hints):
        spec = objects.RequestSpec(
            project_id='other', scheduler_hints={
                key: [value] for key, value in hints.items()},
            flavor=objects.Flavor(extra_specs=extra_specs))
        return [host.host for host in self.filter.filter_all(
            self.host_states, spec)]

    def test_a_preemptible_request_passes_idle_reservable_hosts(self):
        self.assertEqual(EVERY_HOST, self.passing())

    def test_the_hint_makes_a_request_preemptible_too(self):
        self.assertEqual(EVERY_HOST, self.passing({}, preemptible='True'))
        self.assertEqual(['compute-4', 'compute-5'],
                         self.passing({}, preemptible='false'))

    def test_a_host_whose_whole_host_booking_runs_is_closed(self):
        self.book('compute-0', NOW - 10 * MINUTE, status='active')
        self.assertNotIn('compute-0', self.passing())

    def test_a_booking_within_the_lead_time_closes_its_host(self):
        self.book('compute-0', NOW + 9 * MINUTE)
        self.book('compute-1', NOW + 9 * MINUTE, whole_host=False)
        self.book('compute-2', NOW + 11 * MINUTE)
        self.assertEqual(['compute-2', 'compute-3', 'compute-4',
                          'compute-5'], self.passing())

    def test_the_cleaning_time_widens_the_lead_time(self):
        self.flags(cleaning_time=5, group='reservation')
        self.book('compute-2', NOW + 14 * MINUTE)
        self.book('compute-3', NOW - 64 * MINUTE, status='active')
        self.assertEqual(['compute-0', 'compute-1', 'compute-4',
                          'compute-5'], self.passing())

    def test_a_running_slice_leaves_its_host_open(self):
        self.book('compute-0', NOW - 10 * MINUTE, whole_host=False,
                  status='active')
        self.assertEqual(EVERY_HOST, self.passing())

    def test_a_free_seat_of_a_running_capacity_reservation_closes_its_host(
            self):
        for name, server_id in (('compute-0', None), ('compute-1', 'vm')):
            reservation_id = self.book(name, NOW - 10 * MINUTE,
                                       whole_host=False, status='active')
            with self.writer() as session:
                session.execute(sa.insert(REQUESTS).values(
                    id=reservation_id, reservation_id=reservation_id,
                    vcpus=1, memory_mb=512, disk_gb=0, amount=1))
                session.execute(sa.update(ALLOCATIONS).where(
                    ALLOCATIONS.c.reservation_id == reservation_id).values(
                        server_id=server_id))
        self.assertEqual(EVERY_HOST[1:], self.passing())

    def test_a_recycling_or_unreservable_host_is_closed(self):
        with self.writer() as session:
            session.execute(sa.insert(RECYCLING).values(
                host_id=self.host_ids['compute-1'],
                reservation_id=str(uuid.uuid4()), check_at=NOW))
            session.execute(sa.update(models.ComputeHost.__table__).where(
                models.ComputeHost.hypervisor_hostname == 'compute-2')
                .values(reservable=False))
        self.assertEqual(['compute-0', 'compute-3', 'compute-4',
                          'compute-5'], self.passing())

    def statements(self):
        """The statements sent while in use; SQLite's BEGINs left out."""
        statements = self.useFixture(fixtures.Statements(self.engine))
        return lambda: [statement for statement in statements.statements
                        if statement != 'BEGIN']

    def test_the_closed_hosts_are_read_once_then_only_their_generation(
            self):
        self.book('compute-0', NOW + 5 * MINUTE)
        sent = self.statements()
        self.passing()
        # The generation, the closed hosts, the reclaim times, when they
        # may change.
        self.assertEqual(4, len(sent()), sent())
        self.assertEqual(EVERY_HOST[1:], self.passing())
        self.assertEqual(5, len(sent()), sent())
        self.assertIn('booking_state', sent()[-1])

    def test_a_booking_made_since_the_last_request_is_seen(self):
        self.assertEqual(EVERY_HOST, self.passing())
        self.book('compute-1', NOW + 5 * MINUTE)
        self.assertNotIn('compute-1', self.passing())

    def test_a_host_closes_when_its_booking_comes_within_the_lead_time(
            self):
        clock = clock_mod.ManualClock(NOW)
        self.filter = reservation_filter.ReservationFilter(clock=clock)
        self.book('compute-0', NOW + 30 * MINUTE)
        self.assertEqual(EVERY_HOST, self.passing())
        clock.advance(minutes=19, seconds=59)
        self.assertEqual(EVERY_HOST, self.passing())
        clock.advance(seconds=1)
        self.assertEqual(EVERY_HOST[1:], self.passing())

    def test_a_host_opens_again_when_its_booking_ends(self):
        clock = clock_mod.ManualClock(NOW)
        self.filter = reservation_filter.ReservationFilter(clock=clock)
        self.book('compute-0', NOW - 10 * MINUTE, status='active')
        self.assertEqual(EVERY_HOST[1:], self.passing())
        clock.advance(minutes=50)
        self.assertEqual(EVERY_HOST, self.passing())

    def test_a_declared_runtime_passes_only_hosts_whose_reclaim_comes_after(
            self):
        self.book('compute-0', NOW + 70 * MINUTE)
        self.book('compute-1', NOW + 130 * MINUTE, whole_host=False)
        self.book('compute-2', NOW + 190 * MINUTE)
        self.assertEqual(EVERY_HOST, self.passing(
            dict(PREEMPTIBLE, **{RUNTIME: '3600'})))
        self.assertEqual(['compute-1', 'compute-2', 'compute-3',
                          'compute-4', 'compute-5'], self.passing(
            dict(PREEMPTIBLE, **{RUNTIME: '3601'})))
        self.assertEqual(['compute-2', 'compute-3', 'compute-4',
                          'compute-5'], self.passing(
            preemptible='true', preemptible_runtime='7300'))

    def test_without_a_runtime_a_host_booked_soon_still_passes(self):
        self.book('compute-0', NOW + 11 * MINUTE)
        self.assertEqual(EVERY_HOST, self.passing())
        self.assertEqual(EVERY_HOST[1:], self.passing(
            dict(PREEMPTIBLE, **{RUNTIME: '61'})))

    def test_the_hint_s_runtime_wins_over_the_flavor_s(self):
        self.book('compute-0', NOW + 70 * MINUTE)
        flavor = dict(PREEMPTIBLE, **{RUNTIME: '7200'})
        self.assertEqual(EVERY_HOST[1:], self.passing(flavor))
        self.assertEqual(EVERY_HOST, self.passing(
            flavor, preemptible_runtime='1800'))

    def test_a_runtime_past_the_horizon_needs_a_host_free_within_it(self):
        self.flags(preemptible_weigher_horizon=2 * 3600,
                   group='reservation')
        # Reclaimed 5 minutes before the horizon's end, 5 after.
        self.book('compute-0', NOW + 125 * MINUTE)
        self.book('compute-1', NOW + 135 * MINUTE)
        self.assertEqual(EVERY_HOST[1:], self.passing(
            preemptible='true', preemptible_runtime=str(30 * 24 * 3600)))

    def test_the_seconds_left_count_down_while_the_answer_is_kept(self):
        clock = clock_mod.ManualClock(NOW)
        self.filter = reservation_filter.ReservationFilter(clock=clock)
        self.book('compute-0', NOW + 70 * MINUTE)
        sent = self.statements()
        self.assertEqual(EVERY_HOST, self.passing(
            preemptible='true', preemptible_runtime='3600'))
        clock.advance(seconds=30)
        self.assertEqual(EVERY_HOST[1:], self.passing(
            preemptible='true', preemptible_runtime='3600'))
        self.assertEqual(EVERY_HOST, self.passing(
            preemptible='true', preemptible_runtime='3570'))
        # Read once, then only the generation.
        self.assertEqual(6, len(sent()), sent())

    def test_a_flavor_s_bad_runtime_counts_as_none(self):
        self.book('compute-0', NOW + 70 * MINUTE)
        for bad in ('soon', '0', '-5', str(10 ** 9)):
            self.assertEqual(EVERY_HOST, self.passing(
                dict(PREEMPTIBLE, **{RUNTIME: bad})))

    def test_a_reservation_hint_wins_over_preemptible(self):
        self.assertEqual([], self.passing(reservation=str(uuid.uuid4())))


class PreemptibleFilterSQLiteTest(_PreemptibleFilterTests, base.DBTestCase):
    pass


class PreemptibleFilterPostgreSQLTest(_PreemptibleFilterTests,
                                      base.PostgreSQLTestCase):
    pass


class PreemptibleFilterMySQLTest(_PreemptibleFilterTests,
                                 base.MySQLTestCase):
    pass
