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

"""The clients plugins are built with, and the request context of Nova's
and Cinder's contexts."""

from unittest import mock

from oslo_config import cfg
import requests

from reservation_ext.clients import plugin_clients
from reservation_ext import clock
from reservation_ext import context
from reservation_ext import plugins
from reservation_ext.plugins import virtual_instance
from reservation_ext.plugins import virtual_volume
from tests import base


class PluginClientsTest(base.TestCase):

    def test_given_clients_are_used_as_they_are(self):
        nova, cinder = object(), object()
        clients = plugin_clients.PluginClients(cfg.CONF, nova=nova,
                                               cinder=cinder)
        self.assertIs(nova, clients.nova)
        self.assertIs(cinder, clients.cinder)

    def test_the_service_users_clients_are_made_at_first_use(self):
        with mock.patch.object(plugin_clients.compute,
                               'NovaClient') as nova_client:
            clients = plugin_clients.PluginClients(cfg.CONF)
            nova_client.assert_not_called()
            self.assertIs(clients.nova, clients.nova)
        nova_client.assert_called_once_with(cfg.CONF, None)

    def test_the_service_users_clients_send_through_a_given_transport(self):
        transport = requests.Session()
        clients = plugin_clients.PluginClients(cfg.CONF,
                                               transport=transport)
        for client in (clients.nova, clients.cinder):
            self.assertIs(transport, client._adapter.session.session)

    def test_plugins_act_through_the_clients_they_are_built_with(self):
        nova, cinder = object(), object()
        clients = plugin_clients.PluginClients(cfg.CONF, nova=nova,
                                               cinder=cinder)
        found = plugins.load_plugins(cfg.CONF, clock.SYSTEM, clients)
        self.assertIs(nova, found[virtual_instance.RESOURCE_TYPE].nova)
        self.assertIs(cinder, found[virtual_volume.RESOURCE_TYPE].cinder)

    def test_a_plugins_client_cannot_be_replaced(self):
        plugin = virtual_volume.VirtualVolumePlugin(cfg.CONF, clock.SYSTEM)
        self.assertRaises(AttributeError, setattr, plugin, 'cinder', None)


class FromServiceContextTest(base.TestCase):

    def test_the_caller_of_nova_or_cinder_is_the_caller(self):
        service_ctx = mock.Mock(user_id='u1', project_id='p1',
                                roles=['member'], is_admin=False,
                                request_id='req-1')
        ctx = context.from_service_context(service_ctx)
        self.assertEqual(('u1', 'p1', ['member'], False, 'req-1'), (
            ctx.user_id, ctx.project_id, ctx.roles, ctx.is_admin,
            ctx.request_id))
