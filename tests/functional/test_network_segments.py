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

"""Network segments: ``/v1/networks`` and ``network`` leases on a real DB.

Requests go through the real WSGI application (with the headers
keystonemiddleware sets) to the segment inventory and the lease service
with the real ``network`` plugin, on SQLite, PostgreSQL and MariaDB.
Concurrent bookings (threads on an SQLite file, processes on the
servers) never put one segment in two overlapping leases.
"""

import json
import uuid

import webob

from db import api as db_api
from db import tables
from reservation_ext.api import wsgi
from reservation_ext.clients import compute as compute_client
from reservation_ext import clock as clock_mod
from reservation_ext import context
from reservation_ext.leases import notifications
from reservation_ext.planning import capabilities
from reservation_ext.planning import network_segments as planner
from reservation_ext import plugins as plugins_mod
from reservation_ext.store import network_segments as store
from tests import base
from tests import fixtures
from tests.functional import concurrency
from tests.functional import test_leases
from tests.functional import test_planner

ADMIN = 'admin,member,reader'
MEMBER = 'member,reader'
SEGMENT_KEYS = {'id', 'network_type', 'physical_network', 'segment_id',
                'created_at', 'updated_at'}


def network_lease(name='lease1', start='2027-01-10 10:00',
                  end='2027-01-12 10:00', **fields):
    """A create request of a lease with one ``network`` reservation."""
    reservation = dict({'resource_type': 'network',
                        'network_name': 'net-' + name}, **fields)
    return {'name': name, 'start_date': start, 'end_date': end,
            'reservations': [reservation], 'events': []}


