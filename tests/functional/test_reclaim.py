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

"""The engine's reclaim over the leases DB, with Nova answered from memory.

What Nova does with a preempted server is tested in Nova's harness
(test_nova_preemptible); here, the claims and records of the reclaim and
how much it stops on a host with slices. compute-1 has 8 vCPUs (32 with
Nova's default ratio), 8192 MB (7680 usable: the engine's process counts
Nova's default reserve of 512 MB) and 100 GB; the lead time is 600 s.
"""

import datetime

import jsonschema
from oslo_config import cfg
from oslo_messaging.notify import _impl_test as test_notifier
import sqlalchemy as sa

from db import api as db_api
from db import models
from reservation_ext import clock as clock_mod
from reservation_ext.engine import reclaim
from reservation_ext.engine import runner
from reservation_ext import exceptions
from reservation_ext.leases import notification_schema
from reservation_ext.leases import notifications
from reservation_ext import plugins as plugins_mod
from reservation_ext.states import EventStatus
from reservation_ext.states import EventType
from reservation_ext.states import LeaseStatus
from reservation_ext.store import hosts as store_hosts
from tests import base
from tests import bookings
from tests import fixtures as test_fixtures
from tests import plugins as test_plugins
from tests.unit import test_engine

NOW = datetime.datetime(2030, 1, 1, 12, 0)
MINUTE = datetime.timedelta(minutes=1)
ALLOCATIONS = models.HostAllocation.__table__
REQUESTS = models.InstanceReservation.__table__
PREEMPTIBLE = {'reservation:preemptible': 'true'}


def server(server_id, memory_mb, created, extra_specs=None, hints=None):
    """A server as Nova's 2.100 view shows it (the fields used)."""
    return {'id': server_id, 'tenant_id': 'other', 'created': created,
            'flavor': {'vcpus': 1, 'ram': memory_mb, 'disk': 10,
                       'ephemeral': 0, 'swap': 0,
                       'extra_specs': extra_specs or {}},
            'scheduler_hints': hints or {}}


class FakeNova:
    """The Nova calls of the reclaim, answered from ``servers``."""

    def __init__(self, servers):
        self.servers = servers
        self.calls = []
        self.failures = 0

    def servers_with_hints(self):
        # The engine's survey of preemptible work.
        return list(self.servers)

    def servers_with_hints_on(self, service_host):
        self.calls.append(('list', service_host))
        if self.failures:
            self.failures -= 1
            raise exceptions.PluginError('Nova is down')
        return list(self.servers)

    def delete_servers(self, server_ids):
        self.calls.append(('delete', server_ids))
        self.servers = [s for s in self.servers if s['id'] not in server_ids]

    def shelve_offload(self, server_id):
        self.calls.append(('shelve', server_id))
        self.servers = [s for s in self.servers if s['id'] != server_id]


class Clients:
    def __init__(self, nova):
        self.nova = nova


class _ReclaimBase(base.DBTestCase):
    """compute-1 with two preemptible servers and an ordinary one."""

    def setUp(self):
        super().setUp()
        test_notifier.reset()
        self.addCleanup(test_notifier.reset)
        self.clock = clock_mod.ManualClock(NOW)
        self.conf = test_engine.make_conf(self, preemption_lead_time=600)
        with self.writer() as session:
            self.host_id = store_hosts.add_host(session, {
                'hypervisor_hostname': 'compute-1',
                'service_name': 'compute-1', 'vcpus': 8,
                'memory_mb': 8192, 'local_gb': 100})
        self.nova = FakeNova([
            server('old', 4096, '2030-01-01T10:00:00Z', PREEMPTIBLE),
            server('new', 2048, '2030-01-01T11:00:00Z',
                   hints={'preemptible': ['true']}),
            server('plain', 1024, '2030-01-01T09:00:00Z')])
        self.reclaimer = reclaim.Reclaimer(
            self.conf, self.clock, Clients(self.nova),
            notifications.get_notifier(self.conf))

    def writer(self):
        return db_api.writer(self.ctx, self.clock)

    def book(self, start, memory_mb=None, status='pending', server_id=None):
        """A booking of compute-1 from ``start`` for an hour.

        The whole host, or a slice of ``memory_mb`` (with its server).
        """
        with self.writer() as session:
            lease_id, reservation_id = bookings.insert(
                session, self.host_id, start, whole_host=memory_mb is None,
                status=status, resource_type='virtual:instance',
                size=(1, memory_mb or 0, 10))
            if server_id:
                session.execute(sa.insert(REQUESTS).values(
                    id=reservation_id, reservation_id=reservation_id,
                    vcpus=1, memory_mb=memory_mb, disk_gb=10,
                    server_id=server_id))
        return lease_id, reservation_id

    def stopped(self):
        return [call for call in self.nova.calls if call[0] != 'list']

    def reclaimed_for(self, allocation_id):
        with db_api.context_manager.reader.using(self.ctx) as session:
            return session.scalar(sa.select(ALLOCATIONS.c.reclaimed_for)
                                  .where(ALLOCATIONS.c.id == allocation_id))

    def flags(self, **overrides):
        for name, value in overrides.items():
            self.conf.set_override(name, value, group='reservation')


