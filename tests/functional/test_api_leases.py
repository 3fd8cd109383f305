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

"""The lease API (Blazar v1 on the wire) over the real WSGI application.

Requests go through webob to :class:`reservation_ext.api.wsgi.App`, with
the headers keystonemiddleware sets, to a real lease service on a real DB
with the real test plugin.
"""

import json

from blazarclient import client as blazar_client
from blazarclient import exception as blazar_exc
from keystoneauth1 import session as ks_session
from keystoneauth1 import token_endpoint
import webob
from wsgi_intercept import interceptor

from db import api as db_api
from db import tables
from reservation_ext.api import wsgi
from reservation_ext.clients import compute as compute_client
from reservation_ext import clock as clock_mod
from reservation_ext import context
from reservation_ext.leases import notifications
from reservation_ext import plugins as plugins_mod
from tests import base
from tests import fixtures
from tests.functional import test_leases
from tests import plugins as test_plugins

lease_body = test_leases.lease_body
# X-Roles of a project member's token (Keystone's implied roles).
MEMBER = ','.join(test_leases.MEMBER)


class BrokenPlugin(test_plugins.JournalPlugin):
    """The journal plugin, failing with an unexpected error on reserve."""

    def reserve(self, session, ctx, lease, reservation_id, values):
        raise RuntimeError('internal detail')


def as_keystonemiddleware(app, project, roles=MEMBER):
    """``app`` behind the headers keystonemiddleware sets for ``project``."""

    def middleware(environ, start_response):
        environ.update(HTTP_X_PROJECT_ID=project,
                       HTTP_X_USER_ID='u-' + project, HTTP_X_ROLES=roles)
        return app(environ, start_response)
    return middleware


