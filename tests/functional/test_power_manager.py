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

"""The engine's power manager on SQLite, PostgreSQL and MariaDB.

The leases DB and the claims are real; Nova is a fake that keeps the
nova-compute services and the servers per host, and the hardware the
Redfish emulator behind the ``redfish`` driver or, where a test needs to
count the switches or break a BMC, a driver that keeps each host's power
(the Nova harness tests, ``test_nova_power``, use real Nova and the
emulator). Several engines at once make each transition once.
"""

from concurrent import futures
import datetime
import threading
import uuid

import jsonschema
from oslo_messaging.notify import _impl_test as test_notifier
import sqlalchemy as sa

from db import api as db_api
from db import models
from reservation_ext import clock as clock_mod
from reservation_ext.engine import host_monitor
from reservation_ext.engine import power_manager
from reservation_ext.engine import reclaim
from reservation_ext.leases import notification_schema
from reservation_ext.leases import notifications
from reservation_ext.power import drivers
from reservation_ext.power import policy
from reservation_ext.power import redfish
from reservation_ext.store import hosts as store_hosts
from tests import base
from tests import power_emulator
from tests.unit import test_engine

NOW = datetime.datetime(2030, 1, 1, 12, 0)
MINUTE = datetime.timedelta(minutes=1)
HOUR = datetime.timedelta(hours=1)
HOSTS = models.ComputeHost.__table__
EVENTS = models.HostPowerEvent.__table__
LEASES = models.Lease.__table__
RESERVATIONS = models.Reservation.__table__
ALLOCATIONS = models.HostAllocation.__table__
PREEMPTIBLE = {'reservation:preemptible': 'true'}


class Hardware(drivers.PowerDriver):
    """Hosts' power as a BMC keeps it; ``changes``: the switches made.

    ``broken``: the hypervisor hostnames whose controller refuses.
    """

    def __init__(self, conf, names):
        super().__init__(conf)
        self.power = {name: drivers.ON for name in names}
        self.changes = []
        self.broken = set()
        self._lock = threading.Lock()

    def state(self, target):
        return self.power[target.hypervisor_hostname]

    def power_on(self, target):
        self._set(target, drivers.ON)

    def power_off(self, target):
        self._set(target, drivers.OFF)

    def _set(self, target, state):
        name = target.hypervisor_hostname
        if name in self.broken:
            raise drivers.PowerError('BMC of %s unreachable' % name)
        with self._lock:
            if self.power[name] != state:
                self.power[name] = state
                self.changes.append((name, state))


class FakeNova:
    """nova-compute services and servers per host."""

    def __init__(self, names):
        self.services = {name: {'id': name, 'host': name, 'state': 'up',
                                'status': 'enabled', 'disabled_reason': None}
                         for name in names}
        self.servers = {name: [] for name in names}
        self.stopped = []

    def compute_service(self, host):
        return dict(self.services[host])

    def compute_services(self):
        return [dict(service) for service in self.services.values()]

    def set_compute_service(self, host, enabled, reason=None):
        self.services[host].update(
            status='enabled' if enabled else 'disabled',
            disabled_reason=None if enabled else reason)

    def servers_with_hints_on(self, host):
        return list(self.servers[host])

    def servers_with_hints(self):
        return [server for servers in self.servers.values()
                for server in servers]

    def delete_servers(self, server_ids):
        self.stopped += server_ids
        for servers in self.servers.values():
            servers[:] = [s for s in servers if s['id'] not in server_ids]


class Clients:
    def __init__(self, nova):
        self.nova = nova


def server(server_id, extra_specs=None):
    return {'id': server_id, 'tenant_id': 'p', 'created': '2030-01-01',
            'flavor': {'vcpus': 1, 'ram': 512, 'disk': 1,
                       'extra_specs': extra_specs or {}}}