class ReclaimTest(_ReclaimBase):

    def test_a_slice_stops_only_the_newest_preemptibles_it_needs(self):
        # 1024 + 4096 + 2048 in use; 2048 more needed: 9216 > 8192.
        lease_id, booking = self.book(NOW + 5 * MINUTE, memory_mb=2048)
        self.assertEqual(1, self.reclaimer.run(self.ctx))
        self.assertEqual([('delete', ['new'])], self.stopped())
        self.assertEqual(NOW + 5 * MINUTE, self.reclaimed_for(booking))
        [(_ctx, message, priority, _retry)] = test_notifier.NOTIFICATIONS
        self.assertEqual(('instance.preempted', 'INFO', 'reservation'),
                         (message['event_type'], priority,
                          message['publisher_id']))
        self.assertEqual({
            'server_id': 'new', 'project_id': 'other', 'host': 'compute-1',
            'lease_id': lease_id, 'reservation_id': booking,
            'action': 'delete', 'event_time': '2030-01-01T12:00:00.000000',
            'reason': 'booking',
            'booking_start': '2030-01-01T12:05:00.000000',
            'payload_version': '1.2'}, message['payload'])
        jsonschema.validate(message['payload'],
                            notification_schema.PREEMPTED)

    def test_a_whole_host_booking_stops_every_preemptible(self):
        self.flags(preemptible_on_reclaim='shelve')
        self.book(NOW + 10 * MINUTE)
        self.reclaimer.run(self.ctx)
        self.assertEqual([('shelve', 'new'), ('shelve', 'old')],
                         self.stopped())

    def test_a_booking_beyond_the_lead_time_is_left_alone(self):
        self.book(NOW + 11 * MINUTE)
        self.assertEqual(0, self.reclaimer.run(self.ctx))
        self.assertEqual([], self.nova.calls)

    def test_a_booking_is_reclaimed_once_per_start(self):
        _lease, booking = self.book(NOW + 5 * MINUTE)
        self.reclaimer.run(self.ctx)
        self.assertEqual(0, self.reclaimer.run(self.ctx))
        self.assertEqual(1, len(self.nova.calls) - len(self.stopped()))
        # Moved by an update: reclaimed again for its new start.
        with self.writer() as session:
            session.execute(sa.update(ALLOCATIONS).values(
                start_date=NOW + 8 * MINUTE))
        self.assertEqual(1, self.reclaimer.run(self.ctx))
        self.assertEqual(NOW + 8 * MINUTE, self.reclaimed_for(booking))

    def test_a_failed_host_is_retried_once_its_claim_expires(self):
        _lease, booking = self.book(NOW + 5 * MINUTE)
        self.nova.failures = 1
        self.assertEqual(0, self.reclaimer.run(self.ctx))
        # Still claimed: another poll (or engine) leaves it alone.
        self.assertEqual(0, self.reclaimer.run(self.ctx))
        self.assertEqual([('list', 'compute-1')], self.nova.calls)
        self.clock.advance(seconds=301)
        self.assertEqual(1, self.reclaimer.run(self.ctx))
        self.assertEqual(NOW + 5 * MINUTE, self.reclaimed_for(booking))

    def test_the_memory_nova_keeps_for_the_host_is_not_lent(self):
        # 1024 + 4096 + 2048 in use, 1024 more needed: 8192 is the host's
        # size, but 512 MB of it are Nova's reserve.
        self.book(NOW + 5 * MINUTE, memory_mb=1024)
        self.reclaimer.run(self.ctx)
        self.assertEqual([('delete', ['new'])], self.stopped())

    def test_the_reserve_is_read_from_novas_options_when_registered(self):
        self.conf.register_opt(cfg.IntOpt('reserved_host_memory_mb',
                                          default=0))
        self.book(NOW + 5 * MINUTE, memory_mb=1024)
        self.reclaimer.run(self.ctx)
        self.assertEqual([], self.stopped())

    def test_a_slice_server_is_counted_once(self):
        # The running slice's server "mine" (2048) is in the slices; with
        # the next slice (2048) and the preemptible (3584): 7680 fits.
        self.nova.servers = [
            server('mine', 2048, '2030-01-01T09:00:00Z'),
            server('old', 3584, '2030-01-01T10:00:00Z', PREEMPTIBLE)]
        self.book(NOW - 30 * MINUTE, memory_mb=2048, status='active',
                  server_id='mine')
        self.book(NOW + 5 * MINUTE, memory_mb=2048)
        self.reclaimer.run(self.ctx)
        self.assertEqual([], self.stopped())

    def test_a_reserved_server_on_a_preemptible_flavor_is_never_stopped(
            self):
        # "mine" is its slice's server (2048), booted on a preemptible
        # flavor; its lease ends in 5 minutes, when a whole-host booking
        # starts: the reclaim now stops only the preemptible "old", and
        # the end of its lease deals with "mine".
        self.nova.servers = [
            server('mine', 2048, '2030-01-01T11:00:00Z', PREEMPTIBLE,
                   {'reserved': ['True']}),
            server('old', 3584, '2030-01-01T10:00:00Z', PREEMPTIBLE)]
        self.book(NOW - 55 * MINUTE, memory_mb=2048, status='active',
                  server_id='mine')
        self.book(NOW + 5 * MINUTE)
        self.reclaimer.run(self.ctx)
        self.assertEqual([('delete', ['old'])], self.stopped())

    def test_a_server_on_a_capacity_reservations_seat_is_counted_once(self):
        self.nova.servers = [
            server('seated', 2048, '2030-01-01T09:00:00Z',
                   {'reservation:id': 'r1'}),
            server('old', 3584, '2030-01-01T10:00:00Z', PREEMPTIBLE)]
        self.book(NOW - 30 * MINUTE, memory_mb=2048, status='active')
        self.book(NOW + 5 * MINUTE, memory_mb=2048)
        self.reclaimer.run(self.ctx)
        self.assertEqual([], self.stopped())

    def test_a_lease_start_reclaims_its_bookings_whoever_holds_them(self):
        lease_id, booking = self.book(NOW)
        with self.writer() as session:
            session.execute(sa.update(ALLOCATIONS).values(
                reclaim_claimed_until=NOW + 5 * MINUTE))
        self.reclaimer.reclaim_lease(self.ctx, lease_id)
        self.assertEqual([('delete', ['new']), ('delete', ['old'])],
                         self.stopped())
        self.assertEqual(NOW, self.reclaimed_for(booking))

    def test_a_lease_start_checks_its_hosts_again_after_the_lead_time(self):
        lease_id, booking = self.book(NOW + 5 * MINUTE)
        self.nova.servers = []
        self.reclaimer.run(self.ctx)
        # A preemptible the scheduler placed while the reclaim ran.
        self.nova.servers = [
            server('late', 2048, '2030-01-01T12:01:00Z', PREEMPTIBLE)]
        self.clock.advance(minutes=5)
        self.reclaimer.reclaim_lease(self.ctx, lease_id)
        self.assertEqual([('delete', ['late'])], self.stopped())

    def test_leases_starting_together_on_a_host_share_one_listing(self):
        first, _ = self.book(NOW, memory_mb=1024)
        second, booking = self.book(NOW, memory_mb=1024)
        self.reclaimer.reclaim_lease(self.ctx, first)
        self.reclaimer.reclaim_lease(self.ctx, second)
        self.assertEqual([('list', 'compute-1')], [
            call for call in self.nova.calls if call[0] == 'list'])
        self.assertEqual(NOW, self.reclaimed_for(booking))

    def test_a_booking_made_after_a_listing_gets_a_listing_of_its_own(self):
        first, _ = self.book(NOW, memory_mb=1024)
        self.reclaimer.reclaim_lease(self.ctx, first)
        # Booked at the same start once the host was listed: its size
        # was not counted then.
        later, _ = self.book(NOW, memory_mb=4096)
        self.reclaimer.reclaim_lease(self.ctx, later)
        self.assertEqual(2, sum(1 for call in self.nova.calls
                                if call[0] == 'list'))
        # The first listing made room for 1024 MB, the second for 4096.
        self.assertEqual([('delete', ['new']), ('delete', ['old'])],
                         self.stopped())

    def test_a_listing_before_a_bookings_start_does_not_serve_it(self):
        now_lease, _ = self.book(NOW, memory_mb=1024)
        soon_lease, _ = self.book(NOW + 5 * MINUTE, memory_mb=1024)
        self.reclaimer.reclaim_lease(self.ctx, now_lease)
        self.clock.advance(minutes=5)
        self.reclaimer.reclaim_lease(self.ctx, soon_lease)
        self.assertEqual(2, sum(1 for call in self.nova.calls
                                if call[0] == 'list'))

    def test_a_lease_start_fails_when_nova_does(self):
        lease_id, booking = self.book(NOW)
        self.nova.failures = 1
        self.assertRaises(exceptions.PluginError,
                          self.reclaimer.reclaim_lease, self.ctx, lease_id)
        self.assertIsNone(self.reclaimed_for(booking))


