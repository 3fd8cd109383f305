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

"""Schedule proposals and availability of network segments and pools.

Through the lease API, on SQLite, PostgreSQL and MariaDB, with the real
``network`` and ``storage:pool`` plugins and planners and an injected
clock; Neutron is a fake that knows one external network. A proposal
holds its segment or pools until it expires; other leases and proposals
cannot take them (a pool's GB not either); a lease made from one books
exactly what it held; a request that can never fit is refused naming
its field; availability counts the free matching segments and pools.
"""

import datetime
import json
import types
import urllib.parse

import sqlalchemy as sa
import webob

from db import api as db_api
from db import tables
from reservation_ext.api import wsgi
from reservation_ext.clients import compute as compute_client
from reservation_ext.clients import plugin_clients
from reservation_ext import clock as clock_mod
from reservation_ext import dates
from reservation_ext.leases import notifications
from reservation_ext import plugins as plugins_mod
from reservation_ext.store import network_segments as store_segments
from reservation_ext.store import storage_pools as store_pools
from tests import base
from tests import fixtures

NOW = datetime.datetime(2027, 1, 10, 9, 0)
HOUR = datetime.timedelta(hours=1)
MEMBER = 'member,reader'
ADMIN = 'admin,member,reader'
SEGMENT_HOLDS = tables.NETWORK_ALLOCATIONS
POOL_HOLDS = tables.STORAGE_POOL_ALLOCATIONS
PROPOSALS = tables.PROPOSALS
# The GB volume reservations may hold, pools booked then included.
RESERVABLE_GB = 1500
# Pools by name: (their GB as Cinder reported them, extra capabilities).
POOLS = {'storage@hdd#bronze': (None, {}),
         'storage@ssd#gold': (1000, {'tier': 'gold'}),
         'storage@ssd#silver': (400, {'tier': 'silver'})}
BRONZE, GOLD, SILVER = sorted(POOLS)
VIEW_KEYS = {'id', 'start_date', 'end_date', 'expires_at'}


def date(moment):
    return moment.strftime('%Y-%m-%d %H:%M')


def viewed(moment):
    return dates.format_date(moment)


def network(**fields):
    return dict({'resource_type': 'network', 'network_name': 'net1'},
                **fields)


def pools(minimum=1, maximum=1, **fields):
    return dict({'resource_type': 'storage:pool', 'min': minimum,
                 'max': maximum}, **fields)


def named(name):
    return '["=", "$name", "%s"]' % name


class FakeNeutron:
    """Neutron's external networks: only ``public``."""

    @staticmethod
    def find_external_network(name):
        return {'id': 'public-id'} if name == 'public' else None


