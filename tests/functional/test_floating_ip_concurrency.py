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

from concurrent import futures
import uuid

from db import tables
from reservation_ext.planning import floating_ips
from reservation_ext.planning import planner
from reservation_ext.store import floating_ips as store
from tests import base
from tests.functional import concurrency
from tests.functional import test_planner

NETWORK = 'public'
WINDOWS = concurrency.WINDOWS


def book(window):
    """One lease request for one address in ``window``; its outcome."""
    return concurrency.book(lambda session, reservation_id: (
        floating_ips.allocate(session, planner.Owner(reservation_id),
                              NETWORK, *window, 1, [], test_planner.busy())))


def overlapping_bookings(connection):
    """Pairs of bookings of the same address whose windows overlap."""
    return test_planner.overlapping_bookings(
        connection, tables.FLOATINGIP_ALLOCATIONS, 'floatingip_id')


class _Concurrency(concurrency.PoolMixin):

    POOL = 4

    def add_pool(self, session):
        for index in range(self.POOL):
            store.register(session, {
                'id': str(uuid.uuid4()), 'floating_network_id': NETWORK,
                'subnet_id': 'subnet',
                'floating_ip_address': '172.24.4.%d' % (index + 2)})

    def assert_no_address_in_two_leases(self, outcomes, requests):
        self.assert_one_booking_each(overlapping_bookings, outcomes,
                                     requests)


class TestThreads(_Concurrency, concurrency.SQLiteFileTestCase):

    def test_threads_never_book_an_address_twice(self):
        requests = [WINDOWS[i % len(WINDOWS)] for i in range(48)]
        with futures.ThreadPoolExecutor(16) as executor:
            outcomes = list(executor.map(book, requests))
        self.assert_no_address_in_two_leases(outcomes, len(requests))


class _Processes(_Concurrency):

    def test_processes_never_book_an_address_twice(self):
        batches = [WINDOWS[i:] + WINDOWS[:i] for i in range(8)]
        self.assert_no_address_in_two_leases(
            self.in_processes(book, batches),
            sum(len(batch) for batch in batches))


class TestProcessesPostgreSQL(_Processes, base.PostgreSQLTestCase):
    pass


class TestProcessesMySQL(_Processes, base.MySQLTestCase):
    pass
