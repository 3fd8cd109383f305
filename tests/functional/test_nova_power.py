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

"""Reservable hosts switched off and on, in Nova's harness.

Real Nova, the real engine with the ``redfish`` power driver, and
sushy-tools' Redfish emulator as the hosts' BMCs
(:mod:`tests.power_emulator`). The test plays the hardware: once the
emulator says a host is Off, its fake compute is stopped and its service
forced down (as Nova's own tests take a host away); once it says On, the
compute starts again.
"""

import datetime
import os

import yaml

from reservation_ext import clock as clock_mod
from tests.functional import nova_base
from tests.functional import test_nova_host_healing as healing
from tests import power_emulator

MINUTE = datetime.timedelta(minutes=1)
SWITCHED = ('compute-2', 'compute-3')
GPU = '["=", "$gpu", "true"]'


class NovaPowerTest(healing._Monitored, nova_base.NovaTestCase):
    """compute-2 and compute-3 reservable (with the gpu), BMCs emulated."""

    def setUp(self):
        super().setUp()
        self.bmc = self.useFixture(power_emulator.RedfishEmulator(SWITCHED))
        credentials = os.path.join(self.useFixture(
            nova_base.fixtures_lib.TempDir()).path, 'bmcs.yaml')
        with open(credentials, 'w') as stream:
            yaml.safe_dump({name: {
                'address': self.bmc.address,
                'system_id': power_emulator.system_id(name)}
                for name in SWITCHED}, stream)
        self.flags(driver='redfish', spare_hosts=0, spare_share=0,
                   credentials_file=credentials, group='power')
        self.flags(healing_interval=60, group='reservation')
        self.now = clock_mod.SYSTEM.now()
        for name in SWITCHED:
            self.add_reservable_host(name, gpu='true')

    def host(self, name):
        return {host['hypervisor_hostname']: host for host in
                self.admin_lease_api('GET', '/os-hosts')['hosts']}[name]

    def switched_off(self, host):
        """Wait for the BMC's Off, then take the compute away (hardware)."""
        self.bmc.wait_for_power_state(host, 'Off')
        self.take_down(host)

    def switched_on(self, host):
        """Wait for the BMC's On, then start the compute (hardware)."""
        self.bmc.wait_for_power_state(host, 'On')
        self.bring_back(host)

    def all_off(self):
        self.run_engine(self.now)
        for name in SWITCHED:
            self.switched_off(name)

    def gpu_lease(self):
        """All hosts off, then a lease of a gpu host in 20 minutes.

        :returns: its start and the lease, which books compute-2.
        """
        self.all_off()
        start = (self.now + 20 * MINUTE).replace(second=0, microsecond=0)
        lease = self.lease_api('POST', '/leases', {
            'name': 'hpc', 'start_date': nova_base.lease_date(start),
            'end_date': nova_base.lease_date(start + 60 * MINUTE),
            'reservations': [{
                'resource_type': 'physical:host', 'min': 1, 'max': 1,
                'hypervisor_properties': '',
                'resource_properties': GPU}]})['lease']
        self.assertEqual(['compute-2'], self.booked(lease['id']))
        return start, lease

    def test_an_idle_host_is_disabled_with_a_reason_then_switched_off(self):
        self.run_engine(self.now)
        service = self.service('compute-2')
        self.assertEqual('disabled', service['status'])
        self.assertEqual('reservation-ext: powered off, idle',
                         service['disabled_reason'])
        self.bmc.wait_for_power_state('compute-2', 'Off')
        host = self.host('compute-2')
        self.assertEqual(('off', None, True, None),
                         (host['power_state'], host['failure'],
                          host['reservable'], host['power_next_transition']))

    def test_a_lease_switches_its_host_on_and_nova_up_enables_it(self):
        start, lease = self.gpu_lease()
        self.run_engine(self.now + MINUTE)
        host = self.host('compute-2')
        self.assertEqual('power_on', host['power_next_transition'])
        self.assertEqual((start - 15 * MINUTE).strftime('%Y-%m-%d %H:%M:%S'),
                         host['power_next_transition_at'])
        # The lead time (15 minutes) before the start.
        self.run_engine(start - 15 * MINUTE)
        self.assertEqual('powering_on', self.host('compute-2')['power_state'])
        self.assertEqual('disabled', self.service('compute-2')['status'])
        self.switched_on('compute-2')
        self.run_engine(start - 14 * MINUTE)
        self.assertEqual('enabled', self.service('compute-2')['status'])
        host = self.host('compute-2')
        self.assertEqual(('on', None), (host['power_state'],
                                        host['failure']))
        self.assertEqual('Off', self.bmc.power_state('compute-3'))
        # It starts on its host.
        self.run_engine(start + MINUTE)
        reservation_id = lease['reservations'][0]['id']
        self.assertEqual(['compute-2'],
                         self.aggregate(reservation_id)['hosts'])

    def test_a_host_that_never_comes_up_fails_and_its_booking_moves(self):
        start, lease = self.gpu_lease()
        self.run_engine(start - 15 * MINUTE)
        self.bmc.wait_for_power_state('compute-2', 'On')
        # Its compute never starts. After power_on_timeout (600 s):
        self.run_engine(start - 5 * MINUTE)
        host = self.host('compute-2')
        self.assertEqual(('power', False),
                         (host['failure'], host['reservable']))
        self.assertIn('not up 600 s after', host['power_failure'])
        self.assertEqual(['compute-3'], self.booked(lease['id']))
        self.assertFalse(self.lease(lease['id'])['degraded'])
        [update] = self.updates()
        self.assertEqual(lease['id'], update['id'])
        # Its replacement is switched on at once.
        self.assertEqual('powering_on', self.host('compute-3')['power_state'])
        self.switched_on('compute-3')
        self.run_engine(start - 4 * MINUTE)
        self.assertEqual('on', self.host('compute-3')['power_state'])
        # compute-2 recovers once it is up after all; idle, it goes off.
        self.switched_on('compute-2')
        self.run_engine(start - 3 * MINUTE)
        host = self.host('compute-2')
        self.assertEqual(('off', None, True, None),
                         (host['power_state'], host['failure'],
                          host['reservable'], host['power_failure']))

    def test_an_unmanaged_host_is_switched_on_and_left_on(self):
        self.all_off()
        host_id = self.host('compute-3')['id']
        shown = self.admin_lease_api('PUT', '/os-hosts/' + host_id,
                                     {'power_managed': False})['host']
        self.assertFalse(shown['power_managed'])
        # The host's own flag, no extra capability.
        self.assertEqual([{'property': 'gpu'}], self.admin_lease_api(
            'GET', '/os-hosts/properties')['resource_properties'])
        self.run_engine(self.now + MINUTE)
        self.switched_on('compute-3')
        self.run_engine(self.now + 2 * MINUTE)
        self.assertEqual('on', self.host('compute-3')['power_state'])
        self.run_engine(self.now + 3 * MINUTE)
        self.assertEqual('enabled', self.service('compute-3')['status'])
        self.admin_lease_api('DELETE', '/os-hosts/' + host_id)