class _LeaseAPITests:

    def setUp(self):
        super().setUp()
        self.useFixture(fixtures.TestPlugins())
        conf = self.useFixture(fixtures.ReservationConf()).conf
        self.clock = clock = clock_mod.ManualClock(test_leases.NOW)
        service_plugins = plugins_mod.load_plugins(conf, clock)
        service_plugins['test:broken'] = BrokenPlugin(conf, clock)
        self.app = wsgi.build_app(conf, clock, service_plugins,
                                  notifications.get_notifier(conf),
                                  compute_client.NovaClient(conf))

    def request(self, method, path, body=None, project='p1',
                roles=MEMBER):
        """The response to a request of a user of ``project``.

        ``body`` is sent JSON-encoded, or as is when it is bytes.
        """
        req = webob.Request.blank(path, method=method, headers={
            'X-User-Id': 'u-' + project, 'X-Project-Id': project,
            'X-Roles': roles, 'X-Auth-Token': 'token',
            'Accept': 'application/json'})
        if body is not None:
            req.body = body if isinstance(body, bytes) else json.dumps(
                body).encode()
            req.content_type = 'application/json'
        return req.get_response(self.app)

    def create(self, project='p1', **changes):
        response = self.request('POST', '/v1/leases', lease_body(**changes),
                                project=project)
        self.assertEqual(201, response.status_int, response.text)
        return response.json['lease']

    def assertError(self, code, name, response):
        """``response`` has status ``code`` and Blazar's error body."""
        self.assertEqual(code, response.status_int, response.text)
        self.assertEqual('application/json', response.content_type)
        body = response.json
        self.assertEqual({'error_code', 'error_message', 'error_name'},
                         set(body))
        self.assertEqual(code, body['error_code'])
        self.assertEqual(name, body['error_name'])
        return body['error_message']

    def test_round_trip(self):
        response = self.request('POST', '/v1/leases', lease_body())
        self.assertEqual(201, response.status_int)
        self.assertEqual('application/json', response.content_type)
        lease = response.json['lease']
        self.assertEqual(test_leases.LEASE_KEYS, set(lease))
        self.assertEqual(('lease1', 'p1', 'u-p1', 'PENDING'),
                         (lease['name'], lease['project_id'],
                          lease['user_id'], lease['status']))
        self.assertEqual('2027-01-10T10:00:00.000000', lease['start_date'])
        path = '/v1/leases/' + lease['id']

        response = self.request('GET', '/v1/leases')
        self.assertEqual((200, {'leases': [lease]}),
                         (response.status_int, response.json))
        response = self.request('GET', path)
        self.assertEqual((200, {'lease': lease}),
                         (response.status_int, response.json))

        response = self.request('PUT', path, {
            'name': 'lease2', 'end_date': '2027-01-13 10:00', 'events': []})
        self.assertEqual(200, response.status_int)
        updated = response.json['lease']
        self.assertEqual(('lease2', '2027-01-13T10:00:00.000000'),
                         (updated['name'], updated['end_date']))
        self.assertEqual(updated, self.request('GET', path).json['lease'])

        response = self.request('DELETE', path)
        self.assertEqual((204, b''), (response.status_int, response.body))
        self.assertNotIn('Content-Type', response.headers)
        self.assertError(404, 'NotFound', self.request('GET', path))
        self.assertEqual({'leases': []},
                         self.request('GET', '/v1/leases').json)

    def test_malformed_json_is_a_bad_request(self):
        for body in (b'{"name": ', b''):
            message = self.assertError(400, 'InvalidInput', self.request(
                'POST', '/v1/leases', body))
            self.assertTrue(message.startswith('body: '), message)
        lease = self.create()
        message = self.assertError(400, 'InvalidInput', self.request(
            'PUT', '/v1/leases/' + lease['id'], b'not json'))
        self.assertTrue(message.startswith('body: '), message)
        self.assertEqual({'leases': [lease]},
                         self.request('GET', '/v1/leases').json)

    def test_invalid_input_names_the_field(self):
        cases = [
            (lease_body(end_date='2027-01-10 09:30'), 'end_date'),
            (lease_body(name=test_leases.DROP), 'name'),
            (lease_body(reservations=[{'resource_type': 'nope'}]),
             'reservations[0].resource_type'),
            ([], 'body'),
        ]
        for body, field in cases:
            message = self.assertError(400, 'InvalidInput', self.request(
                'POST', '/v1/leases', body))
            self.assertTrue(message.startswith(field + ': '), message)
        self.assertEqual({'leases': []},
                         self.request('GET', '/v1/leases').json)

    def test_conflict(self):
        self.create()
        message = self.assertError(409, 'Conflict', self.request(
            'POST', '/v1/leases', lease_body()))
        self.assertIn('lease1', message)

    def test_unknown_lease_is_not_found(self):
        message = self.assertError(404, 'NotFound', self.request(
            'GET', '/v1/leases/no-such-lease'))
        self.assertIn('no-such-lease', message)

    def test_other_projects_leases_are_not_found(self):
        path = '/v1/leases/' + self.create()['id']
        for method, body in (('GET', None), ('PUT', {'name': 'mine'}),
                             ('DELETE', None)):
            self.assertError(404, 'NotFound', self.request(
                method, path, body, project='p2'))
        self.assertEqual({'leases': []}, self.request(
            'GET', '/v1/leases', project='p2').json)
        self.assertEqual('lease1', self.request('GET', path).json[
            'lease']['name'])

    def test_an_admin_lists_every_projects_leases(self):
        # As in Blazar: python-blazarclient has no way to ask for them.
        mine = self.create()
        theirs = self.create(project='p2', name='lease2')
        for query in ('', '?all_projects=1', '?all_projects=true'):
            response = self.request('GET', '/v1/leases' + query,
                                    project='adm', roles='reader,admin')
            self.assertEqual(200, response.status_int, response.text)
            # Both were created at the same (manual) time: compare by id.
            self.assertEqual(sorted([mine, theirs], key=_id),
                             sorted(response.json['leases'], key=_id))
        self.assertEqual({'leases': []}, self.request(
            'GET', '/v1/leases?all_projects=false', project='adm',
            roles='admin').json)
        self.assertEqual(theirs, self.request(
            'GET', '/v1/leases/' + theirs['id'], project='adm',
            roles='admin').json['lease'])

    def test_members_list_their_projects_leases_only(self):
        mine = self.create()
        self.create(project='p2', name='lease2')
        self.assertEqual({'leases': [mine]},
                         self.request('GET', '/v1/leases').json)
        message = self.assertError(403, 'Forbidden', self.request(
            'GET', '/v1/leases?all_projects=1'))
        self.assertIn('list_all_projects', message)
        message = self.assertError(400, 'InvalidInput', self.request(
            'GET', '/v1/leases?all_projects=maybe', roles='admin'))
        self.assertTrue(message.startswith('all_projects: '), message)

    def test_a_project_filter_is_for_admins(self):
        mine = self.create()
        theirs = self.create(project='p2', name='lease2')
        self.assertEqual([theirs], self.request(
            'GET', '/v1/leases?project_id=p2', project='adm',
            roles='admin').json['leases'])
        self.assertEqual([mine], self.request(
            'GET', '/v1/leases?project_id=p1').json['leases'])
        # Another project's id tells a member nothing: no leases, as for
        # a project that has none.
        for project in ('p2', 'p3'):
            response = self.request('GET', '/v1/leases?project_id=' +
                                    project)
            self.assertEqual((200, {'leases': []}),
                             (response.status_int, response.json))

    def test_leases_are_filtered_by_status_and_name(self):
        first = self.create()
        second = self.create(name='lease2')
        self._set_status(second['id'], 'ACTIVE')
        second = self.request('GET', '/v1/leases/' + second['id']).json[
            'lease']
        for query, expected in [
                ('status=PENDING', [first]),
                ('status=ACTIVE', [second]),
                ('status=ERROR', []),
                ('name=lease2', [second]),
                ('name=lease2&status=PENDING', []),
                ('name=lease', []),
        ]:
            with self.subTest(query=query):
                self.assertEqual(expected, self.request(
                    'GET', '/v1/leases?' + query).json['leases'])

    def test_leases_are_filtered_by_the_window_they_overlap(self):
        # 01-10 10:00 .. 01-12 10:00, then 01-12 10:00 .. 01-14 10:00.
        first = self.create()
        second = self.create(name='lease2', start_date='2027-01-12 10:00',
                             end_date='2027-01-14 10:00')
        for query, expected in [
                ('start=2027-01-12 10:00', [second]),
                ('start=2027-01-12 09:59', [first, second]),
                ('end=2027-01-12 10:00', [first]),
                ('end=2027-01-12 10:01', [first, second]),
                ('start=2027-01-11 00:00&end=2027-01-11 01:00', [first]),
                ('start=2027-01-15 00:00', []),
                ('end=now', []),
                ('start=2027-01-13T09:00:00%2B01:00&end=2027-01-13 09:30',
                 [second]),
        ]:
            with self.subTest(query=query):
                # Both were created at the same (manual) time.
                self.assertEqual(
                    sorted(lease['id'] for lease in expected),
                    sorted(lease['id'] for lease in self.request(
                        'GET', '/v1/leases?' + query).json['leases']))

    def test_bad_list_filters_are_refused_naming_the_param(self):
        self.create()
        for query, field in [
                ('status=pending', 'status'),
                ('name=', 'name'),
                ('project_id=', 'project_id'),
                ('start=soon', 'start'),
                ('end=2027-13-01 10:00', 'end'),
                ('start=2027-01-12 10:00&end=2027-01-11 10:00', 'end'),
                ('status=ACTIVE&status=PENDING', 'status'),
                ('limit=10', 'limit'),
        ]:
            with self.subTest(query=query):
                message = self.assertError(400, 'InvalidInput', self.request(
                    'GET', '/v1/leases?' + query))
                self.assertTrue(message.startswith(field + ': '), message)

    def test_plugins_lists_the_resource_types(self):
        response = self.request('GET', '/v1/plugins', roles='reader')
        self.assertEqual(200, response.status_int, response.text)
        plugins = response.json['plugins']
        self.assertEqual({'physical:host', 'virtual:instance',
                          'flavor:instance', 'virtual:volume',
                          'virtual:floatingip', 'network',
                          'storage:pool', 'heat:stack',
                          test_plugins.RESOURCE_TYPE,
                          'test:broken'},
                         {plugin['resource_type'] for plugin in plugins})
        self.assertEqual(
            [plugin['resource_type'] for plugin in plugins],
            sorted(plugin['resource_type'] for plugin in plugins))
        host = [plugin for plugin in plugins
                if plugin['resource_type'] == 'physical:host'][0]
        self.assertEqual({'resource_type': 'physical:host',
                          'description': 'Lease whole Nova compute hosts.'},
                         host)
        self.assertError(403, 'Forbidden', self.request(
            'GET', '/v1/plugins', roles='other'))
        self.assertError(405, 'MethodNotAllowed', self.request(
            'POST', '/v1/plugins', {}))

    def test_blazars_error_messages_after_the_field(self):
        """Blazar's own bodies, refused with Blazar's words."""
        host = {'resource_type': 'physical:host', 'min': 1, 'max': '',
                'hypervisor_properties': '', 'resource_properties': ''}
        for body, message in [
                (lease_body(end_date='2027-13-01 10:00'),
                 'end_date: 2027-13-01 10:00 is an invalid date. Required '
                 'format: %Y-%m-%d %H:%M ('),
                (lease_body(end_date='2027-01-10 10:00'),
                 'end_date: End date must be later than start date.'),
                (lease_body(start_date='2027-01-10 08:59'),
                 'start_date: Start date must be later than current date'),
                (lease_body(end_date=test_leases.DROP),
                 'end_date: Missing parameter end_date'),
                (lease_body(name=test_leases.DROP),
                 'name: Missing parameter name'),
                (lease_body(reservations=[{'min': 1}]),
                 'reservations[0].resource_type: Missing parameter '
                 'resource_type'),
                (lease_body(reservations=[dict(host, max=test_leases.DROP)]),
                 'reservations[0].max: Missing parameter max'),
                (lease_body(reservations=[host]),
                 'reservations[0].max: Malformed parameter max'),
                (lease_body(before_end_date='2027-01-13 10:00'),
                 'before_end_date: Datetime is out of lease limits'),
        ]:
            body['reservations'] = [
                {key: value for key, value in reservation.items()
                 if value is not test_leases.DROP}
                for reservation in body.get('reservations', [])]
            with self.subTest(message=message):
                error = self.assertError(400, 'InvalidInput', self.request(
                    'POST', '/v1/leases', body))
                self.assertTrue(error.startswith(message), error)
        self.assertEqual({'leases': []},
                         self.request('GET', '/v1/leases').json)

    def test_a_start_in_the_current_minute_counts_as_now(self):
        self.clock.advance(seconds=59)
        lease = self.create(start_date='2027-01-10 09:00')
        self.assertEqual('2027-01-10T09:00:00.000000', lease['start_date'])

    def test_an_end_moved_into_the_current_minute_ends_the_lease_now(self):
        lease = self.create(start_date='now')
        self.clock.advance(hours=1, seconds=30)
        response = self.request('PUT', '/v1/leases/' + lease['id'], {
            'end_date': '2027-01-10 10:00'})
        self.assertEqual(200, response.status_int, response.text)
        self.assertEqual('2027-01-10T10:00:00.000000',
                         response.json['lease']['end_date'])
        message = self.assertError(400, 'InvalidInput', self.request(
            'PUT', '/v1/leases/' + lease['id'], {
                'end_date': '2027-01-10 09:59'}))
        self.assertEqual('end_date: End date must be later than current '
                         'and start date', message)

    def test_bad_stack_requests_are_refused_naming_the_field(self):
        stack = {'resource_type': 'heat:stack',
                 'template': 'heat_template_version: 2021-04-16'}
        for changes, field in (
                ({'template': test_leases.DROP}, 'template'),
                ({'template': 7}, 'template'),
                ({'template': '  '}, 'template'),
                ({'parameters': ['image=x']}, 'parameters'),
                ({'environment': 7}, 'environment'),
                ({'on_end': 'shelve'}, 'on_end'),
                ({'stack_name': 'mine'}, 'stack_name'),
                # No caller's token here: Heat cannot preview as the caller.
                ({}, 'template')):
            reservation = {key: value for key, value in
                           dict(stack, **changes).items()
                           if value is not test_leases.DROP}
            message = self.assertError(400, 'InvalidInput', self.request(
                'POST', '/v1/leases', lease_body(
                    reservations=[reservation])))
            self.assertTrue(message.startswith(
                'reservations[0].%s: ' % field), message)
        self.assertEqual([], self.request('GET', '/v1/leases').json[
            'leases'])

    def test_long_extra_capability_keys_are_refused_as_in_blazar(self):
        key = 'k' * 65
        message = self.assertError(400, 'InvalidInput', self.request(
            'POST', '/v1/os-hosts', {'name': 'compute-1', key: 'x'},
            roles='admin'))
        self.assertEqual('%s: Extra capability key too long (at most 64 '
                         'characters)' % key, message)

    def _set_status(self, lease_id, status):
        with db_api.writer(context.get_admin_context(),
                           self.clock) as session:
            session.execute(tables.LEASES.update().where(
                tables.LEASES.c.id == lease_id).values(status=status))

    def test_unknown_path_is_not_found(self):
        for path in ('/v1', '/v1/leases/', '/v1/leases/x/y', '/v2/leases'):
            self.assertError(404, 'NotFound', self.request('GET', path))

    def test_wrong_method_is_not_allowed(self):
        response = self.request('DELETE', '/v1/leases')
        self.assertError(405, 'MethodNotAllowed', response)
        self.assertEqual('GET, POST', response.headers['Allow'])
        response = self.request('POST', '/v1/leases/x', {})
        self.assertError(405, 'MethodNotAllowed', response)
        self.assertEqual('DELETE, GET, PUT', response.headers['Allow'])

    def test_fixed_paths_win_over_host_id(self):
        for path, key in (('/v1/os-hosts/allocations', 'allocations'),
                          ('/v1/os-hosts/properties', 'resource_properties')):
            response = self.request('GET', path, roles='admin')
            self.assertEqual(200, response.status_int, response.text)
            self.assertEqual({key: []}, response.json)
            # Not /v1/os-hosts/{host_id}'s DELETE either.
            response = self.request('DELETE', path, roles='admin')
            self.assertError(405, 'MethodNotAllowed', response)
            self.assertEqual('GET', response.headers['Allow'])

    def test_path_arguments_are_utf8_decoded(self):
        message = self.assertError(404, 'NotFound', self.request(
            'GET', '/v1/leases/l%C3%A9ase'))
        self.assertIn('l\u00e9ase', message)

    def test_unexpected_errors_are_generic(self):
        message = self.assertError(500, 'ReservationError', self.request(
            'POST', '/v1/leases',
            lease_body(reservations=[{'resource_type': 'test:broken'}])))
        self.assertNotIn('internal detail', message)
        self.assertEqual({'leases': []},
                         self.request('GET', '/v1/leases').json)

    def test_python_blazarclient(self):
        """python-blazarclient works at nova-api's ``/reservation/v1``."""
        url = 'http://nova-api.test/reservation'
        with interceptor.RequestsInterceptor(
                lambda: as_keystonemiddleware(self.app, 'p1'), url=url):
            blazar = blazar_client.Client(session=ks_session.Session(
                auth=token_endpoint.Token(url + '/v1', 'token'))).lease
            lease = blazar.create(
                'lease1', '2027-01-10 10:00', '2027-01-12 10:00',
                [{'resource_type': test_plugins.RESOURCE_TYPE}], [])
            self.assertEqual('2027-01-12T10:00:00.000000', lease['end_date'])
            self.assertEqual([lease], blazar.list())
            self.assertEqual(lease, blazar.get(lease['id']))
            self.assertEqual('2027-01-13T10:00:00.000000', blazar.update(
                lease['id'], prolong_for='1d')['end_date'])
            blazar.delete(lease['id'])
            self.assertEqual([], blazar.list())
            error = self.assertRaises(blazar_exc.BlazarClientException,
                                      blazar.get, lease['id'])
            self.assertEqual(404, error.kwargs['code'])
            self.assertIn(lease['id'], str(error))

    def test_python_blazarclient_lists_every_project_for_an_admin(self):
        theirs = self.create(project='p2')
        url = 'http://nova-api.test/reservation'
        with interceptor.RequestsInterceptor(
                lambda: as_keystonemiddleware(self.app, 'adm',
                                              'admin,member,reader'),
                url=url):
            blazar = blazar_client.Client(session=ks_session.Session(
                auth=token_endpoint.Token(url + '/v1', 'token'))).lease
            self.assertEqual([theirs], blazar.list())


class LeaseAPISQLiteTest(_LeaseAPITests, base.DBTestCase):
    pass


class LeaseAPIPostgreSQLTest(_LeaseAPITests, base.PostgreSQLTestCase):
    pass


class LeaseAPIMySQLTest(_LeaseAPITests, base.MySQLTestCase):
    pass


def _id(view):
    return view['id']
