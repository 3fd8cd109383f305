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

"""The planner's search and bookings, on SQLite, PostgreSQL and MariaDB."""

import datetime
import random
import uuid

from oslo_db import exception as db_exc
import sqlalchemy as sa

from db import api as db_api
from db import host_gaps
from db import models
from reservation_ext import clock as clock_mod
from reservation_ext import exceptions
from reservation_ext.planning import capabilities
from reservation_ext.planning import host_capacity
from reservation_ext.planning import planner
from reservation_ext.store import allocations as store_allocations
from reservation_ext.store import hosts as store_hosts
from tests import base

T0 = datetime.datetime(2030, 1, 1)
GPU = '["=", "$gpu", "true"]'
HOSTS = models.ComputeHost.__table__
ALLOCATIONS = models.HostAllocation.__table__


def at(hours):
    return T0 + datetime.timedelta(hours=hours)


def add_hosts(session, count, first=0):
    """Add hosts ``first`` to ``first + count - 1``; return their ids.

    Every third host has a gpu.
    """
    return [store_hosts.add_host(
        session, {'hypervisor_hostname': 'host%d' % i, 'vcpus': 8,
                  'memory_mb': 8192, 'local_gb': 100},
        {'gpu': 'true'} if i % 3 == 0 else {})
        for i in range(first, first + count)]


def busy(cleaning_time=0, **ignore):
    """The planner's busy test at T0."""
    return planner.Busy(T0, cleaning_time, **ignore)


def compiled(query):
    """A resource_properties query as the planner takes it (conditions)."""
    return [capabilities.compile(query, 'resource_properties')]


def add_reservation(session):
    """A lease with one physical:host reservation; the reservation id."""
    lease_id, reservation_id = str(uuid.uuid4()), str(uuid.uuid4())
    session.execute(sa.insert(models.Lease.__table__).values(
        id=lease_id, name=lease_id, project_id='p', start_date=T0,
        end_date=T0, status='PENDING'))
    session.execute(sa.insert(models.Reservation.__table__).values(
        id=reservation_id, lease_id=lease_id,
        resource_type='physical:host', status='pending'))
    return reservation_id


def overlapping_bookings(connection, table, resource):
    """Pairs of rows of ``table`` whose windows overlap on a resource.

    ``resource`` is the column naming the booked resource.
    """
    a, b = table.alias('a'), table.alias('b')
    return connection.execute(sa.select(a.c.id, b.c.id).where(
        a.c[resource] == b.c[resource], a.c.id < b.c.id,
        a.c.start_date < b.c.end_date, b.c.start_date < a.c.end_date)).all()


def overlapping_allocations(connection):
    """Pairs of allocations of the same host whose windows overlap."""
    return overlapping_bookings(connection, ALLOCATIONS, 'host_id')


