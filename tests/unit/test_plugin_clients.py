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

import json
from unittest import mock

import fixtures as fixtures_lib

from keystoneauth1 import exceptions as ks_exc
from openstack.compute.v2 import server as sdk_server
from openstack import exceptions as sdk_exc
from oslo_config import cfg
import requests

from reservation_ext.clients import compute
from reservation_ext.clients import deferral
from reservation_ext.clients import plugin_clients
from reservation_ext.clients import service_user
from reservation_ext import clock
from reservation_ext import context
from reservation_ext import exceptions
from reservation_ext import plugins
from reservation_ext.plugins import virtual_instance
from reservation_ext.plugins import virtual_volume
from tests import base
from tests import fixtures


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


class NoRequests(requests.Session):
    """A transport that records the requests it is asked to send."""

    def __init__(self):
        super().__init__()
        self.sent = []

    def request(self, method, url, *args, **kwargs):
        self.sent.append((method, url))
        raise requests.exceptions.ConnectionError('not in a unit test')


class ComputeProxyTest(base.TestCase):
    """openstacksdk's compute proxy has the [reservation_client] options."""

    def client(self, **options):
        overrides = {('reservation_client', 'auth_type'): 'none',
                     ('reservation_client', 'endpoint_override'):
                         'http://nova.example/v2.1'}
        overrides.update({('reservation_client', name): value
                          for name, value in options.items()})
        conf = self.useFixture(fixtures.ReservationConf(overrides)).conf
        self.transport = NoRequests()
        return compute.NovaClient(conf, self.transport)

    def test_it_is_made_at_the_endpoint_without_a_request(self):
        proxy = self.client(connect_retries=2, status_code_retries=4,
                            connect_retry_delay=0.25)._compute
        self.assertEqual([], self.transport.sent)
        self.assertEqual(
            ('http://nova.example/v2.1', compute.MICROVERSION, 2, 4, 0.25,
             None, [500, 502, 503, 504]),
            (proxy.endpoint_override, proxy.default_microversion,
             proxy.connect_retries, proxy.status_code_retries,
             proxy.connect_retry_delay, proxy.status_code_retry_delay,
             proxy.retriable_status_codes))
        self.assertIs(self.transport, proxy.session.session)

    def test_unset_retries_are_three(self):
        proxy = self.client()._compute
        self.assertEqual((3, 3), (proxy.connect_retries,
                                  proxy.status_code_retries))

    def test_a_call_that_cannot_connect_fails_naming_the_request(self):
        error = self.assertRaises(exceptions.PluginError,
                                  self.client(connect_retries=0).flavor, 'f1')
        self.assertIn('Nova call GET /flavors/f1 failed', str(error))
        self.assertEqual([('GET', 'http://nova.example/v2.1/flavors/f1')],
                         self.transport.sent)


class NovaWaitTest(base.TestCase):
    """openstacksdk's waits fail with the reasons the leases show."""

    def setUp(self):
        super().setUp()
        self.client = compute.NovaClient(self.useFixture(
            fixtures.ReservationConf()).conf)
        self.client._compute = mock.Mock()

    def test_a_server_in_error_fails_with_novas_fault(self):
        def wait_for_server(server, **kwargs):
            server.status, server.fault = 'ERROR', {'message': 'No host.'}
            raise sdk_exc.ResourceFailure('failed')

        self.client._compute.wait_for_server.side_effect = wait_for_server
        error = self.assertRaises(exceptions.PluginError,
                                  self.client._wait_for_server, 's1',
                                  'ACTIVE', 600, 1)
        self.assertEqual('Server s1 went to ERROR: No host.', error.message)

    def test_a_late_server_fails_with_its_last_status(self):
        def wait_for_server(server, **kwargs):
            self.assertEqual({'status': 'ACTIVE', 'interval': 1,
                              'wait': 600}, kwargs)
            server.status = 'BUILD'
            raise sdk_exc.ResourceTimeout('late')

        self.client._compute.wait_for_server.side_effect = wait_for_server
        error = self.assertRaises(exceptions.PluginError,
                                  self.client._wait_for_server, 's1',
                                  'ACTIVE', 600, 1)
        self.assertEqual('Server s1 was not ACTIVE within 600 s (status '
                         'BUILD).', error.message)

    def test_a_deferred_delete_asks_nova_only_for_servers_not_deleting(self):
        servers = {
            's1': sdk_server.Server(id='s1', task_state=None, updated_at='t1'),
            's2': sdk_server.Server(id='s2', task_state='deleting',
                                    updated_at='t2'),
            's3': None}
        self.client._compute.get_server.side_effect = servers.get
        with deferral.deferring():
            waiting = self.assertRaises(deferral.Waiting,
                                        self.client.delete_servers,
                                        ['s1', 's2', 's3'], 300)
        self.client._compute.delete_server.assert_called_once_with('s1')
        self.assertEqual([('s1', 't1'), ('s2', 't2')],
                         [(wait.resource_id, wait.since)
                          for wait in waiting.waits])
        self.assertEqual(300, waiting.timeout)

    def test_servers_not_deleted_in_time_are_named(self):
        self.client._compute.wait_for_delete.side_effect = [
            None, sdk_exc.ResourceTimeout('late')]
        error = self.assertRaises(exceptions.PluginError,
                                  self.client.delete_servers,
                                  ['s1', 's2', 's3'], 300)
        self.assertEqual('Servers s2, s3 were not deleted within 300 s.',
                         error.message)
        self.assertEqual(3, self.client._compute.delete_server.call_count)


