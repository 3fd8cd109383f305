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

"""Floating IP leases against the sandbox's real Neutron, with the CLIs.

The admin registers addresses of ``public`` with python-blazarclient's
unmodified ``openstack reservation floatingip`` commands; the demo user
leases one with ``openstack reservation lease create --reservation
resource_type=virtual:floatingip,...``, finds it in Neutron with the
unmodified ``openstack`` client, attaches it to a server with ``openstack
server add floating ip``, grows the lease, and deleting the lease
deletes the addresses, the server keeping its port.
"""


from tests.e2e import base

FIP = 'virtual:floatingip'


class TestFloatingIPs(base.SandboxTestCase):

    HOSTS = 1

    def demo_json(self, *argv):
        return self.run_json(['openstack'] + list(argv), user='demo')

    def addresses(self):
        return sorted(ip['Floating IP Address']
                      for ip in self.demo_json('floating', 'ip', 'list'))

    def register(self, network_id, address):
        return base.created(self.run_cli([
            'openstack', 'reservation', 'floatingip', 'create', network_id,
            address, '-f', 'json']))

    def register_two(self, network_id):
        """Register .10 and .11 (not .150, in the pool); return .10's."""
        fip = self.register(network_id, '172.24.4.10')
        self.assertEqual(('172.24.4.10', network_id, True), (
            fip['floating_ip_address'], fip['floating_network_id'],
            fip['reservable']))
        self.register(network_id, '172.24.4.11')
        error = self.run_cli(['openstack', 'reservation', 'floatingip',
                              'create', network_id, '172.24.4.150'],
                             expect_failure=True)
        self.assertIn('allocation pool', error)
        self.assertEqual(fip, self.run_json([
            'openstack', 'reservation', 'floatingip', 'show', fip['id']]))
        self.assertEqual(2, len(self.run_json(
            ['openstack', 'reservation', 'floatingip', 'list'])))
        return fip

    def test_a_lease_makes_its_addresses_and_its_end_removes_them(self):
        network_id = self.run_json(['openstack', 'network', 'show',
                                    'public'])['id']
        fip = self.register_two(network_id)
        lease = base.created(self.run_cli([
            'openstack', 'reservation', 'lease', 'create', '--reservation',
            'resource_type=%s,network_id=%s,amount=1,required_floatingips='
            '["172.24.4.10"]' % (FIP, network_id),
            '--end-date', '2027-12-01 16:00', 'fip1', '-f', 'json'],
            user='demo'))
        self.wait_for(lambda: self.demo_json(
            'reservation', 'lease', 'show', lease['id'])['status'] ==
            'ACTIVE')
        self.assertEqual(['172.24.4.10'], self.addresses())
        server = self.demo_json(
            'server', 'create', '--flavor', '1', '--image',
            self.sandbox.env['demo']['SANDBOX_IMAGE'], '--wait', 'vm1')
        self.run_cli(['openstack', 'server', 'add', 'floating', 'ip',
                      'vm1', '172.24.4.10'], user='demo')
        [ip] = self.demo_json('floating', 'ip', 'list')
        self.assertIsNotNone(ip['Port'])
        error = self.run_cli(['openstack', 'reservation', 'floatingip',
                              'delete', fip['id']], expect_failure=True)
        self.assertIn('held by 1', error)

        reservation_id = self.demo_json(
            'reservation', 'lease', 'show', lease['id'])[
                'reservations'].split('"id": "')[1].split('"')[0]
        self.run_cli(['openstack', 'reservation', 'lease', 'set',
                      '--reservation', 'id=%s,amount=2' % reservation_id,
                      'fip1'], user='demo')
        self.assertEqual(['172.24.4.10', '172.24.4.11'], self.addresses())

        self.run_cli(['openstack', 'reservation', 'lease', 'delete', 'fip1'],
                     user='demo')
        self.wait_for(lambda: self.addresses() == [])
        self.assertEqual('ACTIVE', self.demo_json(
            'server', 'show', server['id'])['status'])
        self.run_cli(['openstack', 'reservation', 'floatingip', 'delete',
                      fip['id']])
        self.assertEqual(1, len(self.run_json(
            ['openstack', 'reservation', 'floatingip', 'list'])))
