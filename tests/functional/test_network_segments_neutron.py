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

"""``network`` leases started and ended by the engine on a real Neutron.

The lease API and the engine run on a real leases DB with the real
``network`` plugin; the plugin's Neutron client is the service user's,
which reaches a real Neutron 29 (:mod:`tests.neutron_service`): ML2 with
``network_vlan_ranges = physnet1``, the router plugin and the external
network ``public``. What the start makes is read back from Neutron as
its admin and as the lease's project sees it.
"""

import datetime
import json

import webob

from reservation_ext.api import wsgi
from reservation_ext.clients import compute as compute_client
from reservation_ext import clock as clock_mod
from reservation_ext import conf as conf_mod
from reservation_ext import context
from reservation_ext.engine import runner
from reservation_ext import exceptions
from reservation_ext.leases import notifications
from reservation_ext import plugins as plugins_mod
from tests import base
from tests import fixtures
from tests.functional import test_leases
from tests.functional import test_network_segments
from tests import neutron_service
from tests import nova_auth

ADMIN = test_network_segments.ADMIN
MEMBER = test_network_segments.MEMBER
OWNER = 'owner-project'


class NetworkLeaseNeutronTest(base.DBTestCase):

    def setUp(self):
        super().setUp()
        self.useFixture(fixtures.TestPlugins())
        self.neutron = self.useFixture(neutron_service.NeutronFixture())
        conf = self.useFixture(fixtures.ReservationConf({
            (conf_mod.CLIENT_GROUP, 'auth_type'): nova_auth.NAME,
            (conf_mod.CLIENT_GROUP, 'connect_retries'): 0})).conf
        self.clock = clock_mod.ManualClock(test_leases.NOW)
        self.plugins = plugins_mod.load_plugins(conf, self.clock)
        notifier = notifications.get_notifier(conf)
        self.app = wsgi.build_app(conf, self.clock, self.plugins, notifier,
                                  compute_client.NovaClient(conf))
        self.engine = runner.Engine(conf, self.clock, self.plugins, notifier,
                                    engine_id='test')
        self.admin = self.neutron.connection()
        self.member = self.neutron.connection(OWNER, MEMBER)

    def request(self, method, path, body=None, roles=ADMIN, expect=200):
        req = webob.Request.blank(path, method=method, headers={
            'X-User-Id': 'u', 'X-Project-Id': OWNER, 'X-Roles': roles})
        if body is not None:
            req.body = json.dumps(body).encode()
            req.content_type = 'application/json'
        response = req.get_response(self.app)
        self.assertEqual(expect, response.status_int, response.text)
        return response.json if response.body else None

    def lease(self, segment, **fields):
        self.request('POST', '/v1/networks', segment, expect=201)
        return self.request('POST', '/v1/leases',
                            test_network_segments.network_lease(**fields),
                            roles=MEMBER, expect=201)['lease']

    def run_at(self, when):
        self.clock.set(datetime.datetime.strptime(when, '%Y-%m-%d %H:%M'))
        # Each poll runs what is due then (the end's events one by one).
        for _poll in range(5):
            if not self.engine.run_once():
                return

    def reservation(self, lease):
        return self.request('GET', '/v1/leases/' + lease['id'])['lease'][
            'reservations'][0]

    def test_a_vlan_lease_gets_its_network_subnet_and_router_until_its_end(
            self):
        lease = self.lease({'network_type': 'vlan', 'segment_id': 200,
                            'physical_network': 'physnet1'},
                           network_description='experiment',
                           subnet_cidr='10.30.0.0/24',
                           router_external_network='public')
        reservation_id = lease['reservations'][0]['id']
        self.run_at('2027-01-10 10:00')
        view = self.reservation(lease)
        self.assertEqual('active', view['status'])
        network = self.admin.network.get_network(view['network_id'])
        self.assertEqual(
            ('net-lease1', OWNER, 'vlan', 'physnet1', 200, 'experiment'),
            (network.name, network.project_id,
             network.provider_network_type,
             network.provider_physical_network,
             network.provider_segmentation_id, network.description))
        self.assertIn('reservation:' + reservation_id, network.tags)
        # The project sees its network, subnet and router.
        self.assertEqual([network.id], [
            net.id for net in self.member.network.networks(
                project_id=OWNER)])
        subnet, = self.member.network.subnets(network_id=network.id)
        self.assertEqual('10.30.0.0/24', subnet.cidr)
        router, = self.member.network.routers(project_id=OWNER)
        self.assertEqual(self.neutron.public_network_id,
                         router.external_gateway_info['network_id'])
        interfaces = [ip['subnet_id'] for port in self.admin.network.ports(
            device_id=router.id, device_owner='network:router_interface')
            for ip in port.fixed_ips]
        self.assertEqual([subnet.id], interfaces)

        # A rerun of the start finds what it made.
        self.plugins['network'].on_start(
            context.get_admin_context(), {'project_id': OWNER}, view)
        self.assertEqual(1, len(list(self.admin.network.networks(
            tags='reservation:' + reservation_id))))
        self.assertEqual(1, len(list(self.admin.network.subnets(
            network_id=network.id))))
        self.assertEqual(1, len(list(self.admin.network.routers(
            project_id=OWNER))))

        # What the project adds on the network goes with it.
        port = self.member.network.create_port(network_id=network.id)
        own = self.member.network.create_router(name='own')
        self.member.network.add_interface_to_router(
            own, port_id=self.member.network.create_port(
                network_id=network.id).id)
        self.run_at('2027-01-12 10:00')
        self.assertEqual('TERMINATED', self.request(
            'GET', '/v1/leases/' + lease['id'])['lease']['status'])
        for find, what in ((self.admin.network.find_network, network.id),
                           (self.admin.network.find_subnet, subnet.id),
                           (self.admin.network.find_router, router.id),
                           (self.admin.network.find_port, port.id)):
            self.assertIsNone(find(what), what)
        # The project's own router stays, without the interface.
        self.assertEqual([], list(self.admin.network.ports(
            device_id=own.id)))
        self.assertIsNotNone(self.admin.network.find_router(own.id))
        # An end run again finds nothing to do.
        self.plugins['network'].on_end(
            context.get_admin_context(), {'project_id': OWNER}, view)

    def test_a_vxlan_lease_gets_a_network_without_physical_network(self):
        lease = self.lease({'network_type': 'vxlan', 'segment_id': 4242})
        self.run_at('2027-01-10 10:00')
        view = self.reservation(lease)
        network = self.admin.network.get_network(view['network_id'])
        self.assertEqual(('vxlan', None, 4242, OWNER), (
            network.provider_network_type,
            network.provider_physical_network,
            network.provider_segmentation_id, network.project_id))
        self.assertEqual([], list(self.admin.network.subnets(
            network_id=network.id)))
        self.run_at('2027-01-12 10:00')
        self.assertIsNone(self.admin.network.find_network(network.id))

    def test_a_start_refuses_a_segment_another_network_uses(self):
        lease = self.lease({'network_type': 'vlan', 'segment_id': 201,
                            'physical_network': 'physnet1'})
        taken = self.admin.network.create_network(
            name='outside', project_id='someone',
            provider_network_type='vlan', provider_physical_network='physnet1',
            provider_segmentation_id=201)
        view = self.reservation(lease)
        error = self.assertRaises(
            exceptions.PluginError, self.plugins['network'].on_start,
            context.get_admin_context(), {'project_id': OWNER}, view)
        self.assertIn('vlan 201 is used by another network', error.message)
        self.assertIsNotNone(self.admin.network.find_network(taken.id))
        self.assertEqual([], list(self.admin.network.networks(
            project_id=OWNER)))

    def test_a_router_to_an_unknown_external_network_is_refused_at_create(
            self):
        self.request('POST', '/v1/networks',
                     {'network_type': 'vxlan', 'segment_id': 77},
                     expect=201)
        for external in ('nowhere', self.neutron.public_subnet_id):
            answer = self.request(
                'POST', '/v1/leases', test_network_segments.network_lease(
                    subnet_cidr='10.9.0.0/24',
                    router_external_network=external),
                roles=MEMBER, expect=400)
            self.assertIn('reservations[0].router_external_network',
                          answer['error_message'])
        self.assertEqual([], self.request('GET', '/v1/leases',
                                          roles=MEMBER)['leases'])
        # By name or by id.
        self.request('POST', '/v1/leases', test_network_segments.network_lease(
            subnet_cidr='10.9.0.0/24',
            router_external_network=self.neutron.public_network_id),
            roles=MEMBER, expect=201)
