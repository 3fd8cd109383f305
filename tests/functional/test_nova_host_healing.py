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

"""Failed hosts healed, in Nova's harness.

A fake compute is stopped and forced down through Nova's os-services API,
as Nova's own tests take a host away; the real engine, with ``[reservation]
host_monitor`` on and the clock moved, reads ``GET /os-services`` and
heals the leases that hold the host.
"""

import datetime

from oslo_messaging.notify import _impl_test as test_notifier

from reservation_ext.leases import notifications
from tests.functional import nova_base
from tests.functional import test_nova_instance_reservation as instances

MINUTE = datetime.timedelta(minutes=1)
HOUR = datetime.timedelta(hours=1)


class _Monitored:

    def setUp(self):
        super().setUp()
        self.flags(host_monitor=True, host_monitor_interval=0,
                   group='reservation')
        self.flags(driver=['test'], group='oslo_messaging_notifications')
        test_notifier.reset()
        self.addCleanup(test_notifier.reset)

    def service(self, host):
        [service] = self.admin_api.get_services(binary='nova-compute',
                                                host=host)
        return service

    def take_down(self, host):
        """Stop the compute and force its service down, as an operator."""
        self.computes[host].stop()
        self.admin_api.put_service(self.service(host)['id'],
                                   {'forced_down': True})

    def bring_back(self, host):
        self.admin_api.put_service(self.service(host)['id'],
                                   {'forced_down': False})
        self.computes[host] = self.restart_compute_service(
            self.computes[host])

    def lease(self, lease_id):
        return self.lease_api('GET', '/leases/' + lease_id)['lease']

    def booked(self, lease_id):
        """The hypervisor hostnames booked for the lease."""
        names = {host['id']: host['hypervisor_hostname'] for host in
                 self.admin_lease_api('GET', '/os-hosts')['hosts']}
        return sorted(names[allocation['resource_id']] for allocation in
                      self.admin_lease_api(
                          'GET', '/os-hosts/allocations?lease_id=' +
                          lease_id)['allocations'])

    def updates(self):
        return [message['payload'] for _ctx, message, _priority, _retry
                in test_notifier.NOTIFICATIONS
                if message['event_type'] == notifications.LEASE_UPDATE]


class HostLeaseHealingTest(_Monitored, nova_base.GpuHostsTestCase):
    """compute-2 and compute-3 have the gpu; leases want gpu hosts."""

    def host_lease(self, count):
        return self.lease_api('POST', '/leases', {
            'name': 'hpc',
            'start_date': nova_base.lease_date(self.start),
            'end_date': nova_base.lease_date(self.end),
            'reservations': [{
                'resource_type': 'physical:host', 'min': count,
                'max': count, 'hypervisor_properties': '',
                'resource_properties': '["=", "$gpu", "true"]'}]})['lease']

    def test_a_pending_host_lease_gets_a_replacement_host(self):
        lease = self.host_lease(1)
        self.assertEqual(['compute-2'], self.booked(lease['id']))
        self.take_down('compute-2')
        self.run_engine(self.now + MINUTE)
        self.assertEqual(['compute-3'], self.booked(lease['id']))
        self.assertFalse(self.lease(lease['id'])['degraded'])
        hosts = {host['hypervisor_hostname']: host for host in
                 self.admin_lease_api('GET', '/os-hosts')['hosts']}
        self.assertFalse(hosts['compute-2']['reservable'])
        self.assertEqual('down', hosts['compute-2']['failure'])
        # It starts on the replacement.
        self.run_engine(self.start + MINUTE)
        reservation_id = lease['reservations'][0]['id']
        self.assertEqual(['compute-3'],
                         self.aggregate(reservation_id)['hosts'])

    def test_an_active_host_lease_aggregate_gets_the_replacement(self):
        lease = self.host_lease(1)
        reservation_id = lease['reservations'][0]['id']
        self.run_engine(self.start + MINUTE)
        self.assertEqual(['compute-2'],
                         self.aggregate(reservation_id)['hosts'])
        self.take_down('compute-2')
        self.run_engine(self.start + 2 * MINUTE)
        self.assertEqual(['compute-3'],
                         self.aggregate(reservation_id)['hosts'])
        self.assertEqual(['compute-1', 'compute-2'],
                         sorted(self.aggregate('freepool')['hosts']))
        shown = self.lease(lease['id'])
        self.assertFalse(shown['degraded'])
        self.assertTrue(shown['reservations'][0]['resources_changed'])
        # A server with the reservation's hint lands on the replacement.
        server = self.boot(hints={'reservation': reservation_id})
        self.assertEqual('compute-3',
                         server['OS-EXT-SRV-ATTR:hypervisor_hostname'])

    def test_no_matching_free_host_degrades_and_the_host_back_clears(self):
        lease = self.host_lease(2)
        self.take_down('compute-3')
        self.run_engine(self.now + MINUTE)
        shown = self.lease(lease['id'])
        self.assertTrue(shown['degraded'])
        [reservation] = shown['reservations']
        self.assertTrue(reservation['missing_resources'])
        self.assertEqual(['compute-3'], reservation['failed_hosts'])
        [payload] = self.updates()
        self.assertTrue(payload['degraded'])
        self.assertEqual(['compute-3'],
                         payload['reservations'][0]['failed_hosts'])

        self.bring_back('compute-3')
        self.run_engine(self.now + 2 * MINUTE)
        shown = self.lease(lease['id'])
        self.assertFalse(shown['degraded'])
        self.assertFalse(shown['reservations'][0]['missing_resources'])
        self.assertEqual(['compute-2', 'compute-3'], self.booked(lease['id']))
        self.assertEqual([True, False],
                         [payload['degraded'] for payload in self.updates()])


class InstanceLeaseHealingTest(_Monitored, nova_base.NovaTestCase):

    def setUp(self):
        super().setUp()
        self.start = (datetime.datetime.utcnow() + HOUR).replace(
            microsecond=0)
        self.flavor = self._create_flavor(memory_mb=3840, vcpu=1, disk=1,
                                          ephemeral=0)

    def test_a_pending_server_lease_on_a_failed_host_gets_another(self):
        self.add_reservable_host('compute-2')
        self.add_reservable_host('compute-3')
        server = self.user_api(nova_base.OWNER).post_server({
            'server': self._build_server(flavor_id=self.flavor,
                                         networks='none'),
            'os:scheduler_hints': instances._hints(self.start,
                                                   self.start + HOUR)})
        server = self._wait_for_state_change(server, 'RESERVED')
        lease_id = server['metadata'][nova_base.LEASE_ID]
        self.assertEqual('compute-2',
                         self.lease(lease_id)['reservations'][0]['host'])
        self.take_down('compute-2')
        self.run_engine(at=self.start - 30 * MINUTE)
        self.assertEqual('compute-3',
                         self.lease(lease_id)['reservations'][0]['host'])
        # At the start it is built there.
        self.run_engine(at=self.start + datetime.timedelta(seconds=1))
        self._wait_for_state_change(server, 'ACTIVE')
        self.assertEqual('compute-3', self.admin_api.get_server(
            server['id'])['OS-EXT-SRV-ATTR:host'])
