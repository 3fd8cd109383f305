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

"""What the concurrency tests share: many writers at once, then checks.

Writers (threads on an SQLite file, processes with their own engines on
PostgreSQL and MariaDB) book from a pool of a few resources in windows
that all overlap. A writer's outcome is its success word ('booked'),
'not enough' or 'conflict' when refused as expected, or the repr of any
other error, which the checks reject.
"""

import collections
from concurrent import futures
import multiprocessing

from oslo_config import cfg

from db import api as db_api
from reservation_ext import clock as clock_mod
from reservation_ext import context
from reservation_ext import exceptions
from tests import base
from tests import fixtures
from tests.functional import test_planner

# Every window contains hours 5 to 10: any two of them overlap.
WINDOWS = [(test_planner.at(k), test_planner.at(10 + k)) for k in range(6)]


def outcome(call, success):
    """``success`` if ``call()`` returns, else how it was refused."""
    try:
        call()
    except exceptions.NotEnoughResources:
        return 'not enough'
    except exceptions.ConcurrentUpdate:
        return 'conflict'
    except Exception as error:
        return repr(error)
    return success


def book(allocate):
    """``allocate(session, reservation_id)`` of a new reservation.

    In a writer of its own, retried on ConcurrentUpdate; the outcome.
    """
    def attempt():
        with db_api.writer(context.get_admin_context(),
                           clock_mod.SYSTEM) as session:
            allocate(session, test_planner.add_reservation(session))

    return outcome(db_api.retry_on_conflict(exceptions.ConcurrentUpdate)(
        attempt), 'booked')


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


class PoolMixin:
    """Tests on a pool of ``POOL`` resources that ``add_pool`` adds."""

    def setUp(self):
        super().setUp()
        with db_api.writer(context.get_admin_context(),
                           clock_mod.SYSTEM) as session:
            self.add_pool(session)

    def in_processes(self, work, batches):
        """:func:`run_in_processes` on the test's DB; the outcomes."""
        return run_in_processes(
            self.engine.url.render_as_string(hide_password=False), work,
            batches)

    def assert_one_booking_each(self, overlapping, outcomes, requests):
        """``overlapping(connection)`` finds nothing; POOL were booked.

        Every one of ``requests`` has an outcome, any other than
        'booked' a refusal.
        """
        with self.engine.connect() as conn:
            self.assertEqual([], overlapping(conn))
        counts = collections.Counter(outcomes)
        self.assertEqual(requests, len(outcomes))
        self.assertEqual(self.POOL, counts.pop('booked', 0))
        self.assertEqual(set(), set(counts) - {'not enough', 'conflict'})


class WholeItemsMixin(PoolMixin):
    """Concurrent bookings of items booked whole: never one in two leases.

    Subclasses add ``POOL`` items (:meth:`add_pool`) and say how one is
    booked in a window (``book``, a function of the window returning its
    outcome, which a process can pickle) and how to find two bookings of
    one item that overlap (``overlapping``, a function of a connection).
    """

    book = None
    overlapping = None

    def assert_no_double_booking(self, outcomes, requests):
        self.assert_one_booking_each(type(self).overlapping, outcomes,
                                     requests)

    def in_threads(self):
        """24 bookings by 8 threads; their outcomes, checked."""
        requests = [WINDOWS[i % len(WINDOWS)] for i in range(24)]
        with futures.ThreadPoolExecutor(8) as executor:
            outcomes = list(executor.map(type(self).book, requests))
        self.assert_no_double_booking(outcomes, len(requests))

    def in_four_processes(self):
        """Each window booked by 4 processes at once; checked."""
        batches = [WINDOWS[i:] + WINDOWS[:i] for i in range(4)]
        self.assert_no_double_booking(
            self.in_processes(type(self).book, batches),
            sum(len(batch) for batch in batches))


class SQLiteFileTestCase(base.TestCase):
    """A test on an SQLite file DB, which threads can share."""

    def setUp(self):
        super().setUp()
        self.engine = self.useFixture(fixtures.Database()).engine
