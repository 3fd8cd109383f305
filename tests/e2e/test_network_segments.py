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

"""Network segment leases against the sandbox's real Neutron.

The admin registers segments with our plugin's ``openstack reservation
network`` commands; the demo user creates a ``network`` lease with the
unmodified python-blazarclient library (its ``lease create`` command
cannot parse a type it does not know, see
doc/source/user/network-segments.rst), sees the network, subnet and
router with the unmodified ``openstack`` client, boots a server on it,
and deleting the lease removes them all.
"""

from blazarclient import client as blazar_client
from keystoneauth1 import loading
from keystoneauth1 import session as ks_session

from tests.e2e import base


def blazar(env):
    """python-blazarclient's client for an openrc's user."""
    auth = loading.get_plugin_loader('password').load_from_options(
        auth_url=env['OS_AUTH_URL'], username=env['OS_USERNAME'],
        password=env['OS_PASSWORD'], project_name=env['OS_PROJECT_NAME'],
        user_domain_name=env['OS_USER_DOMAIN_NAME'],
        project_domain_name=env['OS_PROJECT_DOMAIN_NAME'])
    return blazar_client.Client(session=ks_session.Session(auth=auth),
                                service_type='reservation')


class TestNetworkSegments(base.SandboxTestCase):

    HOSTS = 1

    def demo_json(self, *argv):
        return self.run_json(['openstack'] + list(argv), user='demo')

    def names(self, kind):
        return sorted(item['Name'] for item in self.demo_json(kind, 'list'))

    def test_a_lease_makes_and_removes_a_provider_network(self):
        segment = self.run_json([
            'openstack', 'reservation', 'network', 'create',
            '--network-type', 'vlan', '--physical-network', 'physnet1',
            '--segment', '100', '--extra', 'stitch=true'])
        self.assertEqual(('vlan', 'physnet1', 100, 'true'), (
            segment['network_type'], segment['physical_network'],
            segment['segment_id'], segment['stitch']))
        error = self.run_cli([
            'openstack', 'reservation', 'network', 'create',
            '--network-type', 'vlan', '--physical-network', 'physnet1',
            '--segment', '100'], expect_failure=True)
        self.assertIn('is already registered', error)
        self.assertEqual([segment['id']], [net['id'] for net in self.run_json(
            ['openstack', 'reservation', 'network', 'list'])])
        self.assertEqual(segment, self.run_json(
            ['openstack', 'reservation', 'network', 'show', segment['id']]))

        lease = blazar(self.sandbox.env['demo']).lease.create(
            name='net-lease', start='now', end='2027-12-01 00:00',
            events=[], reservations=[{
                'resource_type': 'network', 'network_name': 'my-net',
                'resource_properties': '["=", "$stitch", "true"]',
                'subnet_cidr': '10.20.0.0/24',
                'router_external_network': 'public'}])
        self.wait_for(lambda: self.demo_json(
            'reservation', 'lease', 'show', lease['id'])['status'] ==
            'ACTIVE')
        network = self.run_json(['openstack', 'network', 'show', 'my-net'])
        self.assertEqual(('vlan', 'physnet1', 100), (
            network['provider:network_type'],
            network['provider:physical_network'],
            network['provider:segmentation_id']))
        self.assertIn('my-net-subnet', self.names('subnet'))
        self.assertIn('my-net-router', self.names('router'))
        server = self.demo_json(
            'server', 'create', '--flavor', '1', '--image',
            self.sandbox.env['demo']['SANDBOX_IMAGE'], '--network',
            'my-net', '--wait', 'vm-net')
        self.assertEqual('ACTIVE', server['status'])
        error = self.run_cli(['openstack', 'reservation', 'network',
                              'delete', segment['id']], expect_failure=True)
        self.assertIn('held by 1', error)

        self.run_cli(['openstack', 'reservation', 'lease', 'delete',
                      'net-lease'], user='demo')
        self.wait_for(lambda: 'my-net' not in self.names('network'))
        self.assertNotIn('my-net-router', self.names('router'))
        self.assertNotIn('my-net-subnet', self.names('subnet'))
        self.run_cli(['openstack', 'reservation', 'network', 'delete',
                      segment['id']])
        self.assertEqual([], self.run_json(
            ['openstack', 'reservation', 'network', 'list']))
