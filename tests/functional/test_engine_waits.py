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

"""An event that waits for its action's result holds no worker.

Engines run as threads (:meth:`Engine.run`) on an SQLite file DB,
PostgreSQL and MariaDB. The actions are those of :class:`VolumePlugin`:
its start asks for a volume and waits, through the clients' own
:func:`~reservation_ext.clients.polling.wait_for`, until the volume is
available. The volumes are a table of statuses that the test sets
(:class:`Volumes`), read by the engines through the same client method
as Cinder's (``volume_status``).
"""

import threading

from db import api as db_api
from reservation_ext.clients import deferral
from reservation_ext.clients import plugin_clients
from reservation_ext.clients import polling
from reservation_ext import context
from reservation_ext.states import EventStatus
from reservation_ext.states import EventType
from reservation_ext.states import LeaseStatus
from reservation_ext.store import leases as store_leases
from tests import base
from tests import fixtures as test_fixtures
from tests.functional import test_engine_concurrency as concurrency
from tests.functional import test_engine_multi as multi
from tests import plugins as test_plugins
from tests.unit import test_engine

CLOCK = concurrency.CLOCK
MINUTE = concurrency.MINUTE
# Seconds a start waits for its volume before the attempt fails.
WAIT_TIMEOUT = 600


class Volumes:
    """The statuses of the test's volumes, by reservation id.

    A volume is ``creating`` until the test makes it ``available``.
    """

    def __init__(self):
        self.statuses = {}
        self.lock = threading.Lock()

    def volume_status(self, volume_id):
        """Return the volume's status, as Cinder's client does."""
        with self.lock:
            return self.statuses.get(volume_id, 'creating')

    def make_available(self, volume_id):
        with self.lock:
            self.statuses[volume_id] = 'available'


class VolumePlugin(test_plugins.JournalPlugin):
    """The journal plugin, whose starts and ends wait for a volume.

    Each start journals ``attempt_on_start``, then waits for the volume
    named by its reservation id, then journals ``on_start``. Each end
    does the same with the volume ``end-<reservation id>``.
    """

    def __init__(self, conf, clock, volumes, timeout):
        super().__init__(conf, clock, plugin_clients.PluginClients(
            conf, nova=concurrency.NoServers(), cinder=volumes))
        self.timeout = timeout

    def on_start(self, ctx, lease, reservation):
        """Wait until the volume is available, start."""
        self._wait('on_start', reservation['id'], reservation['id'])

    def on_end(self, ctx, lease, reservation):
        """Wait until the end's volume is available, end."""
        self._wait('on_end', reservation['id'], 'end-' + reservation['id'])

    def _wait(self, action, reservation_id, volume_id):
        self._write('attempt_' + action, reservation_id)
        polling.wait_for(
            lambda: self.clients.cinder.volume_status(volume_id),
            lambda status: status == 'available', self.timeout, 0.05,
            lambda status: 'volume %s is %s' % (volume_id, status),
            deferral.Wait(deferral.VOLUME, volume_id, pending=('creating',)))
        self._write(action, reservation_id)


class _Engines(concurrency._Engines):
    """Engines as threads, whose plugin is :class:`VolumePlugin`."""

    def __init__(self, test):
        super().__init__(test)
        self.volumes = Volumes()
        self.timeout = WAIT_TIMEOUT

    def plugin(self, conf):
        """Return the plugin of an engine with the options ``conf``."""
        return VolumePlugin(conf, CLOCK, self.volumes, self.timeout)

    def stop(self, name):
        """Stop one engine and wait until it has returned."""
        self.stops[name].set()
        self.threads[name].join(multi.WAIT)


def _start(lease_id):
    """Return the row of a lease's start event."""
    return concurrency._event(lease_id, EventType.START_LEASE)


def _waits(lease_id):
    """Return whether a lease's start is recorded as waiting."""
    start = _start(lease_id)
    return (start['status'] == EventStatus.IN_PROGRESS and
            start['wait_deadline'] is not None)


def _claimable():
    """Return the ids of the events that a claim would take now."""
    with db_api.context_manager.reader.using(
            context.get_admin_context()) as session:
        return store_leases.claimable_events(session, CLOCK.now())


def _starting(count):
    """Create ``count`` leases due to start; return their ids."""
    now = CLOCK.now()
    return [test_engine.create_lease(start=now - MINUTE,
                                     end=now + test_engine.HOUR)
            for _ in range(count)]


