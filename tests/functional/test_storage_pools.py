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

"""Reservable storage pools: ``/v1/storage-pools`` and their commands.

Requests go through webob to the real lease API application (with the
headers keystonemiddleware sets) on a real leases DB (SQLite,
PostgreSQL, MariaDB); registration asks a real Cinder
(:mod:`tests.cinder_service`: its volume service reports the pools
``storage-1@ssd#gold``, 1000 GB, and ``storage-1@ssd#silver``, 4000 GB)
through the real Cinder client. The ``openstack reservation storage
pool`` commands run against the same application through
python-blazarclient's client.
"""

import io
import json
import types
import urllib.parse

from blazarclient import client as blazar_client
from blazarclient import exception as blazar_exc
import fixtures as fixtures_lib
from keystoneauth1 import session as ks_session
from keystoneauth1 import token_endpoint
import webob
from wsgi_intercept import interceptor

from reservation_ext.api import wsgi
from reservation_ext.clients import compute as compute_client
from reservation_ext import clock as clock_mod
from reservation_ext import conf as conf_mod
from reservation_ext.leases import notifications
from reservation_ext.osc import v1 as osc
from reservation_ext import plugins as plugins_mod
from tests import base
from tests import cinder_service
from tests import fixtures
from tests.functional import test_leases
from tests import nova_auth

ADMIN = 'admin,member,reader'
MEMBER = 'member,reader'
GOLD = cinder_service.pool_name('gold')
SILVER = cinder_service.pool_name('silver')
KEYS = {'id', 'name', 'backend', 'total_capacity_gb', 'capabilities',
        'created_at', 'updated_at'}
# What Cinder reports of each pool, whatever the pool.
REPORTED = {'volume_backend_name': 'ssd', 'storage_protocol': 'fake',
            'vendor_name': 'Open Source'}


def path(pool):
    """The path of a pool named by its id or its name."""
    return '/storage-pools/' + urllib.parse.quote(pool, safe='')


class _Requests:
    """The lease API app, a real Cinder, and requests to them."""

    def setUp(self):
        super().setUp()
        self.useFixture(fixtures.TestPlugins())
        self.cinder = self.useFixture(cinder_service.CinderFixture())
        conf = self.useFixture(fixtures.ReservationConf({
            (conf_mod.CLIENT_GROUP, 'auth_type'): nova_auth.NAME,
            (conf_mod.CLIENT_GROUP, 'connect_retries'): 0})).conf
        self.clock = clock_mod.ManualClock(test_leases.NOW)
        self.app = wsgi.build_app(
            conf, self.clock, plugins_mod.load_plugins(conf, self.clock),
            notifications.get_notifier(conf),
            compute_client.NovaClient(conf))

    def request(self, method, path, body=None, project='p1', roles=MEMBER,
                expect=None):
        req = webob.Request.blank('/v1' + path, method=method, headers={
            'X-User-Id': 'u-' + project, 'X-Project-Id': project,
            'X-Roles': roles, 'X-Auth-Token': 'token'})
        if body is not None:
            req.body = (body if isinstance(body, bytes)
                        else json.dumps(body).encode())
            req.content_type = 'application/json'
        response = req.get_response(self.app)
        if expect is not None:
            self.assertEqual(expect, response.status_int, response.text)
        return response

    def admin(self, method, path, body=None, expect=None):
        return self.request(method, path, body, 'admin', ADMIN, expect)

    def register(self, name=GOLD, **capabilities):
        return self.admin('POST', '/storage-pools', dict(
            capabilities, name=name), expect=201).json['storage_pool']

    def pools(self):
        return self.admin('GET', '/storage-pools',
                          expect=200).json['storage_pools']

    def refused(self, code, text, response):
        """``response`` is Blazar's error ``code``; its message has ``text``.

        :returns: the message.
        """
        self.assertEqual(code, response.status_int, response.text)
        self.assertEqual(code, response.json['error_code'])
        self.assertIn(text, response.json['error_message'])
        return response.json['error_message']


