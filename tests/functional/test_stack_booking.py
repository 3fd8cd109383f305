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
does not fit books nothing and says what is missing. An update books the
same needs for another window (the plugin's own, without Heat).
"""

import sqlalchemy as sa

from db import tables
from reservation_ext import clock as clock_mod
from reservation_ext import exceptions
from reservation_ext.planning import planner
from reservation_ext.planning import seats
from reservation_ext.planning import stacks
from reservation_ext.planning import volume_capacity
from reservation_ext.plugins import heat_stack
from reservation_ext.stacks import needs
from reservation_ext.store import floating_ips as store_fips
from reservation_ext.store import stacks as store_stacks
from tests import base
from tests import fixtures
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


class StackUpdateMixin(StackBookingMixin):
    """The heat:stack plugin's update: the same needs, another window."""

    def setUp(self):
        super().setUp()
        conf = self.useFixture(fixtures.ReservationConf({
            ('reservation', 'volume_reservable_gb'): RESERVABLE_GB})).conf
        self.plugin = heat_stack.HeatStackPlugin(
            conf, clock_mod.ManualClock(planning.T0))

    def book_stack(self, window=WINDOW):
        """A stack of two smalls, 10 GB and an address, as the plugin books."""
        with self.writer() as session:
            reservation_id = planning.add_reservation(session)
            self.plugin.reserve(
                session, None, {'start_date': window[0],
                                'end_date': window[1]}, reservation_id, {
                    'template': '{}', 'parameters': {}, 'environment': None,
                    'on_end': 'delete', 'trust_id': 'trust',
                    'needs': needs.Needs({'m1.small': 2}, 10,
                                         {'public': ['address']}),
                    'booking': ([stacks.Servers('m1.small', (2, 2048, 20),
                                                2)], 10, [addresses(1)])})
        return reservation_id

    def windows(self, reservation_id):
        found = {}
        with self.writer() as session:
            for table in (tables.ALLOCATIONS, tables.FLOATINGIP_ALLOCATIONS):
                found[table.name] = set(session.execute(
                    sa.select(table.c.start_date, table.c.end_date).where(
                        table.c.reservation_id == reservation_id)).all())
        return found

    def update(self, reservation_id, status, window, **values):
        with self.writer() as session:
            self.plugin.update(session, None, {
                'start_date': window[0], 'end_date': window[1]},
                {'id': reservation_id, 'status': status}, values)

    def test_a_pending_stack_is_booked_anew_for_the_new_window(self):
        stack = self.book_stack()
        self.update(stack, 'pending', (at(20), at(30)))
        self.assertEqual({'host_allocations': {(at(20), at(30))},
                          'floatingip_allocations': {(at(20), at(30))}},
                         self.windows(stack))

    def test_a_started_stack_moves_on_its_hosts_and_addresses(self):
        stack = self.book_stack()
        before = self.booked()[stack]
        self.update(stack, 'active', (at(0), at(15)))
        self.assertEqual({'host_allocations': {(at(0), at(15))},
                          'floatingip_allocations': {(at(0), at(15))}},
                         self.windows(stack))
        self.assertEqual(before, self.booked()[stack])

    def test_a_window_that_does_not_fit_changes_nothing(self):
        stack = self.book_stack()
        self.book([], 0, [addresses(4)], window=(at(20), at(30)))
        self.assertRaises(exceptions.NotEnoughResources, self.update,
                          stack, 'pending', (at(20), at(30)))
        self.assertEqual({'host_allocations': {WINDOW},
                          'floatingip_allocations': {WINDOW}},
                         self.windows(stack))

    def test_the_request_itself_cannot_change(self):
        stack = self.book_stack()
        error = self.assertRaises(exceptions.InvalidInput, self.update,
                                  stack, 'pending', WINDOW, template='x')
        self.assertEqual('template', error.field)


class TestStackUpdate(StackUpdateMixin, base.DBTestCase):
    """On SQLite."""


class TestStackUpdatePostgreSQL(StackUpdateMixin, base.PostgreSQLTestCase):
    """On PostgreSQL."""


class TestStackUpdateMySQL(StackUpdateMixin, base.MySQLTestCase):
    """On MariaDB."""
