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

"""The power drivers against real power controllers, and secret properties.

``redfish`` switches the systems of sushy-tools' Redfish emulator
(:mod:`tests.power_emulator`, with HTTP basic authentication), ``ironic``
the fake-hardware nodes of a real Ironic (:mod:`tests.ironic_server`).
The BMC credentials never show in the os-hosts API.
"""

import json
import os
import socket

import fixtures as fixtures_lib
import sqlalchemy as sa
import webob
import yaml

from db import api as db_api
from db import models
from db import tables
from reservation_ext.api import wsgi
from reservation_ext.clients import compute as compute_client
from reservation_ext import clock as clock_mod
from reservation_ext.leases import notifications
from reservation_ext.planning import capabilities
from reservation_ext import plugins as plugins_mod
from reservation_ext.power import drivers
from reservation_ext.power import ironic
from reservation_ext.power import redfish
from reservation_ext.store import hosts as store_hosts
from tests import base
from tests import fixtures
from tests import ironic_server
from tests import power_emulator

USERNAME = 'bmc-admin'
PASSWORD = 'pw-6d1f0c2a'
HOSTS = ('compute-1', 'compute-2')


def _closed_port():
    with socket.socket() as sock:
        sock.bind(('127.0.0.1', 0))
        return sock.getsockname()[1]


class NoopDriverTest(base.TestCase):

    def test_noop_is_the_default_and_keeps_every_host_on(self):
        conf = self.useFixture(fixtures.ReservationConf()).conf
        driver = drivers.load(conf)
        self.assertIsInstance(driver, drivers.NoopDriver)
        self.assertFalse(driver.switches)
        target = drivers.Target('compute-1', 'compute-1')
        driver.power_off(target)
        self.assertEqual(drivers.ON, driver.state(target))