class _WaitsMixin:
    """The tests, on the DB of :meth:`use_database`."""

    def setUp(self):
        super().setUp()
        self.use_database()
        self.useFixture(test_fixtures.TestPlugins())
        self.engines = _Engines(self)

    def test_a_start_that_waits_holds_no_worker(self):
        (waiting, volume), (other, _) = _starting(2)
        self.engines.start('one', engine_workers=1)
        multi._wait_for(lambda: _waits(waiting), 'the start to wait')
        multi._wait_for(lambda: _waits(other), 'the other start to wait')
        self.assertEqual(LeaseStatus.STARTING,
                         concurrency._status(waiting))
        self.assertIsNone(_start(waiting)['claim_expires_at'])
        with db_api.context_manager.reader.using(
                context.get_admin_context()) as session:
            running, waits, since = store_leases.events_under_way(session)
        self.assertEqual((0, 2), (running, waits))
        self.assertEqual(min(_start(waiting)['waits_since'],
                             _start(other)['waits_since']), since)

        self.engines.volumes.make_available(volume)
        multi._wait_for(
            lambda: concurrency._status(waiting) == LeaseStatus.ACTIVE,
            'the start once its volume is available')
        self.assertEqual(EventStatus.DONE, _start(waiting)['status'])
        self.assertIsNone(_start(waiting)['waits'])
        self.assertEqual(LeaseStatus.STARTING, concurrency._status(other))
        # Asked once, finished once: the run after the wait is no retry.
        self.assertEqual(2, test_plugins.attempts('on_start', volume))
        self.assertEqual(0, _start(waiting)['attempts'])

    def test_another_engine_finishes_a_wait_that_an_engine_left(self):
        [(lease_id, volume)] = _starting(1)
        self.engines.start('first')
        multi._wait_for(lambda: _waits(lease_id), 'the start to wait')
        self.engines.stop('first')

        self.engines.volumes.make_available(volume)
        self.engines.start('second')
        multi._wait_for(
            lambda: concurrency._status(lease_id) == LeaseStatus.ACTIVE,
            'the second engine to finish the start')
        self.assertTrue(_start(lease_id)['claimed_by'].startswith('second:'))
        self.assertEqual([], self.engines.overlaps)

    def test_a_wait_past_its_timeout_is_a_failed_attempt(self):
        [(lease_id, volume)] = _starting(1)
        self.engines.timeout = 1
        self.engines.start('one', event_max_attempts=1)
        multi._wait_for(
            lambda: concurrency._status(lease_id) == LeaseStatus.ERROR,
            'the late start to fail')
        start = _start(lease_id)
        self.assertEqual(EventStatus.ERROR, start['status'])
        self.assertEqual(1, start['attempts'])
        self.assertIn('in vain for volume %s' % volume, start['message'])
        self.assertIsNone(start['waits'])

    def test_a_start_waits_for_an_end_that_waits_on_its_host(self):
        now = CLOCK.now()
        ending, before = concurrency._ending_lease(now - MINUTE)
        [(starting, after)] = _starting(1)
        self.engines.volumes.make_available(after)
        concurrency._book('shared-host', before, after)
        end = concurrency._event(ending, EventType.END_LEASE)
        # Before any engine: the end is claimable, the start behind it not.
        self.assertEqual({end['id']}, _claimable() & {
            end['id'], _start(starting)['id']})
        self.engines.start('one')
        multi._wait_for(lambda: concurrency._event(
            ending, EventType.END_LEASE)['wait_deadline'] is not None,
            'the end to wait')
        self.engines.wait_polls()
        self.assertEqual(EventStatus.UNDONE, _start(starting)['status'])
        self.assertEqual(0, test_plugins.attempts('on_start', after))
        # Neither the waiting end nor the start behind it is claimable.
        self.assertEqual(set(), {_start(starting)['id'], end['id']} &
                         _claimable())

        self.engines.volumes.make_available('end-' + before)
        multi._wait_for(
            lambda: concurrency._status(starting) == LeaseStatus.ACTIVE,
            'the start after the end')
        end = concurrency._event(ending, EventType.END_LEASE)
        self.assertEqual(EventStatus.DONE, end['status'])
        self.assertEqual(LeaseStatus.TERMINATED, concurrency._status(ending))


class WaitsSQLiteTest(_WaitsMixin, base.TestCase):
    """On an SQLite file, which threads share as processes do."""

    def use_database(self):
        self.useFixture(test_fixtures.Database())


class WaitsPostgreSQLTest(_WaitsMixin, base.PostgreSQLTestCase):

    def use_database(self):
        pass


class WaitsMySQLTest(_WaitsMixin, base.MySQLTestCase):

    def use_database(self):
        pass