class _PowerTests:
    """compute-1..3, all on; no spare unless a test says."""

    THREADS = True

    def setUp(self):
        super().setUp()
        self.clock = clock_mod.ManualClock(NOW)
        self.conf = test_engine.make_conf(self, cleaning_time=0)
        self.conf.set_override('spare_hosts', 0, 'power')
        self.conf.set_override('spare_share', 0, 'power')
        self.names = ['compute-%d' % i for i in (1, 2, 3)]
        self.nova = FakeNova(self.names)
        self.hardware = Hardware(self.conf, self.names)
        self.host_ids = {}
        with db_api.writer(self.ctx, self.clock) as session:
            for name in self.names:
                self.host_ids[name] = store_hosts.add_host(session, {
                    'hypervisor_hostname': name, 'service_name': name,
                    'vcpus': 8, 'memory_mb': 8192, 'local_gb': 100}, {})

    def manager(self, engine_id='engine-1', driver=None):
        clients = Clients(self.nova)
        return power_manager.PowerManager(
            self.conf, self.clock, driver or self.hardware, clients,
            reclaim.Reclaimer(self.conf, self.clock, clients,
                              notifications.get_notifier(self.conf)),
            engine_id)

    def run_engines(self, count=1):
        managers = [self.manager('engine-%d' % i) for i in range(count)]
        with futures.ThreadPoolExecutor(
                count if self.THREADS else 1) as pool:
            return sum(pool.map(lambda m: m.run(self.ctx), managers))

    def host(self, name):
        with db_api.context_manager.reader.using(self.ctx) as session:
            return session.execute(sa.select(HOSTS).where(
                HOSTS.c.id == self.host_ids[name])).one()

    def events(self, name=None):
        with db_api.context_manager.reader.using(self.ctx) as session:
            stmt = sa.select(EVENTS).order_by(EVENTS.c.id)
            if name:
                stmt = stmt.where(EVENTS.c.host_id == self.host_ids[name])
            return session.execute(stmt).all()

    def book(self, name, start, hours=1):
        """A pending lease booking host ``name`` from ``start``."""
        lease_id, reservation_id = str(uuid.uuid4()), str(uuid.uuid4())
        with db_api.writer(self.ctx, self.clock) as session:
            session.execute(sa.insert(LEASES).values(
                id=lease_id, name=lease_id, project_id='owner',
                start_date=start, end_date=start + hours * HOUR,
                status='PENDING'))
            session.execute(sa.insert(RESERVATIONS).values(
                id=reservation_id, lease_id=lease_id,
                resource_type='physical:host', status='pending'))
            session.execute(sa.insert(ALLOCATIONS).values(
                id=str(uuid.uuid4()), host_id=self.host_ids[name],
                reservation_id=reservation_id, start_date=start,
                end_date=start + hours * HOUR))
        return lease_id

    def switch_off_all(self):
        self.run_engines()
        for name in self.names:
            self.nova.services[name]['state'] = 'down'

    def test_the_noop_driver_switches_nothing(self):
        manager = self.manager(driver=drivers.NoopDriver(self.conf))
        self.assertEqual(0, manager.run(self.ctx))
        self.assertEqual([], self.events())
        row = self.host('compute-1')
        self.assertEqual(('on', None), (row.power_state,
                                        row.power_next_action))
        self.assertEqual('enabled', self.nova.services['compute-1']['status'])

    def test_idle_hosts_are_switched_off_once_by_several_engines(self):
        self.book('compute-1', NOW + 2 * HOUR)
        self.assertEqual(3, self.run_engines(4))
        self.assertEqual(sorted((name, 'off') for name in self.names),
                         sorted(self.hardware.changes))
        events = self.events()
        self.assertEqual([('power_off', 'idle', 'done')] * 3,
                         [(e.action, e.reason, e.outcome) for e in events])
        self.assertEqual(['off'] * 3,
                         [self.host(name).power_state for name in self.names])
        service = self.nova.services['compute-1']
        self.assertEqual('disabled', service['status'])
        self.assertEqual('reservation-ext: powered off, idle until '
                         '2030-01-01T14:00:00.000000',
                         service['disabled_reason'])
        self.assertEqual('reservation-ext: powered off, idle',
                         self.nova.services['compute-2']['disabled_reason'])
        # The next poll records the next transition: compute-1 on for its
        # booking.
        self.assertEqual(0, self.run_engines())
        row = self.host('compute-1')
        self.assertEqual(('power_on', NOW + 2 * HOUR - 15 * MINUTE,
                          'booking'), (row.power_next_action,
                                       row.power_next_at,
                                       row.power_next_reason))
        self.assertIsNone(self.host('compute-2').power_next_action)

    def test_engines_switch_each_host_off_once_through_redfish(self):
        bmc = self.useFixture(power_emulator.RedfishEmulator(self.names))
        with db_api.writer(self.ctx, self.clock) as session:
            for name in self.names:
                store_hosts.set_capabilities(session, self.host_ids[name], {
                    'redfish_address': bmc.address,
                    'redfish_system_id': power_emulator.system_id(name)})
        driver = redfish.RedfishDriver(self.conf)
        managers = [self.manager('engine-%d' % i, driver) for i in range(3)]
        with futures.ThreadPoolExecutor(3 if self.THREADS else 1) as pool:
            self.assertEqual(3, sum(pool.map(
                lambda manager: manager.run(self.ctx), managers)))
        for name in self.names:
            bmc.wait_for_power_state(name, 'Off')
            self.assertEqual(['done'], [e.outcome for e in self.events(name)])
        # Switching a host that is off, off again changes nothing.
        driver.power_off(drivers.Target('compute-1', 'compute-1', {
            'redfish_address': bmc.address,
            'redfish_system_id': power_emulator.system_id('compute-1')}))
        self.assertEqual('Off', bmc.power_state('compute-1'))

    def test_a_host_coming_up_is_on_once_nova_reports_it_up(self):
        self.switch_off_all()
        self.book('compute-2', NOW + 10 * MINUTE)
        self.assertEqual(1, self.run_engines(3))
        self.assertEqual(('compute-2', 'on'), self.hardware.changes[-1])
        self.assertEqual('powering_on', self.host('compute-2').power_state)
        # Not up yet: it stays disabled and powering on.
        self.assertEqual(0, self.run_engines(3))
        self.nova.services['compute-2']['state'] = 'up'
        self.assertEqual(1, self.run_engines(3))
        self.assertEqual('on', self.host('compute-2').power_state)
        self.assertEqual('enabled',
                         self.nova.services['compute-2']['status'])
        [_off, on] = self.events('compute-2')
        self.assertEqual(('power_on', 'booking', 'done'),
                         (on.action, on.reason, on.outcome))

    def test_a_host_not_up_in_time_fails_and_recovers_when_it_is(self):
        self.switch_off_all()
        self.book('compute-2', NOW + 10 * MINUTE)
        self.run_engines()
        self.clock.set(NOW + datetime.timedelta(
            seconds=self.conf.power.power_on_timeout - 1))
        self.run_engines()
        self.assertIsNone(self.host('compute-2').failed_at)
        self.clock.set(NOW + datetime.timedelta(
            seconds=self.conf.power.power_on_timeout))
        self.assertEqual(1, self.run_engines(3))
        row = self.host('compute-2')
        self.assertEqual(('power', False), (row.failure, row.reservable))
        self.assertIn('not up 600 s after', row.power_failure)
        self.nova.services['compute-2']['state'] = 'up'
        self.run_engines()
        row = self.host('compute-2')
        self.assertEqual(('on', None, None, True),
                         (row.power_state, row.failure, row.failed_at,
                          row.reservable))

    def test_a_host_that_runs_a_server_stays_on_and_says_why(self):
        self.nova.servers['compute-1'] = [server('s-1')]
        self.run_engines()
        row = self.host('compute-1')
        self.assertEqual('on', row.power_state)
        self.assertEqual('not switched off: it runs server(s) that are not '
                         'preemptible: s-1', row.power_failure)
        self.assertEqual([], self.events('compute-1'))
        self.assertEqual('enabled', self.nova.services['compute-1']['status'])

    def test_a_host_kept_on_keeps_its_plan_until_a_booking_changes_it(self):
        self.nova.servers['compute-1'] = [server('s-1')]
        self.run_engines()
        self.clock.set(NOW + MINUTE)
        self.run_engines()
        row = self.host('compute-1')
        # Due since the first poll, and still kept on.
        self.assertEqual(('power_off', NOW), (row.power_next_action,
                                              row.power_next_at))
        self.assertIsNotNone(row.power_failure)
        self.book('compute-1', NOW + MINUTE, hours=2)
        self.run_engines()
        row = self.host('compute-1')
        self.assertEqual(('power_off', NOW + MINUTE + 2 * HOUR, None),
                         (row.power_next_action, row.power_next_at,
                          row.power_failure))

    def test_preemptible_servers_keep_their_host_on_by_default(self):
        self.nova.servers['compute-1'] = [server('s-1', PREEMPTIBLE)]
        self.run_engines()
        self.assertEqual('on', self.host('compute-1').power_state)
        self.assertIn('reclaim_preemptible_for_power is false',
                      self.host('compute-1').power_failure)
        self.assertEqual([], self.nova.stopped)

    def test_preemptible_servers_are_stopped_to_switch_off_if_told(self):
        self.conf.set_override('reclaim_preemptible_for_power', True,
                               'power')
        self.nova.servers['compute-1'] = [server('s-1', PREEMPTIBLE)]
        test_notifier.reset()
        self.addCleanup(test_notifier.reset)
        self.run_engines()
        self.assertEqual(['s-1'], self.nova.stopped)
        self.assertEqual('off', self.host('compute-1').power_state)
        [(_ctx, message, _priority, _retry)] = test_notifier.NOTIFICATIONS
        self.assertEqual(reclaim.PREEMPTED, message['event_type'])
        payload = message['payload']
        self.assertEqual(('s-1', None, None, 'power_off', None), (
            payload['server_id'], payload['lease_id'],
            payload['reservation_id'], payload['reason'],
            payload['booking_start']))
        jsonschema.validate(payload, notification_schema.PREEMPTED)

    def test_a_driver_failure_is_recorded_and_retried(self):
        self.hardware.broken.add('compute-1')
        self.run_engines()
        row = self.host('compute-1')
        self.assertEqual('on', row.power_state)
        self.assertIn('BMC of compute-1 unreachable', row.power_failure)
        self.assertIsNone(row.power_claimed_by)
        [event] = self.events('compute-1')
        self.assertEqual('failed', event.outcome)
        # It stays on, so its service takes servers again.
        self.assertEqual('enabled', self.nova.services['compute-1']['status'])
        self.hardware.broken.clear()
        self.run_engines()
        self.assertEqual('off', self.host('compute-1').power_state)
        self.assertIsNone(self.host('compute-1').power_failure)

    def test_a_driver_failing_to_switch_on_for_a_booking_fails_the_host(self):
        self.switch_off_all()
        self.book('compute-2', NOW + 10 * MINUTE)
        self.hardware.broken.add('compute-2')
        self.run_engines()
        row = self.host('compute-2')
        self.assertEqual(('off', 'power', False),
                         (row.power_state, row.failure, row.reservable))
        self.assertEqual('failed', self.events('compute-2')[-1].outcome)

    def test_a_dead_engines_transition_is_taken_over_after_its_claim(self):
        with db_api.writer(self.ctx, self.clock) as session:
            session.execute(sa.update(HOSTS).values(
                power_claimed_by='dead-engine:1',
                power_claimed_until=NOW + MINUTE))
        self.assertEqual(0, self.run_engines())
        self.assertEqual([], self.hardware.changes)
        self.clock.set(NOW + MINUTE)
        self.assertEqual(3, self.run_engines(2))
        self.assertEqual(3, len(self.hardware.changes))

    def test_an_engine_whose_claim_expired_records_nothing(self):
        test = self

        class Slow(Hardware):
            """Switches compute-1 off while its claim runs out."""

            def power_off(self, target):
                super().power_off(target)
                if target.hypervisor_hostname == 'compute-1':
                    test.clock.set(NOW + datetime.timedelta(
                        seconds=test.conf.power.claim_timeout))

        slow = Slow(self.conf, self.names)
        self.assertEqual(2, self.manager(driver=slow).run(self.ctx))
        self.assertEqual('on', self.host('compute-1').power_state)
        self.assertIsNone(self.events('compute-1')[0].outcome)
        # The next engine does it again: switching off is idempotent.
        self.assertEqual(1, self.manager(driver=slow).run(self.ctx))
        self.assertEqual('off', self.host('compute-1').power_state)
        self.assertEqual([('compute-1', 'off')],
                         [s for s in slow.changes if s[0] == 'compute-1'])
        self.assertEqual(['done'], [e.outcome for e in
                                    self.events('compute-1')[1:]])

    def test_spares_stay_on_in_host_id_order(self):
        self.conf.set_override('spare_hosts', 1, 'power')
        self.run_engines()
        self.assertEqual(['on', 'off', 'off'],
                         [self.host(name).power_state for name in self.names])

    def test_spares_stay_on_in_the_order_of_the_host_weights(self):
        self.conf.set_override('spare_hosts', 1, 'power')
        self.conf.set_override('host_weight_property', 'watts', 'power')
        with db_api.writer(self.ctx, self.clock) as session:
            for name, watts in (('compute-1', '300'), ('compute-3', '120')):
                store_hosts.set_capabilities(
                    session, self.host_ids[name], {'watts': watts})
        self.run_engines()
        self.assertEqual(['off', 'off', 'on'],
                         [self.host(name).power_state for name in self.names])

    def test_an_unmanaged_host_is_switched_on_and_left_alone(self):
        self.switch_off_all()
        with db_api.writer(self.ctx, self.clock) as session:
            session.execute(sa.update(HOSTS).where(
                HOSTS.c.id == self.host_ids['compute-3'])
                .values(power_managed=False))
        self.run_engines()
        self.assertEqual('powering_on', self.host('compute-3').power_state)
        self.assertEqual(policy.UNMANAGED, self.events('compute-3')[-1].reason)

    def test_the_host_monitor_leaves_a_switched_off_host_alone(self):
        self.switch_off_all()
        self.conf.set_override('host_monitor', True, 'reservation')
        self.conf.set_override('host_monitor_interval', 0, 'reservation')
        monitor = host_monitor.HostMonitor(
            self.conf, self.clock, {}, Clients(self.nova),
            notifications.get_notifier(self.conf))
        self.assertEqual(0, monitor.run(self.ctx))
        self.assertIsNone(self.host('compute-1').failure)


class PowerSQLiteTest(_PowerTests, base.DBTestCase):
    # SQLite in memory has one connection: the engines take turns.
    THREADS = False


class PowerPostgreSQLTest(_PowerTests, base.PostgreSQLTestCase):
    pass


class PowerMariaDBTest(_PowerTests, base.MySQLTestCase):
    pass
