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

"""The booking of a stack's mixed needs, all or nothing.

Servers of two flavors, volume gigabytes and floating IPs in one
transaction, with the planners' real statements, on SQLite, PostgreSQL
and MariaDB: what another lease holds is never taken, and a need that
does not fit books nothing and says what is missing.
"""

import sqlalchemy as sa

from db import tables
from reservation_ext import exceptions
from reservation_ext.planning import planner
from reservation_ext.planning import seats
from reservation_ext.planning import stacks
from reservation_ext.planning import volume_capacity
from reservation_ext.store import floating_ips as store_fips
from reservation_ext.store import stacks as store_stacks
from tests import base
from tests.functional import test_planner as planning

at = planning.at
WINDOW = (at(0), at(10))
# Every host has 8 vCPUs, 8192 MB and 100 GB: two larges, or four smalls.
LARGE = stacks.Servers('m1.large', (4, 4096, 40), 2)
SMALL = stacks.Servers('m1.small', (2, 2048, 20), 4)
NETWORK = 'public-id'
RESERVABLE_GB = 100


def addresses(count):
    return stacks.Addresses('public', NETWORK, count)


class StackBookingMixin:

    writer = planning.PlannerMixin.writer
    allocations = planning.PlannerMixin.allocations

    def setUp(self):
        super().setUp()
        with self.writer() as session:
            self.hosts = planning.add_hosts(session, 3)
            for index in range(4):
                store_fips.register(session, {
                    'id': 'fip%d' % index, 'floating_network_id': NETWORK,
                    'subnet_id': 'subnet',
                    'floating_ip_address': '172.24.4.%d' % (10 + index)})

    def book(self, servers=(), volume_gb=0, fips=(), window=WINDOW):
        """Book a stack in one transaction; its reservation id."""
        with self.writer() as session:
            reservation_id = planning.add_reservation(session)
            # The volumes count for the lease's window.
            session.execute(sa.update(tables.LEASES).where(
                tables.LEASES.c.id == sa.select(
                    tables.RESERVATIONS.c.lease_id).where(
                        tables.RESERVATIONS.c.id == reservation_id)
                .scalar_subquery()).values(
                    start_date=window[0], end_date=window[1]))
            stacks.book(session, reservation_id, window,
                        (list(servers), volume_gb, list(fips)),
                        planning.busy(), (planner.AS_IS, RESERVABLE_GB))
            store_stacks.record_request(session, {
                'id': reservation_id, 'reservation_id': reservation_id,
                'template': '{}', 'parameters': '{}', 'on_end': 'delete',
                'servers': '[]', 'volume_gb': volume_gb,
                'floating_ips': '{}'})
        return reservation_id

    def booked(self):
        """``{reservation_id: (sizes of its slices, its addresses)}``."""
        with self.writer() as session:
            slices = session.execute(sa.select(
                tables.ALLOCATIONS.c.reservation_id,
                tables.ALLOCATIONS.c.vcpus)).all()
            fips = session.execute(sa.select(
                tables.FLOATINGIP_ALLOCATIONS.c.reservation_id,
                tables.FLOATINGIP_ALLOCATIONS.c.floatingip_id)).all()
        out = {}
        for reservation_id, vcpus in slices:
            out.setdefault(reservation_id, ([], []))[0].append(vcpus)
        for reservation_id, fip in fips:
            out.setdefault(reservation_id, ([], []))[1].append(fip)
        return {key: (sorted(a), sorted(b)) for key, (a, b) in out.items()}

    def held_gb(self, window=WINDOW):
        with self.writer() as session:
            return volume_capacity.reserved_gb(session, *window,
                                               planning.busy())

    def test_servers_of_two_flavors_volumes_and_addresses_book_together(
            self):
        stack = self.book([LARGE, SMALL], 30, [addresses(2)])
        self.assertEqual({stack: ([2] * 4 + [4] * 2, ['fip0', 'fip1'])},
                         self.booked())
        self.assertEqual(30, self.held_gb())
        # Two larges fill the first host, the smalls take the second.
        with self.writer() as session:
            self.assertEqual({'host0': 2, 'host1': 4},
                             seats.hosts(session, stack))

    def test_a_second_stack_takes_what_the_first_left(self):
        first = self.book([LARGE, SMALL], 60, [addresses(3)])
        second = self.book([SMALL], 40, [addresses(1)])
        self.assertEqual(([2] * 4, ['fip3']), self.booked()[second])
        self.assertEqual(100, self.held_gb())
        self.assertIn(first, self.booked())

    def test_servers_that_do_not_fit_book_nothing_and_say_how_many(self):
        self.book([SMALL, SMALL])
        before = self.booked()
        error = self.assertRaises(
            exceptions.NotEnoughResources, self.book,
            [stacks.Servers('m1.large', (4, 4096, 40), 5)], 10,
            [addresses(1)])
        self.assertEqual(
            '3 of 5 server(s) of flavor m1.large do not fit between '
            '2030-01-01 00:00 and 2030-01-01 10:00.', str(error))
        self.assertEqual(before, self.booked())

    def test_a_later_need_that_does_not_fit_rolls_back_the_servers(self):
        before = (self.booked(), self.held_gb())
        error = self.assertRaises(exceptions.NotEnoughResources, self.book,
                                  [LARGE], 10, [addresses(5)])
        self.assertIn('1 of 5 floating IP(s) of network public are not '
                      'free', str(error))
        self.assertRaises(exceptions.NotEnoughResources, self.book,
                          [LARGE], RESERVABLE_GB + 1)
        self.assertEqual(before, (self.booked(), self.held_gb()))

    def test_stack_volumes_count_against_volume_reservations(self):
        self.book(volume_gb=70)
        self.assertRaises(exceptions.NotEnoughResources, self.book,
                          volume_gb=31)
        # Another window is free again.
        self.book(volume_gb=100, window=(at(10), at(20)))


class TestStackBooking(StackBookingMixin, base.DBTestCase):
    """On SQLite."""


class TestStackBookingPostgreSQL(StackBookingMixin, base.PostgreSQLTestCase):
    """On PostgreSQL."""


class TestStackBookingMySQL(StackBookingMixin, base.MySQLTestCase):
    """On MariaDB."""