class _NetworkTests:

    def setUp(self):
        super().setUp()
        conf = self.useFixture(fixtures.ReservationConf()).conf
        self.clock = clock_mod.ManualClock(test_leases.NOW)
        self.app = wsgi.build_app(conf, self.clock,
                                  plugins_mod.load_plugins(conf, self.clock),
                                  notifications.get_notifier(conf),
                                  compute_client.NovaClient(conf))

    def request(self, method, path, body=None, roles=ADMIN, project='p1'):
        req = webob.Request.blank(path, method=method, headers={
            'X-User-Id': 'u-' + project, 'X-Project-Id': project,
            'X-Roles': roles, 'Accept': 'application/json'})
        if body is not None:
            req.body = json.dumps(body).encode()
            req.content_type = 'application/json'
        return req.get_response(self.app)

    def segment(self, expect=201, **body):
        response = self.request('POST', '/v1/networks', body)
        self.assertEqual(expect, response.status_int, response.text)
        return response.json.get('network') or response.json

    def lease(self, expect=201, **kwargs):
        response = self.request('POST', '/v1/leases', network_lease(**kwargs),
                                roles=MEMBER)
        self.assertEqual(expect, response.status_int, response.text)
        return response.json.get('lease') or response.json

    def booked(self, lease):
        with db_api.context_manager.reader.using(
                context.get_admin_context()) as session:
            return planner.booked_segment(session,
                                          lease['reservations'][0]['id'])

    def assertRefused(self, code, field_or_text, response):
        self.assertEqual(code, response.status_int, response.text)
        self.assertIn(field_or_text, response.json['error_message'])

    def test_an_admin_registers_lists_shows_updates_and_deletes_a_segment(
            self):
        vlan = self.segment(network_type='vlan', physical_network='physnet1',
                            segment_id='100', stitch='true')
        self.assertEqual(SEGMENT_KEYS | {'stitch'}, set(vlan))
        self.assertEqual(('vlan', 'physnet1', 100, 'true'), (
            vlan['network_type'], vlan['physical_network'],
            vlan['segment_id'], vlan['stitch']))
        vxlan = self.segment(network_type='vxlan', physical_network=None,
                             segment_id=5000)
        self.assertIsNone(vxlan['physical_network'])
        path = '/v1/networks/' + vlan['id']
        self.assertEqual({'networks': [vlan, vxlan]},
                         self.request('GET', '/v1/networks').json)
        self.assertEqual({'network': vlan}, self.request('GET', path).json)

        self.clock.advance(minutes=1)
        updated = self.request('PUT', path, {'stitch': None, 'rack': 'r2'})
        self.assertEqual(200, updated.status_int, updated.text)
        self.assertEqual('r2', updated.json['network']['rack'])
        self.assertNotIn('stitch', updated.json['network'])
        self.assertEqual('2027-01-10 09:01:00',
                         updated.json['network']['updated_at'])

        self.assertEqual(204, self.request('DELETE', path).status_int)
        self.assertRefused(404, vlan['id'], self.request('GET', path))
        self.assertRefused(404, vlan['id'], self.request('DELETE', path))

    def test_bad_segments_are_refused_naming_the_field(self):
        for body, field in [
                ({'network_type': 'vlan', 'segment_id': 5},
                 'physical_network'),
                ({'network_type': 'vxlan', 'segment_id': 5,
                  'physical_network': 'physnet1'}, 'physical_network'),
                ({'network_type': 'gre', 'segment_id': 5}, 'network_type'),
                ({'network_type': 'vlan', 'physical_network': 'p',
                  'segment_id': 4095}, 'segment_id'),
                ({'network_type': 'vxlan', 'segment_id': 0}, 'segment_id'),
                ({'network_type': 'vxlan', 'segment_id': 'ten'},
                 'segment_id'),
                ({'network_type': 'vxlan'}, 'segment_id'),
                ({'network_type': 'vxlan', 'segment_id': 7, 'id': 'x'},
                 'id'),
                ({'network_type': 'vxlan', 'segment_id': 7, 'k' * 65: 'v'},
                 'k' * 65)]:
            self.assertRefused(400, field, self.request(
                'POST', '/v1/networks', body))
        self.assertEqual({'networks': []},
                         self.request('GET', '/v1/networks').json)

    def test_a_segment_registered_twice_is_refused_with_409(self):
        self.segment(network_type='vlan', physical_network='physnet1',
                     segment_id=100)
        self.segment(network_type='vxlan', segment_id=100)
        # The same VLAN id on another physical network is another segment.
        self.segment(network_type='vlan', physical_network='physnet2',
                     segment_id=100)
        for body in ({'network_type': 'vlan', 'physical_network': 'physnet1',
                      'segment_id': '100'},
                     {'network_type': 'vxlan', 'segment_id': 100}):
            self.assertRefused(409, 'already registered',
                               self.request('POST', '/v1/networks', body))
        self.assertEqual(3, len(self.request(
            'GET', '/v1/networks').json['networks']))

    def test_members_are_refused_every_segment_call_by_policy(self):
        vlan = self.segment(network_type='vxlan', segment_id=7)
        path = '/v1/networks/' + vlan['id']
        for method, where, body in [('GET', '/v1/networks', None),
                                    ('POST', '/v1/networks', {
                                        'network_type': 'vxlan',
                                        'segment_id': 8}),
                                    ('GET', path, None),
                                    ('PUT', path, {'a': 'b'}),
                                    ('DELETE', path, None)]:
            self.assertRefused(403, 'reservation:networks:', self.request(
                method, where, body, roles=MEMBER))
        self.assertEqual({'network': vlan}, self.request('GET', path).json)

    def test_overlapping_leases_get_different_segments_then_409(self):
        first = self.segment(network_type='vlan', physical_network='physnet1',
                             segment_id=101)
        second = self.segment(network_type='vlan',
                              physical_network='physnet1', segment_id=102)
        a = self.lease(name='a')
        b = self.lease(name='b', start='2027-01-11 10:00',
                       end='2027-01-13 10:00')
        self.assertEqual({first['id'], second['id']},
                         {self.booked(a), self.booked(b)})
        self.assertRefused(409, 'No network segment', self.request(
            'POST', '/v1/leases', network_lease(name='c'), roles=MEMBER))
        # After both: a segment is free again.
        later = self.lease(name='d', start='2027-01-13 10:00',
                           end='2027-01-14 10:00')
        self.assertEqual(first['id'], self.booked(later))
        view = a['reservations'][0]
        self.assertEqual(('network', 'net-a', None), (
            view['resource_type'], view['network_name'], view['network_id']))

    def test_properties_select_the_segment_by_its_keys_and_capabilities(self):
        self.segment(network_type='vlan', physical_network='physnet1',
                     segment_id=101)
        wanted = self.segment(network_type='vxlan', segment_id=9,
                              stitch='true')
        self.segment(network_type='vxlan', segment_id=8)
        lease = self.lease(
            network_properties='["=", "$network_type", "vxlan"]',
            resource_properties=["=", "$stitch", "true"])
        self.assertEqual(wanted['id'], self.booked(lease))
        self.assertRefused(409, 'No network segment', self.request(
            'POST', '/v1/leases', network_lease(
                name='b', network_properties=[">", "$segment_id", 101]),
            roles=MEMBER))

    def test_bad_network_requests_are_refused_naming_the_field(self):
        self.segment(network_type='vxlan', segment_id=9)
        for fields, field in [
                ({'network_properties': '["=", "$x"'}, 'network_properties'),
                ({'resource_properties': ['bogus', '$a', 1]},
                 'resource_properties'),
                ({'network_name': ''}, 'network_name'),
                ({'subnet_cidr': '10.0.0.1/24'}, 'subnet_cidr'),
                ({'subnet_cidr': '10.0.0.0/31'}, 'subnet_cidr'),
                ({'router_external_network': 'public'},
                 'router_external_network'),
                ({'vlan': 3}, 'vlan')]:
            self.assertRefused(400, field, self.request(
                'POST', '/v1/leases', network_lease(**fields),
                roles=MEMBER))
        self.assertEqual([], self.request('GET', '/v1/leases',
                                          roles=MEMBER).json['leases'])

    def test_a_held_segment_cannot_be_deleted_until_its_lease_is(self):
        segment = self.segment(network_type='vxlan', segment_id=9)
        lease = self.lease(subnet_cidr='10.1.0.0/24')
        self.assertEqual(('10.1.0.0/24', None), (
            lease['reservations'][0]['subnet_cidr'],
            lease['reservations'][0]['router_external_network']))
        path = '/v1/networks/' + segment['id']
        self.assertRefused(409, 'held by 1', self.request('DELETE', path))
        self.assertEqual(204, self.request(
            'DELETE', '/v1/leases/' + lease['id'], roles=MEMBER).status_int)
        self.assertEqual(204, self.request('DELETE', path).status_int)

    def test_allocations_show_the_current_and_future_bookings(self):
        first = self.segment(network_type='vxlan', segment_id=9)
        second = self.segment(network_type='vxlan', segment_id=10)
        lease = self.lease()
        reservation_id = lease['reservations'][0]['id']
        booking = {'id': reservation_id, 'lease_id': lease['id'],
                   'start_date': '2027-01-10T10:00:00.000000',
                   'end_date': '2027-01-12T10:00:00.000000'}
        listed = self.request('GET', '/v1/networks/allocations')
        self.assertEqual(sorted([
            {'resource_id': first['id'], 'reservations': [booking]},
            {'resource_id': second['id'], 'reservations': []}],
            key=lambda item: item['resource_id']),
            listed.json['allocations'])
        shown = self.request('GET', '/v1/networks/%s/allocation?lease_id=%s'
                             % (first['id'], lease['id']))
        self.assertEqual({'resource_id': first['id'],
                          'reservations': [booking]},
                         shown.json['allocation'])
        other = self.request('GET', '/v1/networks/allocations'
                             '?reservation_id=nothing')
        self.assertEqual([[], []], [item['reservations'] for item in
                                    other.json['allocations']])
        self.assertRefused(404, 'nothing', self.request(
            'GET', '/v1/networks/nothing/allocation'))
        self.clock.set(test_leases.D(2027, 1, 12, 10, 0))
        after = self.request('GET', '/v1/networks/allocations')
        self.assertEqual([[], []], [item['reservations'] for item in
                                    after.json['allocations']])

    def test_a_lease_moves_on_its_segment_unless_another_holds_it_then(self):
        self.segment(network_type='vxlan', segment_id=9)
        lease = self.lease()
        self.lease(name='b', start='2027-01-13 10:00',
                   end='2027-01-14 10:00')
        path = '/v1/leases/' + lease['id']
        moved = self.request('PUT', path, {'end_date': '2027-01-13 09:00'},
                             roles=MEMBER)
        self.assertEqual(200, moved.status_int, moved.text)
        refused = self.request('PUT', path, {'end_date': '2027-01-13 12:00'},
                               roles=MEMBER)
        self.assertRefused(409, 'extended until 2027-01-13 10:00', refused)
        self.assertRefused(400, 'network_name', self.request(
            'PUT', path, {'reservations': [{
                'id': lease['reservations'][0]['id'],
                'network_name': 'other'}]}, roles=MEMBER))