class EngineStartReclaimTest(_ReclaimBase):
    """A lease's start reclaims its hosts before its plugins act."""

    def setUp(self):
        self.useFixture(test_fixtures.TestPlugins())
        super().setUp()
        self.lease_id, reservation_id = test_engine.create_lease(start=NOW)
        with self.writer() as session:
            session.execute(sa.insert(ALLOCATIONS).values(
                id=reservation_id, host_id=self.host_id,
                reservation_id=reservation_id, start_date=NOW,
                end_date=NOW + 60 * MINUTE))
        self.engine = runner.Engine(
            self.conf, self.clock,
            plugins_mod.load_plugins(self.conf, self.clock),
            notifications.get_notifier(self.conf), engine_id='test',
            reclaimer=self.reclaimer)

    def started(self):
        return [action for action, _reservation in
                test_plugins.read_journal() if action == 'on_start']

    def test_the_start_stops_the_preemptibles_then_starts(self):
        while self.engine.run_once():
            pass
        self.assertEqual([('delete', ['new']), ('delete', ['old'])],
                         self.stopped())
        self.assertEqual(['on_start'], self.started())
        lease, _events, _reservations = test_engine.get_lease(self.lease_id)
        self.assertEqual(LeaseStatus.ACTIVE, lease['status'])

    def test_a_reclaim_that_fails_makes_the_start_retry(self):
        self.nova.failures = 1
        self.engine.run_once()
        lease, events, _reservations = test_engine.get_lease(self.lease_id)
        self.assertEqual(
            (LeaseStatus.STARTING, EventStatus.UNDONE, 1),
            (lease['status'], events[EventType.START_LEASE]['status'],
             events[EventType.START_LEASE]['attempts']))
        self.assertEqual([], self.started())
        self.clock.advance(seconds=3)
        while self.engine.run_once():
            pass
        self.assertEqual(['on_start'], self.started())
        self.assertEqual(2, len(self.stopped()))
