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

"""The sandbox's real Neutron, as the unmodified clients see it.

Its networks (``reservation_ext.sandbox.neutron.topology``): the external
network ``public``, and per project a network ``private`` with a router
to ``public``, which boots that name no network get.
"""

import ipaddress

from reservation_ext.sandbox import config
from reservation_ext.sandbox.neutron import topology
from tests.e2e import base


class TestSandboxNetwork(base.SandboxTestCase):

    HOSTS = 1

    def boot(self, name, user='demo', extra=()):
        server = self.run_json(
            ['openstack', 'server', 'create', '--flavor', 'm1.tiny',
             '--image', config.IMAGE_NAME, '--wait'] + list(extra) + [name],
            user=user)
        self.addCleanup(self.run_cli, ['openstack', 'server', 'delete',
                                       '--wait', name], user=user)
        self.assertEqual('ACTIVE', server['status'])
        return server

    def addresses(self, name, user='demo'):
        return self.run_json(['openstack', 'server', 'show', name],
                             user=user)['addresses'][topology.PRIVATE]

    def test_a_server_gets_a_floating_ip_of_public_and_gives_it_back(self):
        self.boot('e2e-fip')
        ip = self.run_json(['openstack', 'floating', 'ip', 'create',
                            topology.PUBLIC], user='demo')
        address = ip['floating_ip_address']
        self.addCleanup(self.run_cli, ['openstack', 'floating', 'ip',
                                       'delete', address], user='demo')
        self.assertIn(ipaddress.ip_address(address), _pool())
        self.run_cli(['openstack', 'server', 'add', 'floating', 'ip',
                      'e2e-fip', address], user='demo')
        self.assertIn(address, self.addresses('e2e-fip'))
        shown = self.run_json(['openstack', 'floating', 'ip', 'show',
                               address], user='demo')
        self.assertIn(shown['fixed_ip_address'], self.addresses('e2e-fip'))
        self.run_cli(['openstack', 'server', 'remove', 'floating', 'ip',
                      'e2e-fip', address], user='demo')
        self.assertNotIn(address, self.addresses('e2e-fip'))
        self.assertIsNone(self.run_json(
            ['openstack', 'floating', 'ip', 'show', address],
            user='demo')['port_id'])

    def test_a_boot_that_names_no_network_gets_its_projects_network(self):
        self.boot('e2e-no-nic-demo')
        self.boot('e2e-no-nic-admin', user='admin')
        cidrs = {user: ipaddress.ip_network(subnet['Subnet'])
                 for user in ('demo', 'admin') for subnet in self.run_json(
                     ['openstack', 'subnet', 'list', '--project', user,
                      '--name', topology.PRIVATE + '-subnet'])}
        for user, name in (('demo', 'e2e-no-nic-demo'),
                           ('admin', 'e2e-no-nic-admin')):
            [address] = self.addresses(name, user)
            self.assertIn(ipaddress.ip_address(address), cidrs[user])
        self.assertNotEqual(cidrs['demo'], cidrs['admin'])

    def test_public_is_external_and_leaves_addresses_outside_its_pool(self):
        network = self.run_json(['openstack', 'network', 'show',
                                 topology.PUBLIC])
        self.assertTrue(network['router:external'])
        self.assertEqual('flat', network['provider:network_type'])
        subnet = self.run_json(['openstack', 'subnet', 'show',
                                network['subnets'][0]])
        self.assertEqual(topology.PUBLIC_CIDR, subnet['cidr'])
        self.assertEqual(topology.PUBLIC_GATEWAY, subnet['gateway_ip'])
        self.assertEqual([{'start': topology.PUBLIC_POOL[0],
                           'end': topology.PUBLIC_POOL[1]}],
                         subnet['allocation_pools'])
        outside = ipaddress.ip_address(topology.outside_pool(0))
        self.assertIn(outside, ipaddress.ip_network(subnet['cidr']))
        self.assertNotIn(outside, _pool())
        names = {net['Name'] for net in self.run_json(
            ['openstack', 'network', 'list'], user='demo')}
        self.assertEqual({topology.PUBLIC, topology.PRIVATE}, names)


def _pool():
    start, end = (ipaddress.ip_address(a) for a in topology.PUBLIC_POOL)
    return [start + i for i in range(int(end) - int(start) + 1)]
