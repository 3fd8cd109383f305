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

"""Reservable floating IPs and ``virtual:floatingip`` leases, over the API.

Requests go through webob to the real lease API application on a real
leases DB (SQLite, PostgreSQL, MariaDB); the registration checks ask a
real Neutron 29 (:mod:`tests.neutron_service`) through the real Neutron
client. The addresses of its external network ``public``: subnet
172.24.4.0/24, gateway .1, allocation pool .100-.199.
"""

import json

from blazarclient import client as blazar_client
from blazarclient import exception as blazar_exc
from keystoneauth1 import session as ks_session
from keystoneauth1 import token_endpoint
import sqlalchemy as sa
import webob
from wsgi_intercept import interceptor

from db import tables
from reservation_ext.api import wsgi
from reservation_ext.clients import compute as compute_client
from reservation_ext import clock as clock_mod
from reservation_ext import conf as conf_mod
from reservation_ext.leases import notifications
from reservation_ext import plugins as plugins_mod
from reservation_ext.sandbox.neutron import topology
from tests import base
from tests import fixtures
from tests.functional import test_leases
from tests import neutron_service
from tests import nova_auth

ADMIN = 'admin,member,reader'
MEMBER = 'member,reader'
FIP = 'virtual:floatingip'
KEYS = {'id', 'floating_network_id', 'subnet_id', 'floating_ip_address',
        'reservable', 'created_at', 'updated_at'}


def address(index):
    """``172.24.4.<index>``: reservable for 2 to 99 and 200 to 254."""
    return '%s.%d' % (topology.PUBLIC_CIDR.rsplit('.', 1)[0], index)


class _Requests:
    """The lease API app, a real Neutron, and requests to them."""

    def setUp(self):
        super().setUp()
        self.useFixture(fixtures.TestPlugins())
        self.neutron = self.useFixture(neutron_service.NeutronFixture())
        self.network_id = self.neutron.public_network_id
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
            req.body = json.dumps(body).encode()
            req.content_type = 'application/json'
        response = req.get_response(self.app)
        if expect is not None:
            self.assertEqual(expect, response.status_int, response.text)
        return response

    def admin(self, method, path, body=None, expect=None):
        return self.request(method, path, body, 'admin', ADMIN, expect)

    def register(self, index, network_id=None):
        return self.admin('POST', '/floatingips', {
            'floating_network_id': network_id or self.network_id,
            'floating_ip_address': address(index)}, expect=201).json[
                'floatingip']

    def refused(self, code, field, response):
        """``response`` is Blazar's error ``code`` naming ``field``."""
        self.assertEqual(code, response.status_int, response.text)
        self.assertEqual(code, response.json['error_code'])
        self.assertIn(field, response.json['error_message'])
        return response.json['error_message']

    def lease(self, name, start, end, amount=1, required=None, project='p1',
              expect=201, **extra):
        reservation = dict({'resource_type': FIP,
                            'network_id': self.network_id,
                            'amount': amount}, **extra)
        if required is not None:
            reservation['required_floatingips'] = required
        return self.request('POST', '/leases', {
            'name': name, 'start_date': start, 'end_date': end,
            'reservations': [reservation], 'events': []},
            project=project, expect=expect)

    def booked(self, lease_id):
        """The addresses booked for a lease, read in the DB."""
        fips, allocations = (tables.FLOATINGIPS,
                             tables.FLOATINGIP_ALLOCATIONS)
        with self.engine.connect() as conn:
            return conn.scalars(
                sa.select(fips.c.floating_ip_address)
                .join(allocations,
                      allocations.c.floatingip_id == fips.c.id)
                .join(tables.RESERVATIONS, tables.RESERVATIONS.c.id ==
                      allocations.c.reservation_id)
                .where(tables.RESERVATIONS.c.lease_id == lease_id)
                .order_by(fips.c.floating_ip_address)).all()


