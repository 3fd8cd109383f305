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

"""Seats of instance-capacity reservations: booking, claims, moves.

On SQLite, PostgreSQL and MariaDB, with the planner's real statements.
"""

import collections
from concurrent import futures

import sqlalchemy as sa

from db import api as db_api
from db import tables
from reservation_ext import clock as clock_mod
from reservation_ext import context
from reservation_ext import exceptions
from reservation_ext.planning import planner
from reservation_ext.planning import seats
from tests import base
from tests import fixtures
from tests.functional import concurrency
from tests.functional import test_planner as planning

at = planning.at
ALLOCATIONS = tables.ALLOCATIONS
# Every host has 8 vCPUs, 8192 MB and 100 GB.
SIZE = (3, 1024, 10)


def claim_one(reservation_id):
    """One boot's claim of one seat, in its own transaction; its outcome."""
    try:
        with db_api.writer(context.get_admin_context(),
                           clock_mod.SYSTEM) as session:
            seats.claim(session, reservation_id, 1)
    except exceptions.Conflict:
        return 'in use'
    except Exception as error:
        return repr(error)
    return 'claimed'


class SeatsMixin:

    def setUp(self):
        super().setUp()
        with self.writer() as session:
            self.hosts = planning.add_hosts(session, 9)

    writer = planning.PlannerMixin.writer
    allocations = planning.PlannerMixin.allocations
    generations = planning.PlannerMixin.generations

    def book(self, amount, affinity, start=0, end=10, size=SIZE, **kwargs):
        with self.writer() as session:
            reservation_id = planning.add_reservation(session)
            hosts = planner.allocate_slices(
                session, planner.Owner(reservation_id), at(start), at(end),
                size, planning.busy(), amount=amount, affinity=affinity,
                **kwargs)
        return reservation_id, hosts

    def claim(self, reservation_id, count):
        with self.writer() as session:
            return seats.claim(session, reservation_id, count)

    def seated(self, reservation_id):
        with self.writer() as session:
            return seats.servers(session, reservation_id)

    def test_affinity_puts_every_slice_on_one_host(self):
        _, hosts = self.book(2, True)
        self.assertEqual([self.hosts[0]] * 2, hosts)
        # Two more do not fit beside them: the next host takes all.
        _, hosts = self.book(2, True)
        self.assertEqual([self.hosts[1]] * 2, hosts)

    def test_anti_affinity_puts_each_slice_on_another_host(self):
        _, hosts = self.book(3, False)
        self.assertEqual(self.hosts[:3], hosts)

    def test_no_affinity_packs_the_lowest_hosts_first(self):
        _, hosts = self.book(5, None)
        self.assertEqual([self.hosts[0]] * 2 + [self.hosts[1]] * 2 +
                         [self.hosts[2]], hosts)

    def test_slices_that_do_not_all_fit_book_nothing(self):
        before = (self.allocations(), self.generations())
        error = self.assertRaises(exceptions.NotEnoughResources,
                                  self.book, 3, True)
        self.assertIn('3 instances of 3 vCPU(s)', str(error))
        self.assertIn('on one host', str(error))
        self.assertRaises(exceptions.NotEnoughResources, self.book, 10,
                          False)
        self.assertEqual(before, (self.allocations(), self.generations()))

    def test_one_server_slices_and_seats_never_over_book_a_host(self):
        with self.writer() as session:
            one = planner.allocate_slice(
                session, planner.Owner(planning.add_reservation(session)),
                at(0), at(10), (6, 1024, 10), planning.busy())
        _, hosts = self.book(1, None)
        self.assertEqual(self.hosts[0], one)
        self.assertEqual([self.hosts[1]], hosts)

    def test_a_claim_takes_free_seats_until_all_are_in_use(self):
        reservation_id, _ = self.book(3, None)
        token, taken = self.claim(reservation_id, 2)
        self.assertEqual(2, len(taken))
        error = self.assertRaises(exceptions.Conflict, self.claim,
                                  reservation_id, 2)
        self.assertIn('has 1 of its 3 instances free, 2 asked for',
                      str(error))
        self.claim(reservation_id, 1)
        error = self.assertRaises(exceptions.Conflict, self.claim,
                                  reservation_id, 1)
        self.assertEqual('All 3 instances of reservation %s are in use.'
                         % reservation_id, str(error))
        self.assertEqual(3, len(self.seated(reservation_id)))

    def test_a_claim_of_a_size_takes_only_the_seats_of_that_size(self):
        with self.writer() as session:
            reservation_id = planning.add_reservation(session)
            for size, amount in (((1, 512, 1), 2), (SIZE, 1)):
                planner.allocate_slices(
                    session, planner.Owner(reservation_id), at(0), at(10),
                    size, planning.busy(), amount=amount)
        token, [seat] = self.claim_sized(reservation_id, 1, SIZE)
        with self.writer() as session:
            self.assertEqual(SIZE, session.execute(sa.select(
                ALLOCATIONS.c.vcpus, ALLOCATIONS.c.memory_mb,
                ALLOCATIONS.c.disk_gb).where(
                    ALLOCATIONS.c.id == seat)).one()._tuple())
        self.assertRaises(exceptions.Conflict, self.claim_sized,
                          reservation_id, 1, SIZE)
        self.assertEqual(2, len(self.claim_sized(reservation_id, 2,
                                                 (1, 512, 1))[1]))

    def claim_sized(self, reservation_id, count, size):
        with self.writer() as session:
            return seats.claim(session, reservation_id, count, size)

    def test_bound_seats_stay_and_freed_claims_return(self):
        reservation_id, _ = self.book(2, False)
        token, taken = self.claim(reservation_id, 2)
        with self.writer() as session:
            seats.bind(session, token, taken[0], 'server-1')
            seats.free(session, token)
            [host] = seats.seat_hosts(session, reservation_id, 'server-1')
            # The freed seat of the claim counts no more.
            self.assertEqual({host}, seats.seat_hosts(
                session, reservation_id, 'server-x', taken))
        self.assertEqual(['server-1'], self.seated(reservation_id))
        with self.writer() as session:
            seats.free_server(session, 'server-1')
        self.assertEqual([], self.seated(reservation_id))

    def test_moving_slices_keeps_their_hosts_when_they_have_room(self):
        reservation_id, hosts = self.book(2, False)
        self.book(1, True, start=20, end=30, size=(8, 1024, 10))
        with self.writer() as session:
            planner.move_slices(session, reservation_id, at(0), at(15),
                                planning.busy(
                                    ignore_reservation=reservation_id))
        with self.writer() as session:
            error = self.assertRaises(
                exceptions.NotEnoughResources, planner.move_slices,
                session, reservation_id, at(0), at(25),
                planning.busy(ignore_reservation=reservation_id))
            self.assertIn('has no room', str(error))
            self.assertEqual(at(20), planner.latest_slices_end(
                session, reservation_id, at(0),
                planning.busy(ignore_reservation=reservation_id)))
        with self.engine.connect() as conn:
            self.assertEqual({(at(0), at(15))}, set(conn.execute(
                sa.select(ALLOCATIONS.c.start_date, ALLOCATIONS.c.end_date)
                .where(ALLOCATIONS.c.reservation_id == reservation_id))))

    def assert_claimed_once_each(self, reservation_id, outcomes):
        self.assertEqual({'claimed': 3, 'in use': len(outcomes) - 3},
                         dict(collections.Counter(outcomes)))
        self.assertEqual(3, len(set(self.seated(reservation_id))))


class TestSeats(SeatsMixin, base.DBTestCase):
    pass


class _OnServer(SeatsMixin):
    """Processes on the class's database server."""

    def test_concurrent_boots_take_every_free_seat_once(self):
        reservation_id, _ = self.book(3, None)
        url = self.engine.url.render_as_string(hide_password=False)
        outcomes = concurrency.run_in_processes(
            url, claim_one, [[reservation_id] * 2 for _ in range(8)])
        self.assert_claimed_once_each(reservation_id, outcomes)


class TestSeatsPostgreSQL(_OnServer, base.PostgreSQLTestCase):
    pass


class TestSeatsMySQL(_OnServer, base.MySQLTestCase):
    pass


class TestSeatThreads(SeatsMixin, base.TestCase):
    """Threads on an SQLite file: its writers take turns."""

    def setUp(self):
        self.engine = self.useFixture(fixtures.Database()).engine
        self.ctx = context.get_admin_context()
        super().setUp()

    def test_concurrent_boots_take_every_free_seat_once(self):
        reservation_id, _ = self.book(3, None)
        with futures.ThreadPoolExecutor(8) as executor:
            outcomes = list(executor.map(claim_one, [reservation_id] * 16))
        self.assert_claimed_once_each(reservation_id, outcomes)