class RedfishDriverTest(base.TestCase):

    def setUp(self):
        super().setUp()
        self.emulator = self.useFixture(power_emulator.RedfishEmulator(
            HOSTS + ('compute-3',), auth=(USERNAME, PASSWORD),
            power_states={'compute-2': 'PoweringOn',
                          'compute-3': 'PoweringOff'}))
        self.credentials_file = os.path.join(
            self.useFixture(fixtures_lib.TempDir()).path,
            'power-credentials.yaml')
        self.conf = self.useFixture(fixtures.ReservationConf({
            ('power', 'driver'): 'redfish',
            ('power', 'credentials_file'): self.credentials_file})).conf
        self.write_credentials({})
        self.driver = drivers.load(self.conf)

    def write_credentials(self, entries):
        with open(self.credentials_file, 'w') as stream:
            yaml.safe_dump(entries, stream)

    def target(self, name='compute-1', **changes):
        """``name`` with its BMC access in its properties."""
        properties = {
            'redfish_address': self.emulator.address,
            'redfish_system_id': power_emulator.system_id(name),
            'redfish_username': USERNAME, 'redfish_password': PASSWORD,
            'watts': '350'}
        properties.update(changes)
        return drivers.Target(name, name, {
            key: value for key, value in properties.items()
            if value is not None})

    def assertPowerError(self, target, *named):
        """``state(target)`` fails naming ``named``, not the password."""
        error = self.assertRaises(drivers.PowerError, self.driver.state,
                                  target)
        for text in named:
            self.assertIn(text, str(error))
        self.assertNotIn(PASSWORD, str(error))
        return str(error)

    def test_redfish_is_loaded_by_name(self):
        self.assertIsInstance(self.driver, redfish.RedfishDriver)
        self.assertTrue(self.driver.switches)

    def test_a_host_is_switched_off_and_on_again(self):
        target = self.target()
        self.assertEqual(drivers.ON, self.driver.state(target))
        self.driver.power_off(target)
        self.emulator.wait_for_power_state('compute-1', 'Off')
        self.assertEqual(drivers.OFF, self.driver.state(target))
        self.driver.power_on(target)
        self.emulator.wait_for_power_state('compute-1', 'On')
        self.assertEqual(drivers.ON, self.driver.state(target))
        self.assertEqual(2, self.emulator.resets('compute-1'))
        self.assertEqual('PoweringOn', self.emulator.power_state('compute-2'))

    def test_switching_a_host_to_its_state_asks_the_bmc_nothing(self):
        target = self.target()
        self.driver.power_on(target)
        self.assertEqual(0, self.emulator.resets('compute-1'))
        self.driver.power_off(target)
        self.emulator.wait_for_power_state('compute-1', 'Off')
        self.driver.power_off(target)
        self.assertEqual(1, self.emulator.resets('compute-1'))

    def test_a_host_powering_on_counts_as_on(self):
        target = self.target('compute-2')
        self.assertEqual(drivers.ON, self.driver.state(target))
        self.driver.power_on(target)
        self.assertEqual(0, self.emulator.resets('compute-2'))

    def test_a_host_powering_off_counts_as_off(self):
        target = self.target('compute-3')
        self.assertEqual(drivers.OFF, self.driver.state(target))
        self.driver.power_off(target)
        self.assertEqual(0, self.emulator.resets('compute-3'))

    def test_wrong_credentials_fail_naming_the_host(self):
        message = self.assertPowerError(
            self.target(redfish_password='not-' + PASSWORD), 'compute-1',
            self.emulator.address)
        self.assertIn('401', message)

    def test_an_unknown_system_fails_naming_the_host(self):
        self.assertPowerError(self.target(redfish_system_id='no-such'),
                              'compute-1', 'no-such')

    def test_an_unreachable_bmc_fails_naming_the_host(self):
        address = 'http://127.0.0.1:%d' % _closed_port()
        self.assertPowerError(self.target(redfish_address=address),
                              'compute-1', address)

    def test_a_host_without_bmc_address_fails_naming_it(self):
        self.assertPowerError(self.target(redfish_address=None),
                              'compute-1', 'redfish_address')

    def test_a_malformed_bmc_address_fails_naming_the_field(self):
        self.assertPowerError(self.target(redfish_address='bmc-1:443'),
                              'compute-1', 'address')

    def test_credentials_come_from_the_file(self):
        self.write_credentials({'compute-1': {
            'address': self.emulator.address,
            'system_id': power_emulator.system_id('compute-1'),
            'username': USERNAME, 'password': PASSWORD, 'verify': False}})
        target = drivers.Target('compute-1', 'compute-1', {})
        self.driver.power_off(target)
        self.emulator.wait_for_power_state('compute-1', 'Off')

    def test_properties_take_over_from_the_file(self):
        self.write_credentials({'compute-1': {
            'address': self.emulator.address, 'username': USERNAME,
            'password': 'stale-' + PASSWORD}})
        self.assertEqual(drivers.ON, self.driver.state(drivers.Target(
            'compute-1', 'compute-1', {
                'redfish_system_id': power_emulator.system_id('compute-1'),
                'redfish_password': PASSWORD})))
        self.assertPowerError(drivers.Target('compute-1', 'compute-1', {
            'redfish_system_id': power_emulator.system_id('compute-1')}),
            'compute-1', '401')

    def test_a_malformed_credentials_file_fails_naming_it(self):
        self.write_credentials({'compute-1': {'adress': 'x'}})
        message = self.assertPowerError(self.target(), self.credentials_file)
        self.assertIn('compute-1.adress: unknown key', message)

    def test_a_missing_credentials_file_fails_naming_it(self):
        os.unlink(self.credentials_file)
        self.assertPowerError(self.target(), self.credentials_file,
                              'No such file')