class _InventoryTests(_Requests):

    def test_an_admin_registers_a_pool_with_what_cinder_reported(self):
        pool = self.register(GOLD, tier='fast', replicas=3)
        self.assertEqual(KEYS | {'tier', 'replicas'}, set(pool))
        self.assertEqual(
            (GOLD, 'ssd', 1000, 'fast', '3', '2027-01-10 09:00:00', None),
            (pool['name'], pool['backend'], pool['total_capacity_gb'],
             pool['tier'], pool['replicas'], pool['created_at'],
             pool['updated_at']))
        self.assertEqual(
            dict(REPORTED, pool_name='gold', total_capacity_gb=1000,
                 free_capacity_gb=1000),
            {key: pool['capabilities'][key] for key in (
                list(REPORTED) + ['pool_name', 'total_capacity_gb',
                                  'free_capacity_gb'])})

    def test_a_pool_is_listed_and_shown_by_its_id_or_its_name(self):
        silver = self.register(SILVER)
        gold = self.register(GOLD)
        self.assertEqual([gold, silver], self.pools())
        for named in (gold['id'], GOLD):
            self.assertEqual(gold, self.admin('GET', path(named),
                                              expect=200).json[
                                                  'storage_pool'])

    def test_an_update_sets_and_removes_extra_capabilities(self):
        pool = self.register(GOLD, tier='fast', replicas=3)
        self.clock.advance(hours=1)
        updated = self.admin('PUT', path(pool['id']), {
            'tier': 'slow', 'replicas': None, 'zone': 'a'},
            expect=200).json['storage_pool']
        self.assertEqual(
            ('slow', 'a', '2027-01-10 10:00:00', pool['created_at']),
            (updated['tier'], updated['zone'], updated['updated_at'],
             updated['created_at']))
        self.assertNotIn('replicas', updated)
        self.assertEqual([updated], self.pools())

    def test_a_deleted_pool_is_gone_and_can_be_registered_again(self):
        pool = self.register(GOLD, tier='fast')
        self.assertEqual(b'', self.admin('DELETE', path(GOLD),
                                         expect=204).body)
        self.refused(404, pool['id'], self.admin('GET', path(pool['id'])))
        self.assertEqual([], self.pools())
        self.assertNotIn('tier', self.register(GOLD))

    def test_a_pool_cinder_does_not_report_is_refused_with_404_naming_it(
            self):
        for name in ('storage-1@ssd#bronze', 'storage-2@ssd#gold',
                     'storage-1#gold'):
            message = self.refused(404, name, self.admin(
                'POST', '/storage-pools', {'name': name}))
            self.assertIn('Cinder reports no storage pool', message)
        self.assertEqual([], self.pools())

    def test_a_pool_registered_twice_is_refused_with_409(self):
        self.register(GOLD)
        message = self.refused(409, GOLD, self.admin(
            'POST', '/storage-pools', {'name': GOLD, 'tier': 'fast'}))
        self.assertIn('already registered', message)
        self.assertEqual(1, len(self.pools()))

    def test_a_bad_registration_is_refused_with_400_naming_the_field(self):
        for body, field in (
                ({}, 'name'), ({'name': 'storage-1@ssd'}, 'name'),
                ({'name': 'a#b#c'}, 'name'), ({'name': 7}, 'name'),
                ({'name': 'a@b#' + 'c' * 252}, 'name'),
                ({'name': 'a@b#\nc'}, 'name'),
                ({'name': GOLD, 'tier': {'a': 1}}, 'tier'),
                ({'name': GOLD, 'tier': 'x' * 256}, 'tier'),
                ({'name': GOLD, 'backend': 'ssd'}, 'backend'),
                ({'name': GOLD, 'capabilities': 'x'}, 'capabilities'),
                ({'name': GOLD, 'k' * 65: 'v'}, 'k' * 65),
                ([GOLD], 'body'), (b'{"name": ', 'body')):
            self.refused(400, field, self.admin('POST', '/storage-pools',
                                                body))
        self.assertEqual([], self.pools())

    def test_a_bad_update_is_refused_with_400_naming_the_field(self):
        pool = self.register(GOLD, tier='fast')
        for body, field in (({}, 'body'), ({'name': SILVER}, 'name'),
                            ({'total_capacity_gb': 1}, 'total_capacity_gb'),
                            ({'tier': ['a']}, 'tier'), ('fast', 'body')):
            self.refused(400, field, self.admin('PUT', path(pool['id']),
                                                body))
        self.assertEqual([pool], self.pools())

    def test_an_unknown_pool_is_404_to_show_update_and_delete(self):
        for method, body in (('GET', None), ('PUT', {'tier': 'a'}),
                             ('DELETE', None)):
            self.refused(404, 'nope#pool', self.admin(
                method, path('nope#pool'), body))

    def test_a_member_can_neither_register_nor_see_the_pools(self):
        pool = self.register(GOLD)
        for method, target, body in (
                ('POST', '/storage-pools', {'name': SILVER}),
                ('POST', '/storage-pools', {'name': 'no#such-pool'}),
                ('GET', '/storage-pools', None),
                ('GET', path(pool['id']), None),
                ('PUT', path(pool['id']), {'tier': 'a'}),
                ('DELETE', path(pool['id']), None)):
            refusal = self.request(method, target, body)
            message = self.refused(403, 'reservation:storage_pools', refusal)
            # The same answer for a pool that does not exist.
            if target != '/storage-pools':
                self.assertEqual(message, self.refused(
                    403, 'reservation:storage_pools',
                    self.request(method, path('no-such-id'), body)))
        self.assertEqual([pool], self.pools())

    def test_a_failing_cinder_is_a_503_that_registers_nothing(self):
        log = self.useFixture(fixtures_lib.FakeLogger(
            name=wsgi.__name__))
        nova_auth.ENDPOINTS['volumev3'] = 'http://127.0.0.1:9/v3'
        message = self.refused(503, '', self.admin(
            'POST', '/storage-pools', {'name': GOLD}))
        # The reason is for the operator's log only.
        self.assertNotIn('127.0.0.1', message)
        self.assertIn('GET /scheduler-stats/get_pools failed', log.output)
        self.assertEqual([], self.pools())


