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

"""The invariants of db.api.writer, through the services that write.

Every writer transaction takes its timestamps from the clock it was given,
and one that changes a reservation pool moves the ``pool_state``
generation by itself: no service calls a bump. Bookings leave the
generation where it was, so that the scheduler does not reload its pools
for them; they move the ``booking_state`` generation, which the
scheduler's view of the preemptibles' hosts follows, and the engine's
reclaim bookkeeping does not.
"""

import datetime

import sqlalchemy as sa

from db import api as db_api
from db import models
from reservation_ext import clock as clock_mod
from reservation_ext import context
from reservation_ext.engine import runner
from reservation_ext.hosts import inventory
from reservation_ext.leases import notifications
from reservation_ext.leases import service as lease_service
from reservation_ext.planning import pool_snapshot
from reservation_ext import plugins as plugins_mod
from reservation_ext.states import EventStatus
from reservation_ext.states import EventType
from reservation_ext.states import LeaseStatus
from reservation_ext.store import allocations as store_allocations
from tests import base
from tests import fixtures
from tests import plugins as test_plugins
from tests.unit import test_engine

# Long past: no system clock can be there, so every timestamp that equals
# it came from the test's clock.
PAST = datetime.datetime(2001, 2, 3, 4, 5)
HOUR = datetime.timedelta(hours=1)
JOURNAL = test_plugins.RESOURCE_TYPE
LEASES = models.Lease.__table__
RESERVATIONS = models.Reservation.__table__
EVENTS = models.Event.__table__
HOSTS = models.ComputeHost.__table__
ALLOCATIONS = models.HostAllocation.__table__


class FakeNova:
    """The Nova calls of the host inventory, answered from memory."""

    def __init__(self):
        self.aggregates = {}

    def find_hypervisor(self, name):
        return {'hypervisor_hostname': name, 'service': {'host': name},
                'hypervisor_type': 'QEMU', 'hypervisor_version': 8000000,
                'vcpus': 8, 'memory_mb': 8192, 'local_gb': 100,
                'cpu_info': '{}'}

    def availability_zone_of(self, host):
        return 'nova'

    def ensure_aggregate(self, name, metadata=None):
        return self.aggregates.setdefault(name, {'name': name,
                                                 'hosts': set()})

    def find_aggregate(self, name):
        return self.aggregates.get(name)

    def add_to_aggregate(self, aggregate, host):
        aggregate['hosts'].add(host)

    def remove_from_aggregate(self, aggregate, host):
        aggregate['hosts'].discard(host)


class GenerationProbe(test_plugins.JournalPlugin):
    """The journal plugin, noting the pool generation when it acts.

    The engine runs plugin actions between its claim and its record
    transactions, so the note tells what each of the two did.
    """

    def __init__(self, conf, clock):
        super().__init__(conf, clock)
        self.seen = []

    def _act(self, action, reservation, fail_index):
        self.seen.append(generation())
        super()._act(action, reservation, fail_index)


def generation():
    with db_api.context_manager.reader.using(
            context.get_admin_context()) as session:
        return pool_snapshot.generation(session)


def bookings_generation():
    return db_api.read_generation(models.BookingState.__table__)


def row(table, **where):
    with db_api.context_manager.reader.using(
            context.get_admin_context()) as session:
        return session.execute(sa.select(table).where(*(
            table.c[key] == value for key, value in where.items()))).one()


def date(hours):
    """``PAST`` plus ``hours``, as a request writes it."""
    return (PAST + hours * HOUR).strftime('%Y-%m-%d %H:%M')


def lease_body(reservation):
    """A lease from one to two hours after ``PAST``."""
    return {'name': 'lease1', 'start_date': date(1), 'end_date': date(2),
            'reservations': [reservation], 'events': []}


def done_events(lease_id):
    """The types of the lease's events done."""
    with db_api.context_manager.reader.using(
            context.get_admin_context()) as session:
        return set(session.scalars(sa.select(EVENTS.c.event_type).where(
            EVENTS.c.lease_id == lease_id,
            EVENTS.c.status == EventStatus.DONE)))


def journal_lease(**values):
    return lease_body(dict(values, resource_type=JOURNAL))


def host_lease():
    return lease_body({'resource_type': 'physical:host', 'min': 1, 'max': 1})