def _sdk_refusal(status, message):
    """openstacksdk's exception of a Nova answer ``status``."""
    response = requests.Response()
    response.status_code = status
    response.headers['Content-Type'] = 'application/json'
    response._content = json.dumps(
        {'fault': {'code': status, 'message': message}}).encode()
    try:
        sdk_exc.raise_from_response(response)
    except sdk_exc.HttpException as exc:
        return exc


class SdkCallTest(base.TestCase):
    """openstacksdk's failures raise as the hand-written calls' do."""

    def call(self, error, **kwargs):
        return service_user.sdk_call('Nova', 'GET /servers/1',
                                     mock.Mock(side_effect=error), **kwargs)

    def test_a_refusal_names_the_request_status_and_message(self):
        error = self.assertRaises(exceptions.PluginError, self.call,
                                  _sdk_refusal(503, 'Down.'))
        self.assertEqual('Nova refused GET /servers/1: 503 Down.',
                         error.message)

    def test_a_409_is_busy(self):
        self.assertRaises(service_user.Busy, self.call,
                          _sdk_refusal(409, 'Busy.'))

    def test_an_ok_status_returns_none(self):
        self.assertIsNone(self.call(_sdk_refusal(404, 'Gone.'), ok=(404,)))

    def test_a_connection_failure_is_a_plugin_error(self):
        error = self.assertRaises(exceptions.PluginError, self.call,
                                  ks_exc.ConnectFailure('refused'))
        self.assertIn('Nova call GET /servers/1 failed: refused',
                      error.message)

    def test_the_waits_timeouts_are_the_callers_to_word(self):
        self.assertRaises(sdk_exc.ResourceTimeout, self.call,
                          sdk_exc.ResourceTimeout('late'))


class RetryingTest(base.TestCase):
    """tenacity retries as keystoneauth1 does: doubling, or fixed."""

    def setUp(self):
        super().setUp()
        self.sleeps = []
        self.useFixture(fixtures_lib.MockPatch(
            'time.sleep', side_effect=self.sleeps.append))

    def attempts(self, failures):
        answers = [service_user.Busy('busy')] * failures + ['done']
        return mock.Mock(side_effect=answers)

    def test_the_delays_double_from_half_a_second(self):
        adapter = mock.Mock(connect_retries=3, connect_retry_delay=None)
        attempt = self.attempts(3)
        self.assertEqual('done', service_user.retrying(
            adapter, attempt, service_user.Busy))
        self.assertEqual([0.5, 1.0, 2.0], self.sleeps)

    def test_a_configured_delay_is_kept(self):
        adapter = mock.Mock(connect_retries=3, connect_retry_delay=0.25)
        service_user.retrying(adapter, self.attempts(2), service_user.Busy)
        self.assertEqual([0.25, 0.25], self.sleeps)

    def test_the_last_failure_is_raised_after_the_retries(self):
        adapter = mock.Mock(connect_retries=2, connect_retry_delay=None)
        attempt = self.attempts(3)
        self.assertRaises(service_user.Busy, service_user.retrying,
                          adapter, attempt, service_user.Busy)
        self.assertEqual(3, attempt.call_count)

    def test_other_errors_are_not_retried(self):
        adapter = mock.Mock(connect_retries=2, connect_retry_delay=None)
        attempt = mock.Mock(side_effect=exceptions.PluginError('no'))
        self.assertRaises(exceptions.PluginError, service_user.retrying,
                          adapter, attempt, service_user.Busy)
        self.assertEqual(1, attempt.call_count)


class FromServiceContextTest(base.TestCase):

    def test_the_caller_of_nova_or_cinder_is_the_caller(self):
        service_ctx = mock.Mock(user_id='u1', project_id='p1',
                                roles=['member'], is_admin=False,
                                request_id='req-1')
        ctx = context.from_service_context(service_ctx)
        self.assertEqual(('u1', 'p1', ['member'], False, 'req-1'), (
            ctx.user_id, ctx.project_id, ctx.roles, ctx.is_admin,
            ctx.request_id))