class PlannerMixin:

    def setUp(self):
        super().setUp()
        with self.writer() as session:
            self.hosts = add_hosts(session, 9)
        self.gpu_hosts = self.hosts[::3]

    def writer(self):
        return db_api.writer(self.ctx, clock_mod.ManualClock(T0))

    def allocate(self, start, end, min_count=1, max_count=1, query=None,
                 cleaning_time=0, **kwargs):
        with self.writer() as session:
            reservation_id = add_reservation(session)
            booked = planner.allocate_hosts(
                session, planner.Owner(reservation_id), at(start), at(end),
                min_count, max_count, busy(cleaning_time),
                conditions=compiled(query), **kwargs)
        return reservation_id, booked

    def free(self, start, end, query=None, busy=busy(), **kwargs):
        with db_api.context_manager.reader.using(self.ctx) as session:
            return [host_id for host_id, _generation in
                    planner.find_free_hosts(session, at(start), at(end),
                                            busy, conditions=compiled(query),
                                            **kwargs)]

    def generations(self):
        with self.engine.connect() as conn:
            return dict(conn.execute(
                sa.select(HOSTS.c.id, HOSTS.c.generation)).all())

    def allocations(self):
        with self.engine.connect() as conn:
            return conn.execute(sa.select(
                ALLOCATIONS.c.reservation_id, ALLOCATIONS.c.host_id,
                ALLOCATIONS.c.start_date, ALLOCATIONS.c.end_date)).all()

    def test_search_matches_model(self):
        rng = random.Random(42)
        booked = []
        for _ in range(40):
            start = rng.randrange(0, 200)
            end = start + rng.randrange(1, 48)
            query = rng.choice([None, GPU])
            try:
                _id, chosen = self.allocate(start, end, 1, rng.randint(1, 3),
                                            query=query, cleaning_time=30)
            except exceptions.NotEnoughResources:
                continue
            booked.extend((host, at(start), at(end)) for host in chosen)
        for _ in range(60):
            start = rng.randrange(0, 220)
            end = start + rng.randrange(1, 72)
            cleaning = rng.choice([0, 30, 120])
            query = rng.choice([None, GPU])
            margin = datetime.timedelta(minutes=cleaning)
            candidates = self.gpu_hosts if query else self.hosts
            expected = [h for h in candidates if not any(
                host == h and a < at(end) + margin and b > at(start) - margin
                for host, a, b in booked)]
            with self.subTest(start=start, end=end, cleaning=cleaning,
                              query=query):
                self.assertEqual(expected, self.free(
                    start, end, query=query, busy=busy(cleaning)))
        with self.engine.connect() as conn:
            self.assertEqual([], overlapping_allocations(conn))

    def test_touching_windows_do_not_overlap(self):
        _id, (host,) = self.allocate(10, 12, host_ids=[self.hosts[0]])
        self.assertIn(host, self.free(12, 14))
        self.assertIn(host, self.free(8, 10))
        self.assertNotIn(host, self.free(11, 13))
        self.assertNotIn(host, self.free(9, 11))
        self.assertNotIn(host, self.free(0, 30))

    def test_cleaning_time_pads_both_sides(self):
        _id, (host,) = self.allocate(10, 12, host_ids=[self.hosts[0]])
        self.assertIn(host, self.free(13, 14, busy=busy(60)))
        self.assertNotIn(host, self.free(13, 14, busy=busy(61)))
        self.assertIn(host, self.free(8, 9, busy=busy(60)))
        self.assertNotIn(host, self.free(8, 9, busy=busy(61)))

    def test_instance_allocations_make_a_host_busy(self):
        with self.writer() as session:
            session.execute(sa.insert(ALLOCATIONS).values(
                id=str(uuid.uuid4()), host_id=self.hosts[1],
                reservation_id=add_reservation(session), start_date=at(0),
                end_date=at(10), whole_host=False, vcpus=1))
        self.assertNotIn(self.hosts[1], self.free(5, 6))

    def test_query_host_ids_max_count_and_order(self):
        self.assertEqual(self.hosts, self.free(0, 1))
        self.assertEqual(self.hosts[:2], self.free(0, 1, max_count=2))
        self.assertEqual(self.gpu_hosts, self.free(0, 1, query=GPU))
        self.assertEqual(self.hosts[4:6], self.free(
            0, 1, host_ids=self.hosts[4:6]))

    def test_blazars_json_equality_books_a_host_by_name(self):
        query = '["==", "$hypervisor_hostname", "host4"]'
        self.assertEqual([self.hosts[4]], self.free(0, 1, query=query))
        _, booked = self.allocate(0, 10, 1, 1, query=query)
        self.assertEqual([self.hosts[4]], booked)
        self.assertEqual([], self.free(5, 6, query=query))
        others = '["!=", "$hypervisor_hostname", "host4"]'
        self.assertEqual(sorted(set(self.hosts) - {self.hosts[4]}),
                         sorted(self.free(0, 1, query=others)))

    def test_not_reservable_hosts_are_never_free(self):
        with self.writer() as session:
            session.execute(sa.update(HOSTS).where(
                HOSTS.c.id == self.hosts[0]).values(reservable=False))
        self.assertNotIn(self.hosts[0], self.free(0, 1))

    def test_ignored_reservation_does_not_count(self):
        reservation_id, (host,) = self.allocate(0, 10)
        self.assertNotIn(host, self.free(5, 15))
        self.assertIn(host, self.free(
            5, 15, busy=busy(ignore_reservation=reservation_id)))

    def hold(self, start, end, expires_at, host_ids):
        proposal_id = str(uuid.uuid4())
        with self.writer() as session:
            session.execute(sa.insert(models.Proposal.__table__).values(
                id=proposal_id, request_id=proposal_id, project_id='p',
                start_date=at(start), end_date=at(end),
                expires_at=expires_at, reservations='[]', volume_gb=0))
            planner.allocate_hosts(
                session, planner.Owner.hold(proposal_id, 0, expires_at),
                at(start), at(end), 1, len(host_ids), busy(),
                host_ids=host_ids)
        return proposal_id

    def test_holds_count_until_they_expire(self):
        self.hold(0, 10, at(1), [self.hosts[0]])
        self.assertNotIn(self.hosts[0], self.free(5, 6))
        expired = planner.Busy(at(1))
        self.assertIn(self.hosts[0], self.free(5, 6, busy=expired))
        with self.writer() as session:
            self.assertEqual([self.hosts[0]], planner.allocate_hosts(
                session, planner.Owner(add_reservation(session)), at(5),
                at(6), 1, 1, expired, host_ids=[self.hosts[0]]))

    def test_ignored_proposal_does_not_count(self):
        proposal_id = self.hold(0, 10, at(1), self.hosts[:2])
        self.assertEqual(self.hosts[2:], self.free(5, 6))
        self.assertEqual(self.hosts, self.free(
            5, 6, busy=busy(ignore_proposal=proposal_id)))
        with self.writer() as session:
            self.assertEqual(self.hosts[:2], planner.held_hosts(
                session, proposal_id, 0))
            store_allocations.drop_holds(session, [proposal_id])
        self.assertEqual(self.hosts, self.free(5, 6))
        self.assertEqual([2, 2], [self.generations()[h]
                                  for h in self.hosts[:2]])

    def test_bad_query_is_invalid_input(self):
        error = self.assertRaises(exceptions.InvalidInput, self.free, 0, 1,
                                  query='["=", "gpu"]')
        self.assertEqual('resource_properties', error.field)

    def test_allocate_books_hosts_and_bumps_generations(self):
        reservation_id, booked = self.allocate(0, 10, 2, 3, query=GPU)
        self.assertEqual(self.gpu_hosts, booked)
        self.assertEqual(
            sorted((reservation_id, host, at(0), at(10)) for host in booked),
            sorted(self.allocations()))
        generations = self.generations()
        self.assertEqual([1] * 3, [generations[h] for h in booked])
        self.assertEqual(0, generations[self.hosts[1]])

    def test_not_enough_hosts_writes_nothing(self):
        self.allocate(0, 10, 2, 2, query=GPU)
        before = (self.allocations(), self.generations())
        error = self.assertRaises(exceptions.NotEnoughResources,
                                  self.allocate, 5, 15, 2, 2, query=GPU)
        self.assertEqual(409, error.code)
        self.assertIn('1 matching host(s) free', str(error))
        self.assertIn('2 wanted', str(error))
        self.assertEqual(before, (self.allocations(), self.generations()))

    def test_move(self):
        reservation_id, booked = self.allocate(0, 10, 2, 2)
        with self.writer() as session:
            planner.move_allocations(session, reservation_id, at(5), at(20),
                                     busy())
        self.assertEqual(
            sorted((reservation_id, host, at(5), at(20)) for host in booked),
            sorted(self.allocations()))
        self.assertEqual([2, 2], [self.generations()[h] for h in booked])

    def test_move_onto_another_booking_changes_nothing(self):
        reservation_id, booked = self.allocate(0, 10, 1, 1)
        self.allocate(20, 30, host_ids=booked)
        before = (self.allocations(), self.generations())
        with self.writer() as session:
            self.assertRaises(
                exceptions.NotEnoughResources, planner.move_allocations,
                session, reservation_id, at(5), at(21), busy())
        self.assertEqual(before, (self.allocations(), self.generations()))

    def test_the_latest_end_is_the_next_booking_of_its_hosts(self):
        reservation_id, booked = self.allocate(0, 10, 2, 2)
        self.allocate(30, 40, host_ids=booked[:1])
        self.allocate(25, 40, host_ids=booked[1:])
        self.allocate(15, 40, host_ids=[h for h in self.hosts
                                        if h not in booked][:1])
        with self.writer() as session:
            self.assertEqual(at(25), planner.latest_end(
                session, reservation_id, busy()))
            self.assertEqual(at(25) - datetime.timedelta(minutes=2),
                             planner.latest_end(session, reservation_id,
                                                busy(2)))

    def test_nothing_after_a_booking_sets_no_latest_end(self):
        reservation_id, booked = self.allocate(10, 20, 1, 1)
        self.allocate(0, 5, host_ids=booked)
        with self.writer() as session:
            self.assertIsNone(planner.latest_end(session, reservation_id,
                                                 busy()))

    def test_releasing_the_hosts_gained_after_the_start(self):
        reservation_id, booked = self.allocate(0, 10, 1, 1)
        with self.writer() as session:
            [gained] = planner.allocate_hosts(
                session, planner.Owner(reservation_id), at(5), at(10), 1, 1,
                busy())
            name = session.scalar(sa.select(HOSTS.c.service_name).where(
                HOSTS.c.id == gained))
            self.assertEqual([name], planner.release_gained(
                session, reservation_id, at(0)))
        self.assertEqual([(reservation_id, booked[0], at(0), at(10))],
                         self.allocations())

    def test_release(self):
        reservation_id, booked = self.allocate(0, 10, 2, 2)
        with self.writer() as session:
            planner.release(session, reservation_id)
        self.assertEqual([], self.allocations())
        self.assertEqual(self.hosts, self.free(0, 10))
        self.assertEqual([2, 2], [self.generations()[h] for h in booked])

    def count_statements(self, fn):
        statements = []

        def count(*args):
            statements.append(args[2])

        sa.event.listen(self.engine, 'before_cursor_execute', count)
        try:
            fn()
        finally:
            sa.event.remove(self.engine, 'before_cursor_execute', count)
        return len(statements)

    def search_and_allocate_statements(self):
        search = self.count_statements(lambda: self.free(0, 1, query=GPU))
        with self.writer() as session:
            reservation_id = add_reservation(session)
            allocate = self.count_statements(lambda: planner.allocate_hosts(
                session, planner.Owner(reservation_id), at(500), at(510), 2,
                2, busy(), conditions=compiled(GPU)))
        return search, allocate

    def book_slice(self, start, end, size, query=None, **kwargs):
        with self.writer() as session:
            return planner.allocate_slice(
                session, planner.Owner(add_reservation(session)), at(start),
                at(end), size, busy(), conditions=compiled(query), **kwargs)

    def test_slices_fill_a_host_then_the_next(self):
        # Every host has 8 vCPUs, 8192 MB and 100 GB.
        booked = [self.book_slice(0, 10, (3, 1024, 10)) for _ in range(3)]
        self.assertEqual([self.hosts[0]] * 2 + [self.hosts[1]], booked)
        self.assertEqual(self.hosts[0], self.book_slice(0, 10, (2, 512, 5)))
        self.assertEqual(self.hosts[0], self.book_slice(10, 20, (8, 8192,
                                                                 100)))

    def test_slices_follow_the_allocation_ratios(self):
        usable = host_capacity.Usable(ratios=(4.0, 1.0, 1.0))
        booked = [self.book_slice(0, 10, (8, 1024, 10), usable=usable)
                  for _ in range(5)]
        self.assertEqual([self.hosts[0]] * 4 + [self.hosts[1]], booked)

    def test_a_slice_that_fits_only_in_novas_reserve_is_refused(self):
        # Nova's default reserve: 512 MB of each host's 8192.
        usable = host_capacity.Usable(reserved=(0, 512, 0))
        self.assertRaises(exceptions.NotEnoughResources, self.book_slice,
                          0, 10, (1, 8192, 1), usable=usable)
        self.assertEqual(self.hosts[0], self.book_slice(0, 10, (1, 7680, 1),
                                                        usable=usable))

    def test_slices_leave_novas_reserve_free_on_every_host(self):
        usable = host_capacity.Usable(reserved=(0, 512, 0))
        self.book_slice(0, 10, (1, 4096, 1))
        self.assertEqual(self.hosts[1], self.book_slice(0, 10, (1, 4096, 1),
                                                        usable=usable))
        self.assertEqual(self.hosts[0], self.book_slice(0, 10, (1, 3584, 1),
                                                        usable=usable))

    def test_the_reserve_bounds_how_long_a_slice_can_last(self):
        usable = host_capacity.Usable(reserved=(0, 512, 0))
        host = self.book_slice(15, 30, (1, 4096, 1))
        self.assertIsNone(self.latest_slice_end(host, 0, (1, 4096, 1)))
        self.assertEqual(at(15), self.latest_slice_end(
            host, 0, (1, 4096, 1), usable=usable))

    def test_a_slice_fills_the_tightest_gap_before_an_empty_host(self):
        # host4's next booking is at 30, host5's at 15 (cleaning time 0);
        # host6 runs a slice in the window; the others are empty.
        self.allocate(30, 40, host_ids=[self.hosts[4]])
        self.allocate(15, 25, host_ids=[self.hosts[5]])
        self.book_slice(0, 5, (1, 1, 1),
                        query='["=", "$hypervisor_hostname", "host6"]')
        # 7 of 8 vCPUs: each host that takes one is full for the next.
        booked = [self.book_slice(0, 10, (7, 1024, 10), tightest=True)
                  for _ in range(4)]
        self.assertEqual([self.hosts[6], self.hosts[5], self.hosts[4],
                          self.hosts[0]], booked)

    def test_the_tightest_gap_keeps_the_cleaning_time(self):
        # host2's booking at 10:30 is the soonest, but within the hour of
        # cleaning after the window: host1's at 30 is the tightest gap.
        self.allocate(30, 40, host_ids=[self.hosts[1]])
        self.allocate(10.5, 20, host_ids=[self.hosts[2]])
        with self.writer() as session:
            host = planner.allocate_slice(
                session, planner.Owner(add_reservation(session)), at(0),
                at(10), (1, 1, 1), busy(cleaning_time=60), tightest=True)
        self.assertEqual(self.hosts[1], host)

    def test_without_tightest_a_slice_takes_the_lowest_host(self):
        self.allocate(15, 25, host_ids=[self.hosts[5]])
        self.assertEqual(self.hosts[0], self.book_slice(0, 10, (1, 1, 1)))

    def test_whole_hosts_and_slices_never_share_a_window(self):
        _, whole = self.allocate(0, 10, 1, 1)
        self.assertNotEqual(whole[0], self.book_slice(5, 15, (1, 1, 1)))
        sliced = self.book_slice(20, 30, (1, 1, 1))
        self.assertNotIn(sliced, self.free(25, 35))

    def latest_slice_end(self, host, start, size, usable=planner.AS_IS,
                         **kwargs):
        with self.writer() as session:
            return planner.latest_slice_end(session, host, at(start), size,
                                            busy(**kwargs), usable)

    def test_a_slice_can_last_until_a_whole_host_booking(self):
        host = self.hosts[0]
        self.allocate(20, 30, host_ids=[host])
        self.assertEqual(at(20), self.latest_slice_end(host, 0, (1, 1, 1)))
        self.assertEqual(at(20) - datetime.timedelta(minutes=30),
                         self.latest_slice_end(host, 0, (1, 1, 1),
                                               cleaning_time=30))
        self.assertEqual(at(20), self.latest_slice_end(host, 20, (1, 1, 1)))

    def test_a_slice_can_last_until_the_slices_add_up_beyond_the_host(self):
        # Every host has 8 vCPUs: 6 + 3 fit no more.
        host = self.book_slice(0, 10, (3, 1024, 10))
        self.book_slice(15, 30, (3, 1024, 10))
        self.assertEqual(at(15), self.latest_slice_end(host, 0, (3, 1, 1)))
        self.assertIsNone(self.latest_slice_end(host, 0, (2, 1, 1)))
        self.assertIsNone(self.latest_slice_end(self.hosts[1], 0,
                                                (8, 8192, 100)))

    def test_slice_that_fits_nowhere_writes_nothing(self):
        before = (self.allocations(), self.generations())
        error = self.assertRaises(exceptions.NotEnoughResources,
                                  self.book_slice, 0, 10, (9, 1, 1))
        self.assertIn('9 vCPU(s)', str(error))
        self.assertEqual(before, (self.allocations(), self.generations()))
        self.assertRaises(exceptions.NotEnoughResources, self.book_slice,
                          0, 10, (1, 1, 1), query='["=", "$gpu", "no"]')

    def test_statement_count_does_not_grow(self):
        small = self.search_and_allocate_statements()
        with self.writer() as session:
            add_hosts(session, 40, first=9)
        for hour in range(0, 300, 10):
            self.allocate(hour, hour + 10, 1, 4)
        self.assertEqual(small, self.search_and_allocate_statements())
        # The search (after the lookup of the gap index on SQLite), the
        # generation bump and the allocation rows.
        self.assertEqual(3 + host_gaps.present(self.engine), small[1])

    def test_retry_on_conflict(self):
        calls = []

        def lose_twice():
            calls.append(1)
            if len(calls) < 3:
                raise exceptions.ConcurrentUpdate()
            return 'done'

        self.assertEqual('done', db_api.retry_on_conflict(
            exceptions.ConcurrentUpdate)(lose_twice)())
        self.assertEqual(3, len(calls))

    def test_retry_on_conflict_gives_up_with_409(self):
        calls = []

        def deadlock():
            calls.append(1)
            raise db_exc.DBDeadlock()

        error = self.assertRaises(exceptions.ConcurrentUpdate,
                                  db_api.retry_on_conflict(
                                      exceptions.ConcurrentUpdate,
                                      attempts=3)(deadlock))
        self.assertEqual(409, error.code)
        self.assertEqual(3, len(calls))


class TestPlanner(PlannerMixin, base.DBTestCase):
    pass


class TestPlannerPostgreSQL(PlannerMixin, base.PostgreSQLTestCase):
    pass


class TestPlannerMySQL(PlannerMixin, base.MySQLTestCase):
    pass
