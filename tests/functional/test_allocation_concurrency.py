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

"""Concurrent allocations never double-book a host.

Many writers (threads on an SQLite file, processes with their own engines
on PostgreSQL) ask for one host each in windows that all overlap, on a
pool of a few hosts. Afterwards an overlap query written independently of
the planner finds no two overlapping allocations of a host, exactly one
request per host succeeded, and every other request was refused with
NotEnoughResources (or ConcurrentUpdate after the retries), nothing else.
"""

from concurrent import futures

from reservation_ext.planning import planner
from tests import base
from tests.functional import concurrency
from tests.functional import test_planner

POOL = 4
WINDOWS = concurrency.WINDOWS


def book(window):
    """One lease request for one host in ``window``; its outcome."""
    return concurrency.book(lambda session, reservation_id: (
        planner.allocate_hosts(session, planner.Owner(reservation_id),
                               *window, 1, 1, test_planner.busy())))


class ConcurrencyMixin(concurrency.PoolMixin):

    POOL = POOL

    def add_pool(self, session):
        test_planner.add_hosts(session, self.POOL)

    def assert_no_double_booking(self, outcomes, requests):
        self.assert_one_booking_each(test_planner.overlapping_allocations,
                                     outcomes, requests)


class TestThreads(ConcurrencyMixin, concurrency.SQLiteFileTestCase):

    def test_threads_never_double_book(self):
        requests = [WINDOWS[i % len(WINDOWS)] for i in range(48)]
        with futures.ThreadPoolExecutor(16) as executor:
            outcomes = list(executor.map(book, requests))
        self.assert_no_double_booking(outcomes, len(requests))


class _ProcessesMixin(ConcurrencyMixin):
    """Processes, each with its own engine, on the class's server."""

    def test_processes_never_double_book(self):
        batches = [WINDOWS[i:] + WINDOWS[:i] for i in range(8)]
        self.assert_no_double_booking(
            self.in_processes(book, batches),
            sum(len(batch) for batch in batches))


class TestProcessesPostgreSQL(_ProcessesMixin, base.PostgreSQLTestCase):
    pass


class TestProcessesMySQL(_ProcessesMixin, base.MySQLTestCase):
    pass
