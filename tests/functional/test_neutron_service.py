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

"""The tests' real Neutron (:mod:`tests.neutron_service`) answers our
service user as the tests' clients reach it."""

from keystoneauth1 import adapter
from keystoneauth1 import session as ks_session

from reservation_ext.sandbox.neutron import topology
from tests import base
from tests import neutron_service
from tests import nova_auth

OWNER = 'owner-project'
OTHER = 'other-project'


class NeutronServiceTest(base.TestCase):

    def setUp(self):
        super().setUp()
        self.neutron = self.useFixture(neutron_service.NeutronFixture())

    def test_an_admin_creates_a_floating_ip_outside_the_pool_for_a_project(
            self):
        # As the engine's clients do: HeaderAuth, endpoint from the catalog.
        admin = adapter.Adapter(ks_session.Session(
            auth=nova_auth.HeaderAuth()), service_type='network')
        address = topology.outside_pool(7)
        created = admin.post('/v2.0/floatingips', json={'floatingip': {
            'floating_network_id': self.neutron.public_network_id,
            'floating_ip_address': address,
            'project_id': OWNER}}).json()['floatingip']
        self.assertEqual((address, OWNER), (
            created['floating_ip_address'], created['project_id']))
        owner = self.neutron.connection(OWNER, 'member,reader')
        self.assertEqual([address], [
            ip.floating_ip_address for ip in owner.network.ips()])
        other = self.neutron.connection(OTHER, 'member,reader')
        self.assertEqual([], list(other.network.ips()))

    def test_a_member_may_not_choose_the_address_of_a_floating_ip(self):
        member = self.neutron.connection(OWNER, 'member,reader')
        response = member.network.post('/floatingips', json={
            'floatingip': {
                'floating_network_id': self.neutron.public_network_id,
                'floating_ip_address': topology.outside_pool(8)}})
        self.assertEqual(403, response.status_code, response.text)

    def test_each_test_starts_from_public_alone(self):
        admin = self.neutron.connection()
        self.assertEqual([topology.PUBLIC], [
            network.name for network in admin.network.networks()])
        self.assertEqual([], list(admin.network.ips()))
