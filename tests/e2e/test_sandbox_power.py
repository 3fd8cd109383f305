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

"""``reservation-sandbox --power``: a Redfish BMC per compute host.

The sandbox's engine switches the reservable hosts through sushy-tools'
emulator (``[power]`` times shortened: off when idle for a minute, on 30
seconds before a booking, one spare kept on). The user watches
``openstack reservation host show`` go off and on around a lease, and the
test checks each state against the emulator's own view of the system and
Nova's view of the compute service.
"""

import datetime
import os

from oslo_config import cfg
import requests
import yaml

from reservation_ext import conf as conf_mod
from reservation_ext.power import drivers
from tests.e2e import base

HOSTS = ['compute-1', 'compute-2']
# compute-1 (the lowest id) stays on as the spare; compute-2 is switched.
SWITCHED = 'compute-2'
ONLY_SWITCHED = ('resource_type=physical:host,min=1,max=1,'
                 'hypervisor_properties=["==", "$hypervisor_hostname", '
                 '"%s"],resource_properties=' % SWITCHED)
# The emulator applies a reset some seconds after it is asked, the engine
# polls every few seconds: bounds, not expectations.
SWITCH_TIMEOUT = 120


def _moment(stamp):
    """A view's UTC time stamp as a naive datetime."""
    return datetime.datetime.fromisoformat(stamp.replace(' ', 'T')[:19])


class TestSandboxPower(base.SandboxTestCase):

    HOSTS = len(HOSTS)
    OPTIONS = ('--power',)

    def credentials(self):
        path = os.path.join(self.sandbox.state_dir, 'power-credentials.yaml')
        with open(path) as stream:
            return yaml.safe_load(stream)

    def emulator_power_state(self, name):
        """The system's PowerState as the emulator itself reports it."""
        entry = self.credentials()[name]
        return requests.get(
            '%s/redfish/v1/Systems/%s' % (entry['address'],
                                          entry['system_id']),
            timeout=30, auth=(entry['username'], entry['password'])
        ).json()['PowerState']

    def host(self, name):
        return self.run_json(['openstack', 'reservation', 'host', 'show',
                              name])

    def service(self, name):
        [service] = self.run_json(['openstack', 'compute', 'service', 'list',
                                   '--service', 'nova-compute', '--host',
                                   name, '--long'])
        return service

    def wait_for_power(self, name, state, emulated):
        """Wait until the host view and the emulator agree on the state."""
        self.wait_for(lambda: (self.host(name)['power_state'] == state and
                               self.emulator_power_state(name) == emulated),
                      timeout=SWITCH_TIMEOUT, interval=2)

    def test_an_idle_host_goes_off_and_is_back_on_before_its_lease(self):
        self.add_reservable_hosts({name: 'false' for name in HOSTS})
        self.wait_for_power(SWITCHED, 'off', 'Off')
        self.assertEqual('disabled', self.service(SWITCHED)['Status'])
        self.assertTrue(self.service(SWITCHED)['Disabled Reason'].startswith(
            'reservation-ext: powered off'))
        self.assertEqual('on', self.host('compute-1')['power_state'])
        self.assertEqual('On', self.emulator_power_state('compute-1'))

        now = datetime.datetime.now(datetime.timezone.utc)
        start = (now + datetime.timedelta(minutes=2)).replace(
            second=0, microsecond=0)
        self.run_cli(['openstack', 'reservation', 'lease', 'create',
                      '--reservation', ONLY_SWITCHED,
                      '--start-date', start.strftime('%Y-%m-%d %H:%M'),
                      '--end-date', (start + datetime.timedelta(hours=1))
                      .strftime('%Y-%m-%d %H:%M'), 'power-lease'],
                     user='demo')
        self.addCleanup(self.delete_lease)
        planned = self.wait_for(lambda: (
            self.host(SWITCHED)['power_next_transition'] == 'power_on' and
            self.host(SWITCHED)))
        self.assertEqual(start.replace(tzinfo=None) -
                         datetime.timedelta(seconds=30),
                         _moment(planned['power_next_transition_at']))

        # On, and enabled in Nova, before the lease starts.
        self.wait_for_power(SWITCHED, 'on', 'On')
        self.assertEqual('enabled', self.service(SWITCHED)['Status'])
        self.wait_for(lambda: self.lease_status() == 'ACTIVE',
                      timeout=SWITCH_TIMEOUT + 120, interval=2)
        host = self.host(SWITCHED)
        self.assertLess(_moment(host['power_state_since']),
                        start.replace(tzinfo=None))
        self.assertEqual('on', host['power_state'])
        self.assertEqual('power_off', host['power_next_transition'])

        # The lease goes: the host is idle again, and switched off.
        self.run_cli(['openstack', 'reservation', 'lease', 'delete',
                      'power-lease'], user='demo')
        self.wait_for_power(SWITCHED, 'off', 'Off')

    def delete_lease(self):
        """Delete the test's lease if the test did not get to."""
        if 'power-lease' in {lease['name'] for lease in self.run_json(
                ['openstack', 'reservation', 'lease', 'list'], user='demo')}:
            self.run_cli(['openstack', 'reservation', 'lease', 'delete',
                          'power-lease'], user='demo')

    def lease_status(self):
        return self.run_json(['openstack', 'reservation', 'lease', 'show',
                              'power-lease'], user='demo')['status']

    def test_the_emulator_lists_one_system_per_compute_host(self):
        entries = self.credentials()
        self.assertEqual(HOSTS, sorted(entries))
        [address] = {entry['address'] for entry in entries.values()}
        entry = entries['compute-1']
        listed = requests.get(
            address + '/redfish/v1/Systems', timeout=30,
            auth=(entry['username'], entry['password'])).json()
        self.assertEqual(
            sorted('/redfish/v1/Systems/' + entry['system_id']
                   for entry in entries.values()),
            sorted(member['@odata.id'] for member in listed['Members']))
        self.assertIn('redfish        ' + address, ''.join(
            self.sandbox.output))

    def test_the_engines_config_switches_hosts_through_the_emulator(self):
        conf = cfg.ConfigOpts()
        conf_mod.register_opts(conf)
        conf(['--config-file', os.path.join(self.sandbox.state_dir,
                                            'nova.conf')],
             project='reservation')
        driver = drivers.load(conf)
        self.assertEqual('redfish', conf.power.driver)
        for host in HOSTS:
            # The other test switches compute-2: the emulator is the truth.
            self.assertEqual(self.emulator_power_state(host).lower(),
                             driver.state(drivers.Target(host, host)))