class NetworkSQLiteTest(_NetworkTests, base.DBTestCase):
    pass


class NetworkPostgreSQLTest(_NetworkTests, base.PostgreSQLTestCase):
    pass


class NetworkMySQLTest(_NetworkTests, base.MySQLTestCase):
    pass


def book(window):
    """One booking of any segment in ``window``; its outcome."""
    return concurrency.book(lambda session, reservation_id: (
        planner.allocate(session, reservation_id, *window,
                         test_planner.busy(), [capabilities.compile(
                             '', 'network_properties',
                             capabilities.NETWORK_SEGMENTS)])))


def overlapping_bookings(connection):
    """Pairs of bookings of the same segment whose windows overlap."""
    return test_planner.overlapping_bookings(
        connection, tables.NETWORK_ALLOCATIONS, 'network_id')


class _ConcurrencyMixin(concurrency.WholeItemsMixin):

    POOL = 3
    book = staticmethod(book)
    overlapping = staticmethod(overlapping_bookings)

    def add_pool(self, session):
        for vni in range(self.POOL):
            store.add_segment(session, {
                'id': str(uuid.uuid4()), 'network_type': 'vxlan',
                'physical_network': None, 'segment_id': vni + 1,
                'created_at': test_planner.T0}, {})


class ConcurrentThreadsTest(_ConcurrencyMixin,
                            concurrency.SQLiteFileTestCase):

    def test_concurrent_threads_never_put_a_segment_in_two_leases(self):
        self.in_threads()


class _ProcessesMixin(_ConcurrencyMixin):

    def test_concurrent_processes_never_put_a_segment_in_two_leases(self):
        self.in_four_processes()


class ConcurrentProcessesPostgreSQLTest(_ProcessesMixin,
                                        base.PostgreSQLTestCase):
    pass


class ConcurrentProcessesMySQLTest(_ProcessesMixin, base.MySQLTestCase):
    pass
