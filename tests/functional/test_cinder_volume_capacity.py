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

"""Volume capacity: the virtual:volume plugin in the lease service.

Leases with virtual:volume reservations are created, moved and refused
through the real lease service on SQLite, PostgreSQL and MariaDB. The
Cinder calls of the engine actions are not made here (see
test_cinder_extension). Concurrent creates (threads on an SQLite file,
processes with their own engines on PostgreSQL and MariaDB) never hold
more than the reservable GB.
"""

import collections
from concurrent import futures
import datetime
import multiprocessing
import uuid

from oslo_config import cfg
import sqlalchemy as sa

from db import api as db_api
from db import models
from db import tables
from reservation_ext import clock as clock_mod
from reservation_ext import conf as conf_mod
from reservation_ext import context
from reservation_ext import exceptions
from reservation_ext.leases import notifications
from reservation_ext.leases import service as lease_service
from reservation_ext.planning import planner
from reservation_ext.planning import volume_capacity
from reservation_ext.plugins import virtual_volume
from tests import base
from tests import fixtures
from tests.functional import concurrency

NOW = datetime.datetime(2027, 1, 10, 9, 0, 0)
CAPACITY = 100
SIZE = 10


def at(hours):
    return NOW + datetime.timedelta(hours=hours)


def make_service(clock=None):
    """A lease service with only the real virtual:volume plugin."""
    conf = cfg.ConfigOpts()
    conf_mod.register_opts(conf)
    conf([], project='reservation')
    conf.set_override('volume_reservable_gb', CAPACITY, group='reservation')
    clock = clock or clock_mod.ManualClock(NOW)
    plugin = virtual_volume.VirtualVolumePlugin(conf, clock)
    return lease_service.LeaseService(conf, clock, {'virtual:volume': plugin},
                                      notifications.get_notifier(conf))


def body(start, end, size=SIZE, name=None):
    return {'name': name or str(uuid.uuid4()),
            'start_date': at(start).strftime('%Y-%m-%d %H:%M'),
            'end_date': at(end).strftime('%Y-%m-%d %H:%M'),
            'reservations': [{'resource_type': 'virtual:volume',
                              'size_gb': size,
                              'volume_id': str(uuid.uuid4())}],
            'events': []}


def user():
    return context.RequestContext(project_id='p1', user_id='u1',
                                  roles=['member', 'reader'])


def create(service, start, end, size=SIZE):
    """One lease create; its outcome."""
    return concurrency.outcome(
        lambda: service.create(user(), body(start, end, size)), 'granted')


def create_in_process(url, windows):
    """Lease creates in a process of its own, with its own engine."""
    # The policy enforcer reads the global CONF, parsed in a test.
    cfg.CONF([], project='reservation-ext', default_config_files=[])
    db_api.context_manager.configure(connection=url)
    try:
        service = make_service(clock_mod.ManualClock(NOW))
        return [create(service, *window) for window in windows]
    finally:
        db_api.get_engine().dispose()


def peak_gb(connection):
    """The most GB held at any one time, computed independently.

    The peak of overlapping windows is reached at some window's start.
    """
    volumes = models.VolumeReservation.__table__
    reservations = models.Reservation.__table__
    lease_rows = models.Lease.__table__
    rows = connection.execute(
        sa.select(lease_rows.c.start_date, lease_rows.c.end_date,
                  volumes.c.size_gb)
        .join(reservations, reservations.c.lease_id == lease_rows.c.id)
        .join(volumes, volumes.c.reservation_id == reservations.c.id)).all()
    return max([sum(size for start, end, size in rows if start <= t < end)
                for t, _end, _size in rows] or [0])