class _InventoryTests(_Requests):

    def test_an_admin_registers_lists_shows_and_deletes_an_address(self):
        fip = self.register(2)
        self.assertEqual(KEYS, set(fip))
        self.assertEqual((self.network_id, self.neutron.public_subnet_id,
                          '172.24.4.2', True),
                         (fip['floating_network_id'], fip['subnet_id'],
                          fip['floating_ip_address'], fip['reservable']))
        self.assertEqual([fip], self.admin('GET', '/floatingips',
                                           expect=200).json['floatingips'])
        self.assertEqual(fip, self.admin('GET', '/floatingips/' + fip['id'],
                                         expect=200).json['floatingip'])
        self.assertEqual(b'', self.admin(
            'DELETE', '/floatingips/' + fip['id'], expect=204).body)
        self.refused(404, fip['id'],
                     self.admin('GET', '/floatingips/' + fip['id']))
        self.refused(404, 'nope', self.admin('DELETE', '/floatingips/nope'))

    def test_an_address_neutron_hands_out_or_outside_the_subnets_is_refused(
            self):
        for text in ('172.24.4.100', '172.24.4.199', '172.24.4.1',
                     '10.9.9.9', '172.24.4.', 'abc', ''):
            self.refused(400, 'floating_ip_address', self.admin(
                'POST', '/floatingips', {
                    'floating_network_id': self.network_id,
                    'floating_ip_address': text}))
        self.assertEqual([], self.admin('GET', '/floatingips').json[
            'floatingips'])

    def test_a_network_that_is_unknown_or_not_external_is_refused(self):
        private = self.neutron.connection().network.create_network(
            name='private')
        for network_id in ('no-such-network', private.id):
            self.refused(400, 'floating_network_id', self.admin(
                'POST', '/floatingips', {
                    'floating_network_id': network_id,
                    'floating_ip_address': address(2)}))
        self.refused(400, 'floating_network_id', self.admin(
            'POST', '/floatingips', {'floating_ip_address': address(2)}))
        self.refused(400, 'extra', self.admin('POST', '/floatingips', {
            'floating_network_id': self.network_id,
            'floating_ip_address': address(2), 'extra': 1}))

    def test_an_address_registered_twice_is_refused_with_409(self):
        self.register(2)
        message = self.refused(409, '172.24.4.2', self.admin(
            'POST', '/floatingips', {
                'floating_network_id': self.network_id,
                'floating_ip_address': '172.24.4.2'}))
        self.assertIn('already registered', message)

    def test_a_member_can_neither_register_nor_see_the_addresses(self):
        fip = self.register(2)
        body = {'floating_network_id': self.network_id,
                'floating_ip_address': address(3)}
        for method, path, sent in (('POST', '/floatingips', body),
                                   ('GET', '/floatingips', None),
                                   ('GET', '/floatingips/' + fip['id'], None),
                                   ('DELETE', '/floatingips/' + fip['id'],
                                    None)):
            self.refused(403, 'reservation:floatingips',
                         self.request(method, path, sent))
        self.assertEqual([fip], self.admin('GET', '/floatingips').json[
            'floatingips'])

    def test_python_blazarclient_registers_lists_shows_and_deletes(self):
        url = 'http://nova-api.test/reservation'

        def app():
            def with_admin(environ, start_response):
                environ.update(HTTP_X_PROJECT_ID='admin',
                               HTTP_X_USER_ID='u-admin', HTTP_X_ROLES=ADMIN)
                return self.app(environ, start_response)
            return with_admin

        with interceptor.RequestsInterceptor(app, url=url):
            blazar = blazar_client.Client(session=ks_session.Session(
                auth=token_endpoint.Token(url + '/v1', 'token'))).floatingip
            fip = blazar.create(self.network_id, address(4))
            self.assertEqual('172.24.4.4', fip['floating_ip_address'])
            self.assertEqual([fip], blazar.list())
            self.assertEqual(fip, blazar.get(fip['id']))
            blazar.delete(fip['id'])
            self.assertEqual([], blazar.list())
            error = self.assertRaises(blazar_exc.BlazarClientException,
                                      blazar.create, self.network_id,
                                      '172.24.4.150')
            self.assertEqual(400, error.kwargs['code'])


