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

"""Concurrent floating IP bookings never put an address in two leases.

As :mod:`tests.functional.test_allocation_concurrency` does for hosts:
many writers (threads on an SQLite file, processes with their own
engines on PostgreSQL and MariaDB) each book one address of a network in
windows that all overlap, from a few registered addresses. Afterwards an
overlap query written independently of the planner finds no address in
two overlapping bookings, exactly one request per address succeeded, and
every other one was refused with NotEnoughResources (or ConcurrentUpdate
after the retries), nothing else.
"""

import collections
from concurrent import futures
import uuid

import sqlalchemy as sa

from db import api as db_api
from db import tables
from reservation_ext import clock as clock_mod
from reservation_ext import context
from reservation_ext import exceptions
from reservation_ext.planning import floating_ips
from reservation_ext.planning import planner
from reservation_ext.store import floating_ips as store
from tests import base
from tests import fixtures
from tests.functional import test_allocation_concurrency as hosts_test
from tests.functional import test_planner

POOL = 4
NETWORK = 'public'
WINDOWS = hosts_test.WINDOWS
ALLOCATIONS = tables.FLOATINGIP_ALLOCATIONS


def book(window):
    """One lease request for one address in ``window``; its outcome."""
    def attempt():
        with db_api.writer(context.get_admin_context(),
                           clock_mod.SYSTEM) as session:
            reservation_id = test_planner.add_reservation(session)
            floating_ips.allocate(
                session, planner.Owner(reservation_id), NETWORK, *window,
                1, [], test_planner.busy())

    try:
        db_api.retry_on_conflict(exceptions.ConcurrentUpdate)(attempt)()
    except exceptions.NotEnoughResources:
        return 'not enough'
    except exceptions.ConcurrentUpdate:
        return 'conflict'
    except Exception as error:
        return repr(error)
    return 'booked'


def overlapping_bookings(connection):
    """Pairs of bookings of the same address whose windows overlap."""
    a, b = ALLOCATIONS.alias('a'), ALLOCATIONS.alias('b')
    return connection.execute(sa.select(a.c.id, b.c.id).where(
        a.c.floatingip_id == b.c.floatingip_id, a.c.id < b.c.id,
        a.c.start_date < b.c.end_date, b.c.start_date < a.c.end_date)).all()


class _Concurrency:

    def add_pool(self):
        with db_api.writer(self.ctx, clock_mod.SYSTEM) as session:
            for index in range(POOL):
                store.register(session, {
                    'id': str(uuid.uuid4()), 'floating_network_id': NETWORK,
                    'subnet_id': 'subnet',
                    'floating_ip_address': '172.24.4.%d' % (index + 2)})

    def assert_no_address_in_two_leases(self, outcomes, requests):
        with self.engine.connect() as conn:
            self.assertEqual([], overlapping_bookings(conn))
        counts = collections.Counter(outcomes)
        self.assertEqual(requests, len(outcomes))
        self.assertEqual(POOL, counts.pop('booked', 0))
        self.assertEqual(set(), set(counts) - {'not enough', 'conflict'})


class TestThreads(_Concurrency, base.TestCase):

    def setUp(self):
        super().setUp()
        self.engine = self.useFixture(fixtures.Database()).engine
        self.ctx = context.get_admin_context()
        self.add_pool()

    def test_threads_never_book_an_address_twice(self):
        requests = [WINDOWS[i % len(WINDOWS)] for i in range(48)]
        with futures.ThreadPoolExecutor(16) as executor:
            outcomes = list(executor.map(book, requests))
        self.assert_no_address_in_two_leases(outcomes, len(requests))


class _Processes(_Concurrency):

    def setUp(self):
        super().setUp()
        self.add_pool()

    def test_processes_never_book_an_address_twice(self):
        url = self.engine.url.render_as_string(hide_password=False)
        batches = [WINDOWS[i:] + WINDOWS[:i] for i in range(8)]
        self.assert_no_address_in_two_leases(
            hosts_test.run_in_processes(url, book, batches),
            sum(len(batch) for batch in batches))


class TestProcessesPostgreSQL(_Processes, base.PostgreSQLTestCase):
    pass


class TestProcessesMySQL(_Processes, base.MySQLTestCase):
    pass