class CapacityMixin:

    def setUp(self):
        super().setUp()
        self.service = make_service()

    def reserved(self, start, end):
        with db_api.context_manager.reader.using(self.ctx) as session:
            return volume_capacity.reserved_gb(
                session, at(start), at(end), planner.Busy(at(0)))

    def test_granted_up_to_the_capacity(self):
        lease = self.service.create(user(), body(1, 10, size=60))
        self.assertEqual(
            {'size_gb': 60, 'on_end': 'delete', 'resource_type':
             'virtual:volume'},
            {key: lease['reservations'][0][key]
             for key in ('size_gb', 'on_end', 'resource_type')})
        self.service.create(user(), body(5, 20, size=40))
        self.assertEqual(100, self.reserved(0, 30))
        error = self.assertRaises(exceptions.NotEnoughResources,
                                  self.service.create, user(),
                                  body(9, 12, size=1))
        self.assertEqual(409, error.code)
        self.assertIn('already hold 100 of the 100 GB reservable', str(error))
        self.assertEqual(2, len(self.service.list(user())))

    def test_windows_that_do_not_overlap_do_not_count(self):
        self.service.create(user(), body(1, 10, size=100))
        # Touching windows do not overlap.
        self.service.create(user(), body(10, 20, size=100))
        self.service.create(user(), body(0, 1, size=100))
        self.assertEqual(300, self.reserved(0, 30))

    def test_ended_reservations_hold_nothing(self):
        lease = self.service.create(user(), body(1, 10, size=100))
        with db_api.writer(self.ctx, clock_mod.ManualClock(NOW)) as session:
            session.execute(tables.RESERVATIONS.update().where(
                tables.RESERVATIONS.c.lease_id == lease['id']).values(
                    status='deleted'))
        self.service.create(user(), body(1, 10, size=100))

    def test_nothing_reservable_by_default(self):
        self.service.conf.clear_override('volume_reservable_gb',
                                         group='reservation')
        self.assertRaises(exceptions.NotEnoughResources,
                          self.service.create, user(), body(1, 2, size=1))

    def test_moving_a_lease_counts_the_others_only(self):
        lease = self.service.create(user(), body(1, 10, size=60))
        self.service.create(user(), body(20, 30, size=60))
        # Within its own window: it does not count against itself.
        self.service.update(user(), lease['id'],
                            {'end_date': at(15).strftime('%Y-%m-%d %H:%M')})
        exc = self.assertRaises(
            exceptions.NotEnoughResources, self.service.update, user(),
            lease['id'], {'end_date': at(21).strftime('%Y-%m-%d %H:%M')})
        self.assertIn('The lease can be extended until %s at the latest.'
                      % at(20).strftime('%Y-%m-%d %H:%M'), exc.message)
        self.assertEqual('2027-01-11T00:00:00.000000', self.service.get(
            user(), lease['id'])['end_date'])
        # The size may change (tested with Cinder), not the volume type.
        self.assertRaises(exceptions.InvalidInput, self.service.update,
                          user(), lease['id'], {'reservations': [
                              {'id': lease['reservations'][0]['id'],
                               'volume_type': 'fast'}]})

    def test_the_sum_is_one_statement_whatever_the_leases(self):
        def statements():
            seen = []

            def count(*args):
                seen.append(args[2])
            sa.event.listen(self.engine, 'before_cursor_execute', count)
            try:
                self.reserved(0, 1000)
            finally:
                sa.event.remove(self.engine, 'before_cursor_execute', count)
            return len(seen)

        self.service.create(user(), body(0, 10, size=1))
        one = statements()
        for hour in range(10, 400, 10):
            self.service.create(user(), body(hour, hour + 10, size=1))
        self.assertEqual(one, statements())


class TestCapacity(CapacityMixin, base.DBTestCase):
    pass


class TestCapacityPostgreSQL(CapacityMixin, base.PostgreSQLTestCase):
    pass


class TestCapacityMySQL(CapacityMixin, base.MySQLTestCase):
    pass


# Every window contains hours 5 to 10: any two of them overlap.
WINDOWS = [(k, 10 + k) for k in range(6)]


def assert_capacity_held(test, outcomes, requests):
    with test.engine.connect() as conn:
        test.assertLessEqual(peak_gb(conn), CAPACITY)
    counts = collections.Counter(outcomes)
    test.assertEqual(requests, len(outcomes))
    test.assertEqual(CAPACITY // SIZE, counts.pop('granted', 0))
    test.assertEqual(set(), set(counts) - {'not enough', 'conflict'})


class TestThreads(base.TestCase):

    def setUp(self):
        super().setUp()
        self.engine = self.useFixture(fixtures.Database()).engine

    def test_threads_never_exceed_the_capacity(self):
        service = make_service()
        requests = [WINDOWS[i % len(WINDOWS)] for i in range(32)]
        with futures.ThreadPoolExecutor(16) as executor:
            outcomes = list(executor.map(
                lambda window: create(service, *window), requests))
        assert_capacity_held(self, outcomes, len(requests))


class _ProcessesMixin:
    """Processes, each with its own engine, on the class's server."""

    def test_processes_never_exceed_the_capacity(self):
        url = self.engine.url.render_as_string(hide_password=False)
        batches = [WINDOWS[i:] + WINDOWS[:i] for i in range(6)]
        spawn = multiprocessing.get_context('spawn')
        with spawn.Pool(len(batches)) as pool:
            results = pool.starmap(create_in_process,
                                   [(url, batch) for batch in batches])
        outcomes = [outcome for batch in results for outcome in batch]
        assert_capacity_held(self, outcomes,
                             sum(len(batch) for batch in batches))


class TestProcessesPostgreSQL(_ProcessesMixin, base.PostgreSQLTestCase):
    pass


class TestProcessesMySQL(_ProcessesMixin, base.MySQLTestCase):
    pass