class _WriterTests:

    def setUp(self):
        super().setUp()
        self.useFixture(fixtures.TestPlugins())
        self.clock = clock_mod.ManualClock(PAST)
        self.conf = test_engine.make_conf(self, event_max_attempts=1)
        self.plugins = plugins_mod.load_plugins(self.conf, self.clock)
        self.probe = self.plugins[JOURNAL] = GenerationProbe(self.conf,
                                                             self.clock)
        notifier = notifications.get_notifier(self.conf)
        self.service = lease_service.LeaseService(
            self.conf, self.clock, self.plugins, notifier)
        self.engine = runner.Engine(self.conf, self.clock, self.plugins,
                                    notifier, engine_id='test')
        self.hosts = inventory.HostInventory(self.conf.reservation,
                                             self.clock, FakeNova())
        self.user = context.RequestContext(
            project_id='p1', user_id='u1', roles=['member', 'reader'])

    def add_host(self, name='compute-1'):
        return self.hosts.create(self.ctx, {'name': name})['id']

    def assertMoves(self, fn, *args):
        before = generation()
        result = fn(*args)
        self.assertGreater(generation(), before)
        return result

    def assertKeeps(self, fn, *args):
        before = generation()
        result = fn(*args)
        self.assertEqual(before, generation())
        return result

    # Timestamps.

    def test_an_engine_run_stamps_the_rows_it_changes_with_its_clock(self):
        lease = self.service.create(self.user, journal_lease())
        self.clock.set(PAST + HOUR)
        self.engine.run_once()
        self.assertEqual(PAST + HOUR, row(LEASES, id=lease['id']).updated_at)
        self.assertEqual(PAST + HOUR, row(RESERVATIONS,
                                          lease_id=lease['id']).updated_at)
        self.assertEqual(PAST + HOUR, row(
            EVENTS, lease_id=lease['id'],
            event_type='start_lease').updated_at)
        self.assertIsNone(row(EVENTS, lease_id=lease['id'],
                              event_type='end_lease').updated_at)

    def test_a_lease_update_stamps_the_rows_it_changes_with_its_clock(self):
        host_id = int(self.add_host())
        self.assertEqual(PAST, row(HOSTS, id=host_id).created_at)
        self.assertIsNone(row(HOSTS, id=host_id).updated_at)
        lease = self.service.create(self.user, host_lease())
        self.clock.set(PAST + datetime.timedelta(minutes=10))
        self.service.update(self.user, lease['id'],
                            {'end_date': date(3)})
        now = self.clock.now()
        self.assertEqual(now, row(LEASES, id=lease['id']).updated_at)
        self.assertEqual(now, row(EVENTS, lease_id=lease['id'],
                                  event_type='end_lease').updated_at)
        # The re-booking bumped the host's own generation.
        self.assertEqual(now, row(HOSTS, id=host_id).updated_at)

    def test_a_write_without_a_clock_is_refused(self):
        with db_api.writer(self.ctx) as session:
            self.assertRaisesRegex(
                Exception, 'without a clock', session.execute,
                sa.insert(LEASES).values(
                    id='l', name='l', project_id='p', start_date=PAST,
                    end_date=PAST, status=LeaseStatus.PENDING))

    # The pool generation.

    def test_adding_and_removing_a_host_move_the_pools(self):
        host_id = self.assertMoves(self.add_host)
        self.assertMoves(self.hosts.delete, self.ctx, host_id)

    def test_the_engine_moves_the_pools_at_start_and_end(self):
        lease = self.service.create(self.user, journal_lease())
        self.clock.set(PAST + HOUR)
        self.assertEngineMoves(lease['id'], LeaseStatus.ACTIVE)
        self.assertEqual({EventType.START_LEASE}, done_events(lease['id']))
        self.assertKeeps(self.engine.run_once)
        self.assertIn(EventType.BEFORE_END_LEASE, done_events(lease['id']))
        self.clock.set(PAST + 2 * HOUR)
        self.assertEngineMoves(lease['id'], LeaseStatus.TERMINATED)
        self.assertEqual(set(EventType.ALL), done_events(lease['id']))

    def assertEngineMoves(self, lease_id, status):
        """The next engine run moves the pools twice; the lease's status.

        Once when it claims the event (the lease goes to STARTING or
        TERMINATING), before the plugin acts, and once when it records it.
        """
        before = generation()
        self.assertEqual(1, self.engine.run_once())
        self.assertEqual(status, row(LEASES, id=lease_id).status)
        self.assertLess(before, self.probe.seen[-1])
        self.assertLess(self.probe.seen[-1], generation())

    def test_a_lease_that_fails_to_error_moves_the_pools(self):
        lease = self.service.create(self.user, journal_lease(fail_start=1))
        self.clock.set(PAST + HOUR)
        self.engine.run_once()
        self.assertEqual(LeaseStatus.ERROR,
                         row(LEASES, id=lease['id']).status)
        self.assertLess(self.probe.seen[-1], generation())

    def test_deleting_a_lease_moves_the_pools(self):
        lease = self.service.create(self.user, journal_lease())
        self.assertMoves(self.service.delete, self.user, lease['id'])

    def test_creating_and_moving_a_lease_that_books_hosts_keep_the_pools(self):
        host_id = int(self.add_host())
        lease = self.assertKeeps(self.service.create, self.user, host_lease())
        self.assertEqual(1, row(HOSTS, id=host_id).generation)
        self.assertKeeps(self.service.update, self.user, lease['id'],
                         {'end_date': date(3)})
        self.assertEqual(2, row(HOSTS, id=host_id).generation)

    def test_booking_and_moving_hosts_move_the_bookings_generation(self):
        host_id = int(self.add_host())
        before = bookings_generation()
        lease = self.service.create(self.user, host_lease())
        booked = bookings_generation()
        self.assertGreater(booked, before)
        self.service.update(self.user, lease['id'], {'end_date': date(3)})
        self.assertGreater(bookings_generation(), booked)
        self.assertEqual(2, row(HOSTS, id=host_id).generation)

    def test_the_reclaim_bookkeeping_keeps_the_bookings_generation(self):
        self.add_host()
        lease = self.service.create(self.user, host_lease())
        allocation = row(ALLOCATIONS, reservation_id=row(
            RESERVATIONS, lease_id=lease['id']).id)
        before = bookings_generation()
        with db_api.writer(self.ctx, self.clock) as session:
            store_allocations.mark_reclaimed(session, allocation.id,
                                             allocation.start_date)
        self.assertEqual(before, bookings_generation())

    def test_a_failed_transaction_keeps_the_pools(self):
        def delete_then_fail():
            with db_api.writer(self.ctx, self.clock) as session:
                session.execute(sa.delete(HOSTS))
                raise RuntimeError('rolled back')

        self.add_host()
        self.assertKeeps(self.assertRaises, RuntimeError, delete_then_fail)


class WriterSQLiteTest(_WriterTests, base.DBTestCase):
    pass


class WriterPostgreSQLTest(_WriterTests, base.PostgreSQLTestCase):
    pass


class WriterMySQLTest(_WriterTests, base.MySQLTestCase):
    pass