class _SegmentPoolProposalTests:

    def setUp(self):
        super().setUp()
        self.conf = self.useFixture(fixtures.ReservationConf({
            ('reservation', 'volume_reservable_gb'): RESERVABLE_GB})).conf
        self.clock = clock_mod.ManualClock(NOW)
        clients = plugin_clients.PluginClients(self.conf,
                                               network=FakeNeutron())
        self.app = wsgi.build_app(
            self.conf, self.clock,
            plugins_mod.load_plugins(self.conf, self.clock, clients),
            notifications.get_notifier(self.conf),
            compute_client.NovaClient(self.conf))
        with db_api.writer(self.ctx, self.clock) as session:
            for segment_id, capabilities in ((100, {'stitch': 'true'}),
                                             (101, {})):
                store_segments.add_segment(session, {
                    'id': 'vlan-%d' % segment_id, 'network_type': 'vlan',
                    'physical_network': 'physnet1',
                    'segment_id': segment_id, 'created_at': NOW},
                    capabilities)
            for name, (gigabytes, extra) in POOLS.items():
                store_pools.register_pool(session, {
                    'id': name.split('#')[1], 'name': name,
                    'volume_backend_name': name.split('@')[1][:3],
                    'total_capacity_gb': gigabytes, 'capabilities': '{}',
                    'created_at': NOW}, extra, {})

    def request(self, method, path, body=None, project='p1', roles=MEMBER):
        req = webob.Request.blank(path, method=method, headers={
            'X-User-Id': 'u-' + project, 'X-Project-Id': project,
            'X-Roles': roles})
        # What keystonemiddleware leaves: the caller's token.
        req.environ['keystone.token_auth'] = types.SimpleNamespace(
            user=object())
        if body is not None:
            req.body = json.dumps(body).encode()
            req.content_type = 'application/json'
        return req.get_response(self.app)

    def propose(self, reservation, expected=201, roles=MEMBER, **body):
        body = dict({'reservations': [reservation], 'duration': '1h',
                     'not_after': date(NOW + 48 * HOUR)}, **body)
        response = self.request('POST', '/v1/leases/proposals', body,
                                roles=roles)
        self.assertEqual(expected, response.status_int, response.text)
        return response.json.get('proposals', response.json)

    def lease(self, reservation, start=NOW, end=NOW + HOUR, name='other',
              project='p2', expected=201):
        response = self.request('POST', '/v1/leases', {
            'name': name, 'start_date': date(start), 'end_date': date(end),
            'reservations': [reservation]}, project=project)
        self.assertEqual(expected, response.status_int, response.text)
        return response.json.get('lease', response.json)

    def create(self, proposal_id, expected=201, project='p1'):
        response = self.request('POST', '/v1/leases', {
            'name': 'from-proposal', 'proposal_id': proposal_id},
            project=project)
        self.assertEqual(expected, response.status_int, response.text)
        return response.json.get('lease', response.json)

    def hold_gb(self, size_gb, hours=1):
        """Have another project hold ``size_gb`` GB from now, or fail to.

        A volume proposal, as volume reservations are made through Cinder
        only. Return whether it found room now.
        """
        response = self.request('POST', '/v1/leases/proposals', {
            'reservations': [{'resource_type': 'virtual:volume',
                              'size_gb': size_gb}],
            'duration': '%dh' % hours, 'not_after': date(self.clock.now()),
            'count': 1}, project='p2')
        self.assertEqual(201, response.status_int, response.text)
        return bool(response.json['proposals'])

    def rows(self, table, **owner):
        """The items an owner (``proposal_id=``, ``reservation_id=``) has."""
        (column, value), = owner.items()
        item = table.c.network_id if table is SEGMENT_HOLDS \
            else table.c.pool_id
        with self.engine.connect() as conn:
            return conn.execute(sa.select(item).where(
                table.c[column] == value).order_by(item)).scalars().all()

    def count(self, table, *where):
        with self.engine.connect() as conn:
            return conn.scalar(sa.select(sa.func.count()).select_from(
                table).where(*where))

    def windows(self, proposals):
        return [(p['start_date'], p['end_date']) for p in proposals]

    def hours(self, *starts):
        return [(viewed(NOW + k * HOUR), viewed(NOW + (k + 1) * HOUR))
                for k in starts]

    # Network segments.

    def test_segment_proposals_hold_one_segment_each(self):
        proposals = self.propose(network(), count=3, roles=ADMIN)
        self.assertEqual(self.hours(0, 1, 2), self.windows(proposals))
        # Nothing says which segment, not even to an admin.
        self.assertEqual([VIEW_KEYS] * 3, [set(p) for p in proposals])
        for proposal in proposals:
            self.assertEqual(['vlan-100'], self.rows(
                SEGMENT_HOLDS, proposal_id=proposal['id']))
        self.assertEqual(3, self.count(
            SEGMENT_HOLDS, SEGMENT_HOLDS.c.expires_at ==
            NOW + datetime.timedelta(seconds=300)))

    def test_segment_holds_keep_other_leases_and_proposals_out(self):
        first = network(network_properties='["=", "$segment_id", "100"]')
        self.propose(first, count=1)
        self.lease(first, expected=409)
        lease = self.lease(network(), name='rest')
        self.assertEqual(['vlan-101'], self.rows(
            SEGMENT_HOLDS, reservation_id=lease['reservations'][0]['id']))
        # Both segments are taken in the first hour.
        (later,) = self.propose(network(), count=1)
        self.assertEqual(viewed(NOW + HOUR), later['start_date'])
        # Nor can a lease on the held segment move into its window.
        moved = self.lease(first, start=NOW + 3 * HOUR, end=NOW + 4 * HOUR,
                           name='moved')
        response = self.request('PUT', '/v1/leases/' + moved['id'], {
            'start_date': date(NOW), 'end_date': date(NOW + HOUR)},
            project='p2')
        self.assertEqual(409, response.status_int, response.text)

    def test_a_window_where_segments_are_booked_is_skipped(self):
        for name in ('a', 'b'):
            self.lease(network(), end=NOW + 2 * HOUR, name=name)
        (proposal,) = self.propose(network(), count=1)
        self.assertEqual(viewed(NOW + 2 * HOUR), proposal['start_date'])
        self.conf.set_override('cleaning_time', 30, group='reservation')
        (proposal,) = self.propose(network(), count=1)
        self.assertEqual(viewed(NOW + 2.5 * HOUR), proposal['start_date'])

    def test_a_lease_from_a_segment_proposal_books_the_held_segment(self):
        self.lease(network(), start=NOW + HOUR, end=NOW + 2 * HOUR)
        proposals = self.propose(network(), count=3)
        self.assertEqual(
            [['vlan-100'], ['vlan-101'], ['vlan-100']],
            [self.rows(SEGMENT_HOLDS, proposal_id=p['id'])
             for p in proposals])
        second = proposals[1]
        lease = self.create(second['id'])
        self.assertEqual((second['start_date'], second['end_date']),
                         (lease['start_date'], lease['end_date']))
        (reservation,) = lease['reservations']
        self.assertEqual(('network', 'net1'), (
            reservation['resource_type'], reservation['network_name']))
        self.assertEqual(['vlan-101'], self.rows(
            SEGMENT_HOLDS, reservation_id=reservation['id']))
        # Every proposal of the request is gone, and its holds.
        self.assertEqual(0, self.count(PROPOSALS))
        self.assertEqual(0, self.count(
            SEGMENT_HOLDS, SEGMENT_HOLDS.c.proposal_id.is_not(None)))
        self.create(proposals[0]['id'], expected=404)

    def test_another_project_cannot_take_a_segment_proposal(self):
        (proposal,) = self.propose(network(), count=1)
        self.create(proposal['id'], project='p2', expected=404)
        self.assertEqual(['vlan-100'], self.rows(
            SEGMENT_HOLDS, proposal_id=proposal['id']))

    def test_an_expired_segment_proposal_holds_nothing(self):
        first = network(network_properties='["=", "$segment_id", "100"]')
        (proposal,) = self.propose(first, count=1)
        self.clock.advance(seconds=300)
        error = self.create(proposal['id'], expected=409)
        self.assertIn('expired', error['error_message'])
        # No sweep ran: the expired hold is still there, and ignored.
        self.lease(first, start=NOW + HOUR / 6)
        self.assertEqual(1, self.count(
            SEGMENT_HOLDS, SEGMENT_HOLDS.c.proposal_id.is_not(None)))
        # The next proposals request deletes it.
        self.propose(network(), count=1)
        self.assertEqual(0, self.count(
            SEGMENT_HOLDS, SEGMENT_HOLDS.c.proposal_id == proposal['id']))

    def test_nothing_fits_before_not_after(self):
        for name in ('a', 'b'):
            self.lease(network(), end=NOW + 100 * HOUR, name=name)
        self.assertEqual([], self.propose(network()))
        self.assertEqual(0, self.count(PROPOSALS))

    # Storage pools.

    def test_pool_proposals_hold_the_pools_a_booking_would_take(self):
        proposals = self.propose(pools(1, 2), count=2, roles=ADMIN)
        self.assertEqual(self.hours(0, 1), self.windows(proposals))
        self.assertEqual([VIEW_KEYS] * 2, [set(p) for p in proposals])
        for proposal in proposals:
            self.assertEqual(['bronze', 'gold'], self.rows(
                POOL_HOLDS, proposal_id=proposal['id']))
        self.lease(pools(2, 2), expected=409)
        # Gold's 1000 GB are held too: 500 are left for volumes.
        self.assertFalse(self.hold_gb(501))
        self.assertTrue(self.hold_gb(100))
        lease = self.lease(pools(1, 1), name='rest')
        self.assertEqual([SILVER], lease['reservations'][0]['pools'])

    def test_a_window_where_volumes_hold_the_pools_gigabytes_is_skipped(
            self):
        self.assertTrue(self.hold_gb(1000, hours=2))
        # Gold's 1000 GB do not fit beside them; silver's 400 do.
        gold = pools(resource_properties='["=", "$tier", "gold"]')
        (proposal,) = self.propose(gold, count=1)
        self.assertEqual(viewed(NOW + 2 * HOUR), proposal['start_date'])
        (proposal,) = self.propose(pools(pool_properties=named(SILVER)),
                                   count=1)
        self.assertEqual(viewed(NOW), proposal['start_date'])

    def test_a_lease_from_a_pool_proposal_books_the_held_pools(self):
        self.lease(pools(pool_properties=named(BRONZE)), start=NOW + HOUR,
                   end=NOW + 2 * HOUR)
        proposals = self.propose(pools(1, 2, on_end='delete_volumes'),
                                 count=2)
        self.assertEqual([['bronze', 'gold'], ['gold', 'silver']], [
            self.rows(POOL_HOLDS, proposal_id=p['id']) for p in proposals])
        lease = self.create(proposals[1]['id'])
        self.assertEqual(self.hours(1), [(lease['start_date'],
                                          lease['end_date'])])
        (reservation,) = lease['reservations']
        self.assertEqual(([GOLD, SILVER], 'delete_volumes'),
                         (reservation['pools'], reservation['on_end']))
        self.assertEqual(['gold', 'silver'], self.rows(
            POOL_HOLDS, reservation_id=reservation['id']))
        self.assertEqual(0, self.count(PROPOSALS))
        self.assertEqual(0, self.count(
            POOL_HOLDS, POOL_HOLDS.c.proposal_id.is_not(None)))
        # The lease takes their 1400 GB as the holds did: 100 are left.
        self.clock.advance(seconds=3600)
        self.assertFalse(self.hold_gb(101))
        self.assertTrue(self.hold_gb(100))

    def test_an_expired_pool_proposal_holds_nothing(self):
        (proposal,) = self.propose(pools(3, 3), count=1)
        self.lease(pools(), expected=409)
        self.clock.advance(seconds=300)
        self.create(proposal['id'], expected=409)
        self.lease(pools(3, 3), start=NOW + HOUR / 6)

    def test_a_segment_and_pools_are_held_and_booked_together(self):
        for name in ('a', 'b'):
            self.lease(network(), end=NOW + HOUR, name=name)
        self.lease(pools(pool_properties=named(BRONZE)), end=NOW + 2 * HOUR,
                   name='c')
        (proposal,) = self.propose(pools(), count=1, reservations=[
            network(), pools()])
        # A segment is free after an hour; bronze only after two.
        self.assertEqual(viewed(NOW + HOUR), proposal['start_date'])
        self.assertEqual((['vlan-100'], ['gold']), (
            self.rows(SEGMENT_HOLDS, proposal_id=proposal['id']),
            self.rows(POOL_HOLDS, proposal_id=proposal['id'])))
        lease = self.create(proposal['id'])
        by_type = {reservation['resource_type']: reservation
                   for reservation in lease['reservations']}
        self.assertEqual((['vlan-100'], [GOLD]), (
            self.rows(SEGMENT_HOLDS, reservation_id=by_type['network']['id']),
            by_type['storage:pool']['pools']))

    # Bad requests.

    def test_requests_that_never_fit_are_refused_naming_the_field(self):
        never = ': no window can ever fit it'
        cases = [
            ({'resource_type': 'network'}, 'reservations[0].network_name'),
            (network(network_properties='["=", "$segment_id"'),
             'reservations[0].network_properties: '),
            (network(resource_properties='["=", "$stitch", "false"]'),
             'reservations[0].resource_properties: no reservable network '
             'segment matches the request' + never),
            (network(network_properties='["=", "$segment_id", "7"]'),
             'reservations[0].network_properties: no reservable network '
             'segment matches the request' + never),
            (network(subnet_cidr='10.0.0.0/24',
                     router_external_network='private'),
             'reservations[0].router_external_network: Neutron has no '
             'external network private'),
            (pools(4, 4), 'reservations[0].min: 3 reservable storage '
             'pool(s) match the request, 4 wanted (min)' + never),
            (pools(pool_properties=named('nowhere')),
             'reservations[0].pool_properties: 0 reservable storage '
             'pool(s) match the request, 1 wanted (min)' + never),
            (pools(2, 3, resource_properties='["=", "$tier", "gold"]'),
             'reservations[0].resource_properties: 1 reservable storage '
             'pool(s) match the request, 2 wanted (min)' + never),
            (pools(2, 1), 'reservations[0].max: must be at least min'),
            (pools(on_end='keep'), 'reservations[0].on_end: '),
            (pools(amount=1), 'reservations[0].amount: '),
            ({'resource_type': 'storage:pool'}, 'reservations[0].m'),
        ]
        for reservation, message in cases:
            with self.subTest(message=message):
                error = self.propose(reservation, expected=400)
                self.assertIn(message, error['error_message'])
        self.assertEqual(0, self.count(PROPOSALS))
        self.assertEqual(0, self.count(SEGMENT_HOLDS))
        self.assertEqual(0, self.count(POOL_HOLDS))

    # Availability.

    def availability(self, resource_type, expected=200, roles=MEMBER,
                     **query):
        query = dict({'resource_type': resource_type, 'start': date(NOW),
                      'end': date(NOW + 3 * HOUR)}, **query)
        response = self.request('GET', '/v1/availability?' +
                                urllib.parse.urlencode(query), roles=roles)
        self.assertEqual(expected, response.status_int, response.text)
        return response.json.get('availability', response.json)

    def steps(self, shown):
        return [(step['start'], step['end'], step['amount'])
                for step in shown['free']]

    def test_availability_counts_free_segments(self):
        self.lease(network(), start=NOW + HOUR, end=NOW + 2 * HOUR)
        shown = self.availability('network', roles=ADMIN)
        self.assertEqual([(viewed(NOW), viewed(NOW + HOUR), 2),
                          (viewed(NOW + HOUR), viewed(NOW + 2 * HOUR), 1),
                          (viewed(NOW + 2 * HOUR), viewed(NOW + 3 * HOUR),
                           2)], self.steps(shown))
        # Counts only: not which segment is free, not even to an admin.
        self.assertNotIn('hosts', shown)
        stitched = self.availability(
            'network', resource_properties='["=", "$stitch", "true"]')
        self.assertEqual([1, 0, 1],
                         [amount for _s, _e, amount in self.steps(stitched)])
        # A live proposal's hold counts as a booking: vlan-100 in the
        # first hour, the lease's in the second.
        self.propose(network(), count=1)
        self.assertEqual([1, 2], [amount for _s, _e, amount in self.steps(
            self.availability('network'))])

    def test_availability_counts_free_pools(self):
        self.lease(pools(pool_properties=named(GOLD)), end=NOW + HOUR)
        self.assertEqual(
            [(viewed(NOW), viewed(NOW + HOUR), 2),
             (viewed(NOW + HOUR), viewed(NOW + 3 * HOUR), 3)],
            self.steps(self.availability('storage:pool')))
        tiered = self.availability('storage:pool', resource_properties=(
            '["in", "$tier", "gold", "silver"]'))
        self.assertEqual([1, 2], [amount for _s, _e, amount
                                  in self.steps(tiered)])

    def test_availability_refuses_bad_queries(self):
        for resource_type, query, field in (
                ('network', {'network_name': 'x'}, 'network_name'),
                ('network', {'network_properties': '["="'},
                 'network_properties'),
                ('storage:pool', {'min': '2'}, 'min'),
                ('storage:pool', {'pool_properties': '["=", "$name"'},
                 'pool_properties')):
            with self.subTest(query=query):
                error = self.availability(resource_type, expected=400,
                                          **query)
                self.assertTrue(error['error_message'].startswith(field),
                                error['error_message'])


class SegmentPoolProposalSQLiteTest(_SegmentPoolProposalTests,
                                    base.DBTestCase):
    """On SQLite."""


class SegmentPoolProposalPostgreSQLTest(_SegmentPoolProposalTests,
                                        base.PostgreSQLTestCase):
    """On PostgreSQL."""


class SegmentPoolProposalMySQLTest(_SegmentPoolProposalTests,
                                   base.MySQLTestCase):
    """On MariaDB."""
