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

"""A floating IP lease's start and end, against a real Neutron.

The lease API in Nova's functional harness, the real engine and a real
Neutron 29 (:mod:`tests.neutron_service`): at the start the reserved
addresses exist in Neutron in the lease's project with their exact
address, tagged with the reservation; at the end they are disassociated
from their ports and deleted, the ports staying.
"""

import datetime

from reservation_ext import clock as clock_mod
from reservation_ext import conf as conf_mod
from reservation_ext import context
from reservation_ext import plugins as plugins_mod
from reservation_ext.sandbox.neutron import topology
from tests.functional import nova_base
from tests import neutron_service

FIP = 'virtual:floatingip'
SUBNET = topology.PUBLIC_CIDR.rsplit('.', 1)[0]


class FloatingIPLeaseTest(nova_base.NovaTestCase):

    def setUp(self):
        super().setUp()
        # After Nova's setUp, which resets the endpoints of our clients.
        self.neutron = self.useFixture(neutron_service.NeutronFixture())
        self.network_id = self.neutron.public_network_id
        self.admin_net = self.neutron.connection().network
        now = clock_mod.SYSTEM.now()
        self.start = now + datetime.timedelta(hours=1)
        self.end = now + datetime.timedelta(days=1)
        for index in (2, 3):
            self.admin_lease_api('POST', '/floatingips', {
                'floating_network_id': self.network_id,
                'floating_ip_address': '%s.%d' % (SUBNET, index)})

    def create_lease(self, amount=2):
        return self.lease_api('POST', '/leases', {
            'name': 'fips', 'start_date': nova_base.lease_date(self.start),
            'end_date': nova_base.lease_date(self.end),
            'reservations': [{'resource_type': FIP,
                              'network_id': self.network_id,
                              'amount': amount}]})['lease']

    def reserved(self, reservation_id):
        return sorted(self.admin_net.ips(
            tags='reservation:' + reservation_id),
            key=lambda ip: ip.floating_ip_address)

    def lease(self, lease_id):
        return self.lease_api('GET', '/leases/' + lease_id)['lease']

    def test_at_start_the_addresses_exist_in_the_project_tagged_once(self):
        lease = self.create_lease()
        reservation = lease['reservations'][0]
        self.assertEqual([], list(self.admin_net.ips()))
        self.run_engine(self.start + datetime.timedelta(minutes=1))
        self.assertEqual('ACTIVE', self.lease(lease['id'])['status'])
        ips = self.reserved(reservation['id'])
        self.assertEqual(
            [('%s.2' % SUBNET, nova_base.OWNER, self.network_id),
             ('%s.3' % SUBNET, nova_base.OWNER, self.network_id)],
            [(ip.floating_ip_address, ip.project_id,
              ip.floating_network_id) for ip in ips])
        self.assertEqual({'blazar', 'reservation:' + reservation['id']},
                         set(ips[0].tags))
        # An engine that died after a create, before its tags, and one
        # that runs the start again: the addresses are found, not made
        # again.
        self.admin_net.set_tags(ips[0], [])
        plugin = plugins_mod.load_plugins(
            conf_mod.CONF, clock_mod.SYSTEM)[FIP]
        plugin.on_start(context.get_admin_context(),
                        dict(lease, project_id=nova_base.OWNER),
                        reservation)
        self.assertEqual([ip.id for ip in ips],
                         [ip.id for ip in self.reserved(reservation['id'])])
        self.assertEqual(2, len(list(self.admin_net.ips())))

    def test_at_end_an_associated_address_is_disassociated_and_deleted(self):
        lease = self.create_lease(amount=1)
        reservation_id = lease['reservations'][0]['id']
        self.run_engine(self.start + datetime.timedelta(minutes=1))
        [ip] = self.reserved(reservation_id)
        port = self._port_behind_a_router()
        owner = self.neutron.connection(nova_base.OWNER, 'member,reader')
        owner.network.update_ip(ip.id, port_id=port.id)
        self.assertEqual(port.id, self.admin_net.get_ip(ip.id).port_id)
        self.run_engine(self.end + datetime.timedelta(minutes=1))
        self.assertEqual('TERMINATED', self.lease(lease['id'])['status'])
        self.assertEqual([], list(self.admin_net.ips()))
        self.assertIsNotNone(self.admin_net.get_port(port.id))

    def test_a_lease_deleted_while_active_deletes_its_addresses(self):
        lease = self.create_lease(amount=1)
        self.run_engine(self.start + datetime.timedelta(minutes=1))
        self.assertEqual(1, len(list(self.admin_net.ips())))
        self.lease_api('DELETE', '/leases/' + lease['id'])
        self.assertEqual([], list(self.admin_net.ips()))

    def test_a_started_lease_that_grows_gets_the_new_address_at_once(self):
        lease = self.create_lease(amount=1)
        reservation_id = lease['reservations'][0]['id']
        self.run_engine(self.start + datetime.timedelta(minutes=1))
        self.assertEqual(1, len(self.reserved(reservation_id)))
        grown = self.lease_api('PUT', '/leases/' + lease['id'], {
            'reservations': [{'id': reservation_id, 'amount': 2}]})['lease']
        self.assertEqual(2, grown['reservations'][0]['amount'])
        self.assertEqual(['%s.2' % SUBNET, '%s.3' % SUBNET],
                         [ip.floating_ip_address
                          for ip in self.reserved(reservation_id)])
        answer = self.lease_api('PUT', '/leases/' + lease['id'], {
            'reservations': [{'id': reservation_id, 'amount': 1}]},
            expect=400)
        self.assertIn('amount', answer['error_message'])
        self.assertEqual(2, len(self.reserved(reservation_id)))

    def _port_behind_a_router(self):
        """A port of the owner's network, routed to ``public``."""
        net = self.neutron.connection(nova_base.OWNER,
                                      'member,reader').network
        private = net.create_network(name='private')
        subnet = net.create_subnet(network_id=private.id, ip_version=4,
                                   cidr='10.0.0.0/24')
        router = net.create_router(
            name='r', external_gateway_info={'network_id': self.network_id})
        net.add_interface_to_router(router, subnet_id=subnet.id)
        return net.create_port(network_id=private.id)
