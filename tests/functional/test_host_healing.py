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

"""The host monitor heals bookings on failed hosts, on SQLite, PostgreSQL
and MariaDB.

The real plugins book and heal; Nova is a fake that answers
``compute_services`` and records the aggregate calls (the Nova harness
tests, ``test_nova_host_healing``, use real Nova). Several monitors over
one DB, at once in threads, never double-book a replacement.
"""

from concurrent import futures
import datetime
import uuid

from oslo_messaging.notify import _impl_test as test_notifier
import sqlalchemy as sa

from db import api as db_api
from db import models
from reservation_ext import clock as clock_mod
from reservation_ext.engine import host_monitor
from reservation_ext.leases import notifications
from reservation_ext.leases import views
from reservation_ext.plugins import physical_host
from reservation_ext.plugins import virtual_instance
from reservation_ext.store import hosts as store_hosts
from tests import base
from tests.functional import test_planner
from tests.unit import test_engine

NOW = datetime.datetime(2030, 1, 1, 12, 0)
HOUR = datetime.timedelta(hours=1)
HOSTS = models.ComputeHost.__table__
LEASES = models.Lease.__table__
RESERVATIONS = models.Reservation.__table__
ALLOCATIONS = models.HostAllocation.__table__
GPU = '["=", "$gpu", "true"]'


class FakeNova:
    """Nova's services as ``state`` says, aggregates as dicts."""

    def __init__(self, names):
        self.state = {name: ('up', 'enabled') for name in names}
        self.aggregates = {}

    def compute_services(self):
        return [{'host': name, 'state': state, 'status': status}
                for name, (state, status) in sorted(self.state.items())]

    def ensure_aggregate(self, name, metadata=None):
        return self.aggregates.setdefault(
            name, {'id': len(self.aggregates) + 1, 'name': name,
                   'hosts': [], 'metadata': dict(metadata or {})})

    def add_to_aggregate(self, aggregate, host, missing_ok=False):
        if host not in aggregate['hosts']:
            aggregate['hosts'].append(host)

    def remove_from_aggregate(self, aggregate, host):
        if host in aggregate['hosts']:
            aggregate['hosts'].remove(host)


class CountingNova(FakeNova):
    """A FakeNova that counts the reads of the services."""

    reads = 0

    def compute_services(self):
        self.reads += 1
        return super().compute_services()


class Clients:
    def __init__(self, nova):
        self.nova = nova


