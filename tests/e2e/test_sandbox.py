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

"""The sandbox's cloud, as the unmodified clients see it."""

import os
import subprocess

from reservation_ext.sandbox import config
from tests.e2e import base

HOSTS = ['compute-1', 'compute-2', 'compute-3', 'compute-4']


class TestSandbox(base.SandboxTestCase):

    def test_sourcing_an_openrc_puts_the_clients_on_the_path(self):
        openrc = os.path.join(self.sandbox.state_dir, 'openrc-demo')
        # A new shell's PATH, without the sandbox's environment on it.
        out = subprocess.run(
            ['bash', '-c', '. %s && . %s && echo "$PATH" && openstack '
             'server list -f value' % (openrc, openrc)],
            env={'PATH': '/usr/bin:/bin', 'HOME': os.environ['HOME']},
            capture_output=True, text=True, check=True).stdout
        path = out.splitlines()[0].split(':')
        self.assertEqual(
            [os.path.dirname(base.sandbox_mod.executable('openstack')),
             '/usr/bin', '/bin'], path)

    def test_catalog(self):
        types = {entry['Type'] for entry in self.run_json(
            ['openstack', 'catalog', 'list'])}
        self.assertTrue({'identity', 'compute', 'placement', 'image',
                         'reservation', 'network'} <= types, types)

    def test_hypervisors_of_different_sizes(self):
        out = self.run_cli(['nova', 'hypervisor-list'])
        for host in HOSTS:
            self.assertIn(host, out)
        # 2.88 hides the sizes; 2.87 is the last version that shows them.
        hypervisors = self.run_json(['openstack', '--os-compute-api-version',
                                     '2.87', 'hypervisor', 'list', '--long'])
        self.assertEqual(HOSTS, sorted(h['Hypervisor Hostname']
                                       for h in hypervisors))
        self.assertEqual({'up'}, {h['State'] for h in hypervisors})
        sizes = {(h['vCPUs'], h['Memory MB']) for h in hypervisors}
        self.assertEqual(len(HOSTS), len(sizes))

    def test_flavors_and_image(self):
        flavors = {f['ID']: f['Name'] for f in self.run_json(
            ['openstack', 'flavor', 'list'])}
        self.assertEqual('m1.tiny', flavors['1'])
        image = self.sandbox.env['admin']['SANDBOX_IMAGE']
        self.assertIn(image, [i['ID'] for i in self.run_json(
            ['openstack', 'image', 'list'])])

    def test_nova_boot_and_delete(self):
        image = self.sandbox.env['admin']['SANDBOX_IMAGE']
        self.run_cli(['nova', 'boot', '--flavor', '1', '--image', image,
                      '--nic', 'none', '--poll', 'e2e-nova'])
        out = self.run_cli(['nova', 'list'])
        self.assertIn('e2e-nova', out)
        self.assertIn('ACTIVE', out)
        self.run_cli(['nova', 'delete', 'e2e-nova'])
        self.wait_for(lambda: 'e2e-nova' not in self.run_cli(
            ['openstack', 'server', 'list', '-f', 'value', '-c', 'Name']))

    def test_openstack_server_create_as_demo(self):
        server = self.run_json(
            ['openstack', 'server', 'create', '--flavor', 'm1.tiny',
             '--image', config.IMAGE_NAME, '--nic', 'none', '--wait',
             'e2e-demo'], user='demo')
        self.assertEqual('ACTIVE', server['status'])
        names = [s['Name'] for s in self.run_json(
            ['openstack', 'server', 'list'], user='demo')]
        self.assertEqual(['e2e-demo'], names)
        self.run_cli(['openstack', 'server', 'delete', '--wait',
                      'e2e-demo'], user='demo')

    def test_demo_is_no_admin(self):
        self.run_cli(['openstack', 'server', 'list'], user='demo')
        self.run_cli(['nova', 'hypervisor-list'], user='demo',
                     expect_failure=True)

    def test_reservation_lease_list_is_empty(self):
        self.assertEqual([], self.run_json(
            ['openstack', 'reservation', 'lease', 'list']))