class _CommandTests(_Requests):
    """``openstack reservation storage pool ...`` against the lease API."""

    URL = 'http://nova-api.test/reservation'

    def setUp(self):
        super().setUp()
        self.enterContext(interceptor.RequestsInterceptor(
            self._as_admin, url=self.URL))
        client = blazar_client.Client(session=ks_session.Session(
            auth=token_endpoint.Token(self.URL + '/v1', 'token')))
        self.stdout = io.StringIO()
        self.osc_app = types.SimpleNamespace(
            client_manager=types.SimpleNamespace(reservation=client),
            stdout=self.stdout)

    def _as_admin(self):
        def app(environ, start_response):
            environ.update(HTTP_X_PROJECT_ID='admin',
                           HTTP_X_USER_ID='u-admin', HTTP_X_ROLES=ADMIN)
            return self.app(environ, start_response)
        return app

    def run_command(self, command_class, *argv):
        command = command_class(self.osc_app, None)
        parsed = command.get_parser('openstack reservation storage pool')\
            .parse_args(list(argv))
        return command.take_action(parsed)

    def test_create_list_show_set_and_delete_a_pool(self):
        columns, values = self.run_command(osc.CreateStoragePool, GOLD,
                                           '--extra', 'tier=fast')
        shown = dict(zip(columns, values))
        self.assertEqual((GOLD, 'ssd', 1000, 'fast'),
                         (shown['name'], shown['backend'],
                          shown['total_capacity_gb'], shown['tier']))
        self.assertEqual('fake', json.loads(shown['capabilities'])[
            'storage_protocol'])
        self.assertEqual(
            (('id', 'name', 'backend', 'total_capacity_gb'),
             [(shown['id'], GOLD, 'ssd', 1000)]),
            self.run_command(osc.ListStoragePools))
        self.run_command(osc.SetStoragePool, GOLD, '--extra', 'tier=slow',
                         '--extra', 'zone=a')
        columns, values = self.run_command(osc.ShowStoragePool, shown['id'])
        self.assertEqual(('slow', 'a'), tuple(
            dict(zip(columns, values))[key] for key in ('tier', 'zone')))
        self.run_command(osc.DeleteStoragePool, GOLD)
        self.assertEqual('Updated storage pool %s\nDeleted storage pool %s\n'
                         % (GOLD, GOLD), self.stdout.getvalue())
        self.assertEqual([], self.pools())

    def test_a_refusal_is_the_apis_error(self):
        error = self.assertRaises(
            blazar_exc.BlazarClientException, self.run_command,
            osc.CreateStoragePool, 'storage-1@ssd#bronze')
        self.assertEqual(404, error.kwargs['code'])
        self.assertIn('storage-1@ssd#bronze', str(error))

    def test_set_needs_an_extra_capability_and_extra_needs_a_key(self):
        for command_class, argv in (
                (osc.SetStoragePool, [GOLD]),
                (osc.CreateStoragePool, [GOLD, '--extra', 'tier']),
                (osc.CreateStoragePool, [GOLD, '--extra', '=fast'])):
            self.assertRaises(SystemExit, self.run_command, command_class,
                              *argv)
        self.assertEqual([], self.pools())


class InventorySQLiteTest(_InventoryTests, base.DBTestCase):
    pass


class InventoryPostgreSQLTest(_InventoryTests, base.PostgreSQLTestCase):
    pass


class InventoryMySQLTest(_InventoryTests, base.MySQLTestCase):
    pass


class CommandsSQLiteTest(_CommandTests, base.DBTestCase):
    pass
