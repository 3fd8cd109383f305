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

"""``reservation-sandbox --power``: a Redfish BMC per compute host."""

import os

from oslo_config import cfg
import requests
import yaml

from reservation_ext import conf as conf_mod
from reservation_ext.power import drivers
from tests.e2e import base

HOSTS = ['compute-1', 'compute-2']


class TestSandboxPower(base.SandboxTestCase):

    HOSTS = len(HOSTS)
    OPTIONS = ('--power',)

    def credentials(self):
        path = os.path.join(self.sandbox.state_dir, 'power-credentials.yaml')
        with open(path) as stream:
            return yaml.safe_load(stream)

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
        self.assertIn('redfish      ' + address, ''.join(
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
            self.assertEqual(drivers.ON, driver.state(
                drivers.Target(host, host)))