class _HealingTests:
    """compute-1..4: 1-3 with a gpu (8 vcpus), 4 without (16 vcpus)."""

    # Healers at once in threads; SQLite in memory has one connection,
    # so there they take turns.
    THREADS = True

    def setUp(self):
        super().setUp()
        test_notifier.reset()
        self.addCleanup(test_notifier.reset)
        self.clock = clock_mod.ManualClock(NOW)
        self.conf = test_engine.make_conf(self, host_monitor=True,
                                          host_monitor_interval=0,
                                          healing_interval=60)
        self.nova = FakeNova(['compute-%d' % i for i in range(1, 5)])
        self.plugins = {
            'physical:host': physical_host.PhysicalHostPlugin(
                self.conf, self.clock, Clients(self.nova)),
            'virtual:instance': virtual_instance.VirtualInstancePlugin(
                self.conf, self.clock, Clients(self.nova))}
        self.host_ids = {}
        with self.writer() as session:
            for i in range(1, 5):
                name = 'compute-%d' % i
                self.host_ids[name] = store_hosts.add_host(session, {
                    'hypervisor_hostname': name, 'service_name': name,
                    'vcpus': 8 if i < 4 else 16, 'memory_mb': 8192,
                    'local_gb': 100}, {'gpu': 'true' if i < 4 else 'false'})

    def writer(self):
        return db_api.writer(self.ctx, self.clock)

    def monitor(self):
        return host_monitor.HostMonitor(
            self.conf, self.clock, self.plugins, Clients(self.nova),
            notifications.get_notifier(self.conf))

    def lease(self, resource_type, values, start=NOW + HOUR, hours=2,
              status='PENDING'):
        """A lease of one reservation booked by its plugin; its ids."""
        plugin = self.plugins[resource_type]
        lease_id, reservation_id = str(uuid.uuid4()), str(uuid.uuid4())
        lease = {'id': lease_id, 'project_id': 'owner', 'projects': [],
                 'start_date': start, 'end_date': start + hours * HOUR,
                 'starts_later': start > NOW}
        with self.writer() as session:
            session.execute(sa.insert(LEASES).values(
                id=lease_id, name=lease_id, project_id='owner',
                start_date=lease['start_date'], end_date=lease['end_date'],
                status=status))
            session.execute(sa.insert(RESERVATIONS).values(
                id=reservation_id, lease_id=lease_id,
                resource_type=resource_type,
                status='active' if status == 'ACTIVE' else 'pending'))
            plugin.reserve(session, self.ctx, lease, reservation_id,
                           plugin.validate(values))
        return lease_id, reservation_id

    def host_lease(self, count=1, **kwargs):
        return self.lease('physical:host', {
            'min': count, 'max': count, 'resource_properties': GPU,
            'hypervisor_properties': ''}, **kwargs)

    def hosts_of(self, reservation_id):
        names = {v: k for k, v in self.host_ids.items()}
        with db_api.context_manager.reader.using(self.ctx) as session:
            return sorted(names[host] for host in session.scalars(
                sa.select(ALLOCATIONS.c.host_id).where(
                    ALLOCATIONS.c.reservation_id == reservation_id)))

    def view(self, lease_id):
        with db_api.context_manager.reader.using(self.ctx) as session:
            [lease] = views.lease_views_by_id(session, self.plugins,
                                              [lease_id])
        return lease

    def fail(self, name, state='down', status='enabled'):
        self.nova.state[name] = (state, status)

    def updates(self):
        return [message['payload'] for _ctx, message, _priority, _retry
                in test_notifier.NOTIFICATIONS
                if message['event_type'] == notifications.LEASE_UPDATE]

    def test_a_pending_host_booking_moves_to_a_free_matching_host(self):
        lease_id, reservation_id = self.host_lease()
        self.assertEqual(['compute-1'], self.hosts_of(reservation_id))
        self.fail('compute-1')
        self.monitor().run(self.ctx)
        self.assertEqual(['compute-2'], self.hosts_of(reservation_id))
        view = self.view(lease_id)
        self.assertFalse(view['degraded'])
        reservation = view['reservations'][0]
        self.assertFalse(reservation['missing_resources'])
        self.assertFalse(reservation['resources_changed'])
        self.assertEqual([], reservation['failed_hosts'])
        with db_api.context_manager.reader.using(self.ctx) as session:
            host = session.execute(sa.select(HOSTS).where(
                HOSTS.c.hypervisor_hostname == 'compute-1')).one()
        self.assertFalse(host.reservable)
        self.assertEqual(('down', NOW), (host.failure, host.failed_at))

    def test_a_disabled_service_fails_its_host_too(self):
        _lease_id, reservation_id = self.host_lease()
        self.fail('compute-1', state='up', status='disabled')
        self.monitor().run(self.ctx)
        self.assertEqual(['compute-2'], self.hosts_of(reservation_id))

    def test_no_free_matching_host_degrades_the_lease_and_tells(self):
        lease_id, reservation_id = self.host_lease(count=3)
        self.fail('compute-2')
        self.monitor().run(self.ctx)
        # compute-4 has no gpu: nothing replaces compute-2.
        self.assertEqual(['compute-1', 'compute-2', 'compute-3'],
                         self.hosts_of(reservation_id))
        view = self.view(lease_id)
        self.assertTrue(view['degraded'])
        self.assertTrue(view['reservations'][0]['missing_resources'])
        self.assertEqual(['compute-2'],
                         view['reservations'][0]['failed_hosts'])
        [payload] = self.updates()
        self.assertTrue(payload['degraded'])
        self.assertEqual(lease_id, payload['id'])
        # A later poll finds nothing new to say.
        self.monitor().run(self.ctx)
        self.assertEqual(1, len(self.updates()))

    def test_the_host_back_clears_degraded(self):
        lease_id, reservation_id = self.host_lease(count=3)
        self.fail('compute-2')
        self.monitor().run(self.ctx)
        self.nova.state['compute-2'] = ('up', 'enabled')
        self.monitor().run(self.ctx)
        view = self.view(lease_id)
        self.assertFalse(view['degraded'])
        self.assertFalse(view['reservations'][0]['missing_resources'])
        self.assertEqual([], view['reservations'][0]['failed_hosts'])
        self.assertEqual([True, False],
                         [payload['degraded'] for payload in self.updates()])
        with db_api.context_manager.reader.using(self.ctx) as session:
            self.assertTrue(session.scalar(sa.select(HOSTS.c.reservable)
                                           .where(HOSTS.c.service_name ==
                                                  'compute-2')))

    def test_a_replacement_found_later_clears_degraded(self):
        lease_id, reservation_id = self.host_lease(count=2)
        _other, blocker = self.host_lease(count=1)
        self.fail('compute-1')
        self.monitor().run(self.ctx)
        self.assertTrue(self.view(lease_id)['degraded'])
        with self.writer() as session:
            session.execute(sa.delete(LEASES).where(LEASES.c.id == _other))
        self.monitor().run(self.ctx)
        self.assertEqual(['compute-2', 'compute-3'],
                         self.hosts_of(reservation_id))
        self.assertFalse(self.view(lease_id)['degraded'])

    def test_the_host_back_keeps_the_replacement(self):
        _lease_id, reservation_id = self.host_lease()
        self.fail('compute-1')
        self.monitor().run(self.ctx)
        self.nova.state['compute-1'] = ('up', 'enabled')
        self.monitor().run(self.ctx)
        self.assertEqual(['compute-2'], self.hosts_of(reservation_id))

    def test_a_booking_beyond_the_healing_interval_waits_for_its_time(self):
        start = NOW + 5 * HOUR
        lease_id, reservation_id = self.host_lease(start=start)
        self.fail('compute-1')
        self.monitor().run(self.ctx)
        self.assertEqual(['compute-1'], self.hosts_of(reservation_id))
        self.assertEqual(['compute-1'],
                         self.view(lease_id)['reservations'][0][
                             'failed_hosts'])
        self.clock.set(start - HOUR)
        self.monitor().run(self.ctx)
        self.assertEqual(['compute-2'], self.hosts_of(reservation_id))

    def test_an_active_host_lease_gets_the_replacement_in_its_aggregate(self):
        lease_id, reservation_id = self.host_lease(
            start=NOW - HOUR, status='ACTIVE')
        aggregate = self.nova.ensure_aggregate(reservation_id)
        aggregate['hosts'].append('compute-1')
        self.fail('compute-1')
        self.monitor().run(self.ctx)
        self.assertEqual(['compute-2'], self.hosts_of(reservation_id))
        self.assertEqual(['compute-2'], aggregate['hosts'])
        self.assertIn('compute-1', self.nova.aggregates['freepool']['hosts'])
        view = self.view(lease_id)
        self.assertFalse(view['degraded'])
        self.assertTrue(view['reservations'][0]['resources_changed'])
        with db_api.context_manager.reader.using(self.ctx) as session:
            row = session.execute(sa.select(ALLOCATIONS).where(
                ALLOCATIONS.c.reservation_id == reservation_id)).one()
        # The replacement's part starts now; the Nova side is done.
        self.assertEqual((NOW, None), (row.start_date, row.moved_from))
        [payload] = self.updates()
        self.assertTrue(payload['reservations'][0]['resources_changed'])

    def test_a_move_whose_nova_side_failed_is_done_by_a_later_poll(self):
        _lease_id, reservation_id = self.host_lease(
            start=NOW - HOUR, status='ACTIVE')
        add = self.nova.add_to_aggregate
        self.nova.add_to_aggregate = None   # Nova fails: not callable.
        self.fail('compute-1')
        self.monitor().run(self.ctx)
        self.nova.add_to_aggregate = add
        self.monitor().run(self.ctx)
        self.assertNotIn('compute-2',
                         self.nova.aggregates[reservation_id]['hosts'])
        # The claim of the engine that failed expires.
        self.clock.set(NOW + datetime.timedelta(
            seconds=self.conf.reservation.event_claim_timeout + 1))
        self.monitor().run(self.ctx)
        self.assertEqual(['compute-2'],
                         self.nova.aggregates[reservation_id]['hosts'])

    def test_a_pending_server_booking_moves_with_its_size(self):
        lease_id, reservation_id = self.lease('virtual:instance', {
            'server_id': str(uuid.uuid4()), 'vcpus': 1, 'memory_mb': 1024,
            'disk_gb': 60})
        self.assertEqual(['compute-1'], self.hosts_of(reservation_id))
        _other, reservation = self.lease('virtual:instance', {
            'server_id': str(uuid.uuid4()), 'vcpus': 1, 'memory_mb': 1024,
            'disk_gb': 50})
        # Neither compute-1 nor then compute-2 has room for both (100 GB).
        self.assertEqual(['compute-2'], self.hosts_of(reservation))
        self.fail('compute-1')
        self.monitor().run(self.ctx)
        self.assertEqual(['compute-3'], self.hosts_of(reservation_id))
        self.assertEqual(
            'compute-3', self.view(lease_id)['reservations'][0]['host'])

    def capacity(self, affinity):
        return self.lease('virtual:instance', {
            'amount': 2, 'affinity': affinity, 'vcpus': 1,
            'memory_mb': 512, 'disk_gb': 1})

    def test_an_anti_affinity_seat_moves_to_a_host_without_its_other(self):
        _lease_id, reservation_id = self.capacity(False)
        self.assertEqual(['compute-1', 'compute-2'],
                         self.hosts_of(reservation_id))
        server_id = str(uuid.uuid4())
        with self.writer() as session:
            session.execute(sa.update(ALLOCATIONS).where(
                ALLOCATIONS.c.reservation_id == reservation_id,
                ALLOCATIONS.c.host_id == self.host_ids['compute-1'])
                .values(server_id=server_id))
        self.fail('compute-1')
        self.monitor().run(self.ctx)
        self.assertEqual(['compute-2', 'compute-3'],
                         self.hosts_of(reservation_id))
        # The seat keeps its server (still on compute-1 until evacuated).
        with db_api.context_manager.reader.using(self.ctx) as session:
            self.assertEqual(self.host_ids['compute-3'], session.scalar(
                sa.select(ALLOCATIONS.c.host_id).where(
                    ALLOCATIONS.c.server_id == server_id)))

    def test_affinity_seats_move_together_to_one_host(self):
        _lease_id, reservation_id = self.capacity(True)
        self.assertEqual(['compute-1', 'compute-1'],
                         self.hosts_of(reservation_id))
        self.fail('compute-1')
        self.monitor().run(self.ctx)
        self.assertEqual(['compute-2', 'compute-2'],
                         self.hosts_of(reservation_id))

    def test_concurrent_healers_never_double_book(self):
        # Two one-host leases in each of two windows, on compute-1 and
        # compute-2, which fail: compute-3 alone can replace, once per
        # window.
        reservations = [self.host_lease(start=NOW + k * 3 * HOUR)[1]
                        for k in range(2) for _host in range(2)]
        self.fail('compute-1')
        self.fail('compute-2')
        self.conf.set_override('healing_interval', 0, 'reservation')
        monitors = [self.monitor() for _ in range(6)]
        with futures.ThreadPoolExecutor(6 if self.THREADS else 1) as pool:
            list(pool.map(lambda monitor: monitor.run(self.ctx), monitors))
        with self.engine.connect() as conn:
            self.assertEqual([], test_planner.overlapping_allocations(conn))
        hosts = [self.hosts_of(reservation_id)
                 for reservation_id in reservations]
        self.assertEqual(2, hosts.count(['compute-3']))
        with db_api.context_manager.reader.using(self.ctx) as session:
            missing = session.scalars(sa.select(RESERVATIONS.c.id).where(
                RESERVATIONS.c.missing_resources)).all()
        # The two that found no replacement, one per window, and no other.
        self.assertEqual(2, len(missing))
        self.assertEqual(
            [['compute-3']] * 2, [self.hosts_of(reservation_id) for
                                  reservation_id in reservations
                                  if reservation_id not in missing])

    def test_one_engine_of_many_reads_nova_per_interval(self):
        self.conf.set_override('host_monitor_interval', 60, 'reservation')
        self.nova = CountingNova(self.nova.state)
        monitors = [self.monitor() for _ in range(4)]
        with futures.ThreadPoolExecutor(4 if self.THREADS else 1) as pool:
            list(pool.map(lambda monitor: monitor.run(self.ctx), monitors))
        self.assertEqual(1, self.nova.reads)
        self.clock.set(NOW + datetime.timedelta(seconds=59))
        for monitor in monitors:
            monitor.run(self.ctx)
        self.assertEqual(1, self.nova.reads)
        self.clock.set(NOW + datetime.timedelta(seconds=60))
        for monitor in monitors:
            monitor.run(self.ctx)
        self.assertEqual(2, self.nova.reads)

    def test_interval_zero_reads_nova_at_every_poll_of_every_engine(self):
        self.nova = CountingNova(self.nova.state)
        for monitor in (self.monitor(), self.monitor()):
            monitor.run(self.ctx)
        self.assertEqual(2, self.nova.reads)

    def test_a_degraded_reservation_is_searched_again_once_per_interval(
            self):
        self.conf.set_override('host_monitor_interval', 60, 'reservation')
        lease_id, reservation_id = self.host_lease(count=2)
        other_id, _other = self.host_lease(count=1)
        self.fail('compute-1')
        monitor = self.monitor()
        monitor.run(self.ctx)
        self.assertTrue(self.view(lease_id)['degraded'])
        # compute-3 frees up: polls within the interval do not look.
        with self.writer() as session:
            session.execute(sa.delete(LEASES).where(LEASES.c.id == other_id))
        self.clock.set(NOW + datetime.timedelta(seconds=30))
        monitor.run(self.ctx)
        self.assertTrue(self.view(lease_id)['degraded'])
        self.assertIn('compute-1', self.hosts_of(reservation_id))
        # The next interval's poll, of any engine, takes it.
        self.clock.set(NOW + datetime.timedelta(seconds=60))
        self.monitor().run(self.ctx)
        self.assertEqual(['compute-2', 'compute-3'],
                         self.hosts_of(reservation_id))
        self.assertFalse(self.view(lease_id)['degraded'])


class HealingSQLiteTest(_HealingTests, base.DBTestCase):
    THREADS = False


class HealingPostgreSQLTest(_HealingTests, base.PostgreSQLTestCase):
    pass


class HealingMariaDBTest(_HealingTests, base.MySQLTestCase):
    pass
