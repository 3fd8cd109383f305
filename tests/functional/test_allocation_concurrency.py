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

import collections
from concurrent import futures
import multiprocessing

from oslo_config import cfg

from db import api as db_api
from reservation_ext import clock as clock_mod
from reservation_ext import context
from reservation_ext import exceptions
from reservation_ext.planning import planner
from tests import base
from tests import fixtures
from tests.functional import test_planner

POOL = 4
# Every window contains hours 5 to 10: any two of them overlap.
WINDOWS = [(test_planner.at(k), test_planner.at(10 + k)) for k in range(6)]


def book(window):
    """One lease request for one host in ``window``; its outcome."""
    def attempt():
        with db_api.writer(context.get_admin_context(),
                           clock_mod.SYSTEM) as session:
            reservation_id = test_planner.add_reservation(session)
            planner.allocate_hosts(session, planner.Owner(reservation_id),
                                   *window, 1, 1, test_planner.busy())

    try:
        db_api.retry_on_conflict(exceptions.ConcurrentUpdate)(attempt)()
    except exceptions.NotEnoughResources:
        return 'not enough'
    except exceptions.ConcurrentUpdate:
        return 'conflict'
    except Exception as error:
        return repr(error)
    return 'booked'


def run_in_process(url, work, items):
    """``[work(item) for item in items]`` in a process of its own.

    With its own engine on ``url``, and the configuration that policy
    reads.
    """
    cfg.CONF([], project='reservation-ext', default_config_files=[])
    db_api.context_manager.configure(connection=url)
    try:
        return [work(item) for item in items]
    finally:
        db_api.get_engine().dispose()


def run_in_processes(url, work, batches):
    """:func:`run_in_process` of each batch at once; the outcomes."""
    spawn = multiprocessing.get_context('spawn')
    with spawn.Pool(len(batches)) as pool:
        results = pool.starmap(run_in_process,
                               [(url, work, batch) for batch in batches])
    return [outcome for batch in results for outcome in batch]


class ConcurrencyMixin:

    POOL = POOL

    def add_pool(self):
        with db_api.writer(self.ctx, clock_mod.SYSTEM) as session:
            test_planner.add_hosts(session, self.POOL)

    def assert_no_double_booking(self, outcomes, requests):
        with self.engine.connect() as conn:
            self.assertEqual(
                [], test_planner.overlapping_allocations(conn))
        counts = collections.Counter(outcomes)
        self.assertEqual(requests, len(outcomes))
        self.assertEqual(POOL, counts.pop('booked', 0))
        self.assertEqual(set(), set(counts) - {'not enough', 'conflict'})


class TestThreads(ConcurrencyMixin, base.TestCase):

    def setUp(self):
        super().setUp()
        self.engine = self.useFixture(fixtures.Database()).engine
        self.ctx = context.get_admin_context()
        self.add_pool()

    def test_threads_never_double_book(self):
        requests = [WINDOWS[i % len(WINDOWS)] for i in range(48)]
        with futures.ThreadPoolExecutor(16) as executor:
            outcomes = list(executor.map(book, requests))
        self.assert_no_double_booking(outcomes, len(requests))


class _ProcessesMixin(ConcurrencyMixin):
    """Processes, each with its own engine, on the class's server."""

    def setUp(self):
        super().setUp()
        self.add_pool()

    def test_processes_never_double_book(self):
        url = self.engine.url.render_as_string(hide_password=False)
        batches = [WINDOWS[i:] + WINDOWS[:i] for i in range(8)]
        self.assert_no_double_booking(
            run_in_processes(url, book, batches),
            sum(len(batch) for batch in batches))


class TestProcessesPostgreSQL(_ProcessesMixin, base.PostgreSQLTestCase):
    pass


class TestProcessesMySQL(_ProcessesMixin, base.MySQLTestCase):
    pass