class _BookingTests(_Requests):

    def test_a_lease_books_its_addresses_and_shows_the_request_as_blazar(
            self):
        for index in (2, 3, 4):
            self.register(index)
        lease = self.lease('fips', '2027-01-10 10:00', '2027-01-11 10:00',
                           amount=2, required=['172.24.4.4']).json['lease']
        [reservation] = lease['reservations']
        self.assertEqual(
            {'resource_type': FIP, 'network_id': self.network_id,
             'amount': 2, 'required_floatingips': ['172.24.4.4'],
             'resource_id': reservation['id'], 'status': 'pending'},
            {key: reservation[key] for key in (
                'resource_type', 'network_id', 'amount',
                'required_floatingips', 'resource_id', 'status')})
        self.assertEqual(['172.24.4.2', '172.24.4.4'],
                         self.booked(lease['id']))
        shown = self.request('GET', '/leases/' + lease['id'],
                             expect=200).json['lease']
        self.assertEqual(lease['reservations'], shown['reservations'])

    def test_overlapping_leases_never_share_an_address(self):
        self.register(2)
        self.register(3)
        first = self.lease('a', '2027-01-10 10:00', '2027-01-11 10:00',
                           amount=2).json['lease']
        message = self.refused(409, 'amount', self.lease(
            'b', '2027-01-11 09:00', '2027-01-12 10:00', project='p2',
            expect=None))
        self.assertIn('0 free', message)
        after = self.lease('c', '2027-01-11 10:00', '2027-01-12 10:00',
                           amount=2, project='p2').json['lease']
        self.assertEqual(self.booked(first['id']), self.booked(after['id']))
        self.assertEqual(2, len(self.booked(after['id'])))

    def test_a_required_address_that_is_taken_is_refused_naming_it(self):
        self.register(2)
        self.register(3)
        self.lease('a', '2027-01-10 10:00', '2027-01-11 10:00',
                   required=['172.24.4.2'])
        message = self.refused(409, 'required_floatingips', self.lease(
            'b', '2027-01-10 12:00', '2027-01-10 13:00',
            required=['172.24.4.2'], expect=None))
        self.assertIn('172.24.4.2', message)
        message = self.refused(409, '172.24.4.9', self.lease(
            'c', '2027-01-10 12:00', '2027-01-10 13:00',
            required=['172.24.4.9'], expect=None))
        self.assertIn('not free', message)

    def test_bad_floating_ip_requests_are_refused_naming_the_field(self):
        self.register(2)
        for field, changes in (
                ('amount', {'amount': 0}), ('amount', {'amount': 'x'}),
                ('network_id', {'network_id': None}),
                ('required_floatingips', {'required': ['nope']}),
                ('required_floatingips', {'required': ['172.24.4.2'] * 2}),
                ('required_floatingips', {'amount': 1, 'required': [
                    '172.24.4.2', '172.24.4.3']}),
                ('colour', {'colour': 'red'})):
            self.refused(400, field, self.lease(
                'x', '2027-01-10 10:00', '2027-01-11 10:00', expect=None,
                **changes))
        self.refused(400, 'amount', self.lease(
            'x', '2027-01-10 10:00', '2027-01-11 10:00', amount=3,
            expect=None))
        self.assertEqual([], self.request('GET', '/leases').json['leases'])

    def test_an_address_a_lease_holds_cannot_be_deleted_until_the_lease_goes(
            self):
        fip = self.register(2)
        lease = self.lease('a', '2027-01-10 10:00', '2027-01-11 10:00')
        lease_id = lease.json['lease']['id']
        self.refused(409, '172.24.4.2', self.admin(
            'DELETE', '/floatingips/' + fip['id']))
        self.request('DELETE', '/leases/' + lease_id, expect=204)
        self.admin('DELETE', '/floatingips/' + fip['id'], expect=204)

    def test_a_lease_over_a_taken_window_cannot_be_extended_onto_it(self):
        self.register(2)
        first = self.lease('a', '2027-01-10 10:00', '2027-01-11 10:00')
        self.lease('b', '2027-01-12 10:00', '2027-01-13 10:00')
        first_id = first.json['lease']['id']
        message = self.refused(409, '172.24.4.2', self.request(
            'PUT', '/leases/' + first_id,
            {'end_date': '2027-01-12 12:00'}))
        self.assertIn('2027-01-12 10:00', message)
        moved = self.request('PUT', '/leases/' + first_id,
                             {'end_date': '2027-01-12 10:00'}, expect=200)
        self.assertEqual('2027-01-12T10:00:00.000000',
                         moved.json['lease']['end_date'])

    def test_an_update_changes_the_amount_but_not_the_network(self):
        for index in (2, 3, 4):
            self.register(index)
        lease = self.lease('a', '2027-01-10 10:00', '2027-01-11 10:00',
                           amount=1, required=['172.24.4.3']).json['lease']
        reservation_id = lease['reservations'][0]['id']
        self.request('PUT', '/leases/' + lease['id'], {'reservations': [
            {'id': reservation_id, 'amount': 3}]}, expect=200)
        self.assertEqual(['172.24.4.2', '172.24.4.3', '172.24.4.4'],
                         self.booked(lease['id']))
        updated = self.request('PUT', '/leases/' + lease['id'], {
            'reservations': [{'id': reservation_id, 'amount': 1}]},
            expect=200).json['lease']
        self.assertEqual(1, updated['reservations'][0]['amount'])
        self.assertEqual(['172.24.4.3'], self.booked(lease['id']))
        for field, value in (('network_id', 'another'),
                             ('required_floatingips', ['172.24.4.2'])):
            self.refused(400, field, self.request(
                'PUT', '/leases/' + lease['id'], {'reservations': [
                    {'id': reservation_id, field: value}]}))
        cleared = self.request('PUT', '/leases/' + lease['id'], {
            'reservations': [{'id': reservation_id,
                              'required_floatingips': []}]},
            expect=200).json['lease']
        self.assertEqual([], cleared['reservations'][0][
            'required_floatingips'])

    def test_availability_counts_the_free_addresses_of_a_network(self):
        self.register(2)
        self.register(3)
        self.lease('a', '2027-01-10 10:00', '2027-01-10 12:00')
        answer = self.request(
            'GET', '/availability?resource_type=%s&network_id=%s&start=%s'
            '&end=%s' % (FIP, self.network_id, '2027-01-10T09:00',
                         '2027-01-10T13:00'), expect=200).json[
                'availability']
        self.assertEqual('floating IPs', answer['unit'])
        self.assertEqual([1, 2], sorted(
            {step['amount'] for step in answer['free']}))
        self.assertEqual([(2, '10:00'), (1, '12:00')], [
            (step['amount'], step['end'][11:16]) for step in answer['free']
            if step['end'][11:16] in ('10:00', '12:00')])
        self.refused(400, 'network_id', self.request(
            'GET', '/availability?resource_type=%s&end=2027-01-11T00:00'
            % FIP))

    def test_a_proposal_holds_free_addresses_until_a_lease_takes_them(self):
        self.register(2)
        self.register(3)
        self.lease('a', '2027-01-10 10:00', '2027-01-10 12:00', amount=2)
        [proposal] = self.request('POST', '/leases/proposals', {
            'reservations': [{'resource_type': FIP,
                              'network_id': self.network_id, 'amount': 2}],
            'duration': '1h', 'count': 1,
            'not_before': '2027-01-10 10:00'}, expect=201).json['proposals']
        self.assertEqual('2027-01-10T12:00:00.000000',
                         proposal['start_date'])
        # Held: another project's lease finds nothing free then.
        self.refused(409, 'amount', self.lease(
            'b', '2027-01-10 12:00', '2027-01-10 12:30', project='p2',
            expect=None))
        lease = self.request('POST', '/leases', {
            'name': 'taken', 'proposal_id': proposal['id']},
            expect=201).json['lease']
        self.assertEqual(['172.24.4.2', '172.24.4.3'],
                         self.booked(lease['id']))
        self.assertEqual(
            (2, []), (lease['reservations'][0]['amount'],
                      lease['reservations'][0]['required_floatingips']))
        with self.engine.connect() as conn:
            self.assertEqual([], conn.execute(sa.select(
                tables.FLOATINGIP_ALLOCATIONS).where(
                tables.FLOATINGIP_ALLOCATIONS.c.proposal_id.isnot(
                    None))).all())


class InventorySQLiteTest(_InventoryTests, base.DBTestCase):
    pass


class BookingSQLiteTest(_BookingTests, base.DBTestCase):
    pass


class BookingPostgreSQLTest(_BookingTests, base.PostgreSQLTestCase):
    pass


class BookingMySQLTest(_BookingTests, base.MySQLTestCase):
    pass
