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
"""The Neutron client's proxy: Neutron's versioned path, no request made.

Its calls are tested against a real Neutron in
``tests.functional.test_floating_ips`` and ``test_nova_floating_ips``.
"""

from reservation_ext.clients import network
from reservation_ext.clients import plugin_clients
from tests import base
from tests import fixtures
from tests.unit import test_plugin_clients


class NetworkProxyTest(base.TestCase):

    def proxy(self, endpoint):
        conf = self.useFixture(fixtures.ReservationConf({
            ('reservation_client', 'auth_type'): 'none',
            ('reservation_client', 'endpoint_override'): endpoint})).conf
        transport = test_plugin_clients.NoRequests()
        client = plugin_clients.PluginClients(conf,
                                              transport=transport).network
        self.assertIsInstance(client, network.NeutronClient)
        return client._network, transport

    def test_an_unversioned_endpoint_gets_neutrons_v2_0_path(self):
        for endpoint in ('http://neutron.example:9696',
                         'http://neutron.example:9696/'):
            proxy, transport = self.proxy(endpoint)
            self.assertEqual('http://neutron.example:9696/v2.0',
                             proxy.endpoint_override)
            self.assertEqual([], transport.sent)

    def test_a_versioned_endpoint_is_kept(self):
        proxy, _transport = self.proxy('http://neutron.example/v2.0')
        self.assertEqual('http://neutron.example/v2.0',
                         proxy.endpoint_override)