class SecretPropertiesAPITest(base.DBTestCase):
    """The os-hosts API as admins call it, over the real WSGI app."""

    def setUp(self):
        super().setUp()
        self.useFixture(fixtures.TestPlugins())
        conf = self.useFixture(fixtures.ReservationConf()).conf
        clock = clock_mod.SYSTEM
        self.app = wsgi.build_app(
            conf, clock, plugins_mod.load_plugins(conf, clock),
            notifications.get_notifier(conf),
            compute_client.NovaClient(conf))
        with db_api.writer(self.ctx, clock) as session:
            self.host_id = str(store_hosts.add_host(session, {
                'hypervisor_hostname': 'compute-1', 'vcpus': 8,
                'memory_mb': 8192, 'local_gb': 100}, {
                    'redfish_address': 'https://bmc-1.example',
                    'redfish_username': USERNAME,
                    'redfish_password': PASSWORD, 'rack': 'r1'}))

    def get(self, method, path, body=None):
        """The JSON answer to an admin's request, with no credentials."""
        request = webob.Request.blank(path, method=method, headers={
            'X-User-Id': 'admin', 'X-Project-Id': 'admin',
            'X-Roles': 'admin', 'Accept': 'application/json'})
        if body is not None:
            request.body = json.dumps(body).encode()
            request.content_type = 'application/json'
        response = request.get_response(self.app)
        self.assertEqual(200, response.status_int, response.text)
        self.assertNotIn(PASSWORD, response.text)
        self.assertNotIn(USERNAME, response.text)
        return response.json

    def test_host_views_show_no_bmc_credentials(self):
        [listed] = self.get('GET', '/v1/os-hosts')['hosts']
        shown = self.get('GET', '/v1/os-hosts/' + self.host_id)['host']
        self.assertEqual(listed, shown)
        self.assertEqual(('https://bmc-1.example', 'r1'),
                         (shown['redfish_address'], shown['rack']))
        self.assertNotIn('redfish_password', shown)
        self.assertNotIn('redfish_username', shown)

    def test_the_properties_listing_shows_no_bmc_credentials(self):
        names = {item['property'] for item in self.get(
            'GET', '/v1/os-hosts/properties')['resource_properties']}
        self.assertEqual({'redfish_address', 'rack'}, names)
        detail = self.get('GET', '/v1/os-hosts/properties?detail=1')
        self.assertEqual({'redfish_address', 'rack'}, {
            item['property'] for item in detail['resource_properties']})

    def test_leases_cannot_select_hosts_by_their_credentials(self):
        def matching(query):
            condition = capabilities.compile(query, 'resource_properties')
            with db_api.context_manager.reader.using(self.ctx) as session:
                return session.scalars(sa.select(tables.HOSTS.c.id)
                                       .where(condition)).all()
        self.assertEqual([int(self.host_id)],
                         matching('["==", "$rack", "r1"]'))
        for name, value in (('redfish_password', PASSWORD),
                            ('redfish_username', USERNAME)):
            self.assertEqual([], matching(json.dumps(
                ['==', '$' + name, value])))
            self.assertEqual([], matching(json.dumps(
                ['!=', '$' + name, 'not-' + value])))
            self.assertEqual([], matching(json.dumps({name: value})))

    def test_updating_a_host_keeps_its_credentials_unshown(self):
        shown = self.get('PUT', '/v1/os-hosts/' + self.host_id,
                         {'rack': 'r2'})['host']
        self.assertEqual('r2', shown['rack'])
        self.assertNotIn('redfish_password', shown)
        caps = models.HostCapability.__table__
        with db_api.context_manager.reader.using(self.ctx) as session:
            kept = dict(session.execute(
                sa.select(caps.c.name, caps.c.value).where(
                    caps.c.host_id == int(self.host_id))).all())
        self.assertEqual((USERNAME, PASSWORD, 'r2'), (
            kept['redfish_username'], kept['redfish_password'],
            kept['rack']))


class IronicDriverTest(base.TestCase):
    """One Ironic for the class: it takes seconds to start.

    Each test switches nodes of its own.
    """

    @classmethod
    def setUpClass(cls):
        super().setUpClass()
        cls.ironic = ironic_server.IronicServer(
            ('compute-1', 'compute-2', 'compute-3'))
        cls.ironic.setUp()

    @classmethod
    def tearDownClass(cls):
        cls.ironic.cleanUp()
        super().tearDownClass()

    def setUp(self):
        super().setUp()
        self.conf = self.useFixture(fixtures.ReservationConf({
            ('power', 'driver'): 'ironic',
            ('reservation_client', 'auth_type'): 'none',
            ('reservation_client', 'endpoint_override'):
                self.ironic.url})).conf
        self.driver = drivers.load(self.conf)

    def target(self, name, **properties):
        """A host named as Ironic's Nova driver names it: the node UUID."""
        return drivers.Target(self.ironic.nodes[name], name, properties)

    def test_a_node_is_switched_off_and_on_again(self):
        self.assertIsInstance(self.driver, ironic.IronicDriver)
        target = self.target('compute-1')
        self.assertEqual(drivers.ON, self.driver.state(target))
        self.driver.power_off(target)
        self.ironic.wait_for_power_state('compute-1', 'power off')
        self.assertEqual(drivers.OFF, self.driver.state(target))
        self.driver.power_off(target)
        self.driver.power_on(target)
        self.ironic.wait_for_power_state('compute-1', 'power on')
        self.assertEqual(drivers.ON, self.driver.state(target))
        self.assertEqual('power on', self.ironic.power_state('compute-2'))

    def test_the_ironic_node_property_names_the_node(self):
        target = drivers.Target('compute-3.example', 'compute-3', {
            'ironic_node': 'compute-3'})
        self.driver.power_off(target)
        self.ironic.wait_for_power_state('compute-3', 'power off')
        self.assertEqual(drivers.OFF, self.driver.state(target))

    def test_an_unknown_node_fails_naming_the_host(self):
        error = self.assertRaises(
            drivers.PowerError, self.driver.state,
            drivers.Target('compute-9', 'compute-9'))
        self.assertIn('host compute-9', str(error))
        self.assertIn('404 Node compute-9 could not be found', str(error))
