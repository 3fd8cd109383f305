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

"""Schedule proposals, their holds and availability, through the lease API.

On SQLite, PostgreSQL and MariaDB, with the real plugins and an injected clock:
proposals hold what they offer until they expire, a lease made from one
gets exactly its window and hosts, and availability counts what is free.
"""

import datetime
import json

import sqlalchemy as sa
from testtools import matchers
import webob

from db import api as db_api
from db import models
from reservation_ext.api import wsgi
from reservation_ext.clients import compute as compute_client
from reservation_ext import clock as clock_mod
from reservation_ext import dates
from reservation_ext.leases import notifications
from reservation_ext import plugins as plugins_mod
from reservation_ext.store import hosts as store_hosts
from tests import base
from tests import fixtures

NOW = datetime.datetime(2027, 1, 10, 9, 0)
HOUR = datetime.timedelta(hours=1)
MEMBER = 'member,reader'
ADMIN = 'admin,member,reader'
GPU = '["=", "$gpu", "true"]'
PROPOSALS = models.Proposal.__table__
ALLOCATIONS = models.HostAllocation.__table__


def date(moment):
    return moment.strftime('%Y-%m-%d %H:%M')


def viewed(moment):
    return dates.format_date(moment)


def hosts_request(count=2, query=GPU, **extra):
    return dict({'resource_type': 'physical:host', 'min': count,
                 'max': count, 'resource_properties': query}, **extra)


class _ProposalTests:

    def setUp(self):
        super().setUp()
        conf = self.useFixture(fixtures.ReservationConf({
            ('reservation', 'volume_reservable_gb'): 100})).conf
        self.conf = conf
        self.clock = clock_mod.ManualClock(NOW)
        self.app = wsgi.build_app(
            conf, self.clock, plugins_mod.load_plugins(conf, self.clock),
            notifications.get_notifier(conf),
            compute_client.NovaClient(conf))
        with db_api.writer(self.ctx, self.clock) as session:
            # Hosts 0, 2, 4 have a gpu; every host is free.
            self.hosts = [store_hosts.add_host(
                session, {'hypervisor_hostname': 'host%d' % i,
                          'service_name': 'host%d' % i, 'vcpus': 8,
                          'memory_mb': 8192, 'local_gb': 100},
                {'gpu': 'true'} if i % 2 == 0 else {}) for i in range(6)]

    def request(self, method, path, body=None, project='p1', roles=MEMBER):
        req = webob.Request.blank(path, method=method, headers={
            'X-User-Id': 'u-' + project, 'X-Project-Id': project,
            'X-Roles': roles})
        if body is not None:
            req.body = json.dumps(body).encode()
            req.content_type = 'application/json'
        return req.get_response(self.app)

    def propose(self, expected=201, **body):
        body = dict({'reservations': [hosts_request()], 'duration': '1h',
                     'not_after': date(NOW + 48 * HOUR)}, **body)
        response = self.request('POST', '/v1/leases/proposals', body,
                                **{key: body.pop(key) for key in
                                   ('project', 'roles') if key in body})
        self.assertEqual(expected, response.status_int, response.text)
        return response.json.get('proposals', response.json)

    def create(self, proposal_id, name='from-proposal', project='p1',
               expected=201):
        response = self.request('POST', '/v1/leases', {
            'name': name, 'proposal_id': proposal_id}, project=project)
        self.assertEqual(expected, response.status_int, response.text)
        return response.json.get('lease', response.json)

    def lease(self, start, end, count=3, name='plain', project='p2',
              expected=201):
        response = self.request('POST', '/v1/leases', {
            'name': name, 'start_date': date(start), 'end_date': date(end),
            'reservations': [hosts_request(count)]}, project=project)
        self.assertEqual(expected, response.status_int, response.text)
        return response.json

    def holds(self):
        with self.engine.connect() as conn:
            return conn.execute(sa.select(
                ALLOCATIONS.c.proposal_id, ALLOCATIONS.c.host_id,
                ALLOCATIONS.c.start_date).where(
                    ALLOCATIONS.c.proposal_id.isnot(None))).all()

    def proposal_count(self):
        with self.engine.connect() as conn:
            return conn.scalar(sa.select(sa.func.count()).select_from(
                PROPOSALS))

    def test_proposals_are_distinct_windows_in_order_and_held(self):
        proposals = self.propose(count=3)
        self.assertEqual(
            [(viewed(NOW + k * HOUR), viewed(NOW + (k + 1) * HOUR))
             for k in range(3)],
            [(p['start_date'], p['end_date']) for p in proposals])
        expires = viewed(NOW + datetime.timedelta(seconds=300))
        self.assertEqual({expires}, {p['expires_at'] for p in proposals})
        self.assertNotIn('hosts', proposals[0])
        self.assertEqual(6, len(self.holds()))
        # Two of the three gpu hosts are held in the first hour.
        self.lease(NOW, NOW + HOUR, count=2, expected=409)
        self.lease(NOW, NOW + HOUR, count=1)

    def test_admins_see_the_hosts_held(self):
        proposals = self.propose(count=2, roles=ADMIN)
        self.assertEqual([['host0', 'host2'], ['host0', 'host2']],
                         [p['hosts'] for p in proposals])

    def test_a_lease_from_a_proposal_is_exactly_the_proposal(self):
        proposals = self.propose(count=3, roles=ADMIN)
        third = proposals[2]
        lease = self.create(third['id'])
        self.assertEqual((third['start_date'], third['end_date']),
                         (lease['start_date'], lease['end_date']))
        (reservation,) = lease['reservations']
        self.assertEqual({'reservation': reservation['id']},
                         reservation['scheduler_hints'])
        with self.engine.connect() as conn:
            booked = conn.execute(sa.select(ALLOCATIONS.c.host_id).where(
                ALLOCATIONS.c.reservation_id == reservation['id'])
                .order_by(ALLOCATIONS.c.host_id)).scalars().all()
        self.assertEqual([self.hosts[0], self.hosts[2]], booked)
        # The other proposals of the request are gone, and their holds.
        self.assertEqual([], self.holds())
        self.assertEqual(0, self.proposal_count())
        self.create(proposals[0]['id'], name='again', expected=404)

    def test_another_project_cannot_take_a_proposal(self):
        (proposal,) = self.propose(count=1)
        error = self.create(proposal['id'], project='p2', expected=404)
        self.assertIn('Proposal %s could not be found' % proposal['id'],
                      error['error_message'])
        self.assertEqual(2, len(self.holds()))

    def test_held_capacity_is_free_again_when_the_proposal_expires(self):
        (proposal,) = self.propose(count=1)
        self.lease(NOW, NOW + HOUR, count=2, expected=409)
        self.clock.advance(seconds=300)
        error = self.create(proposal['id'], expected=409)
        self.assertIn('expired', error['error_message'])
        # No sweep ran: the expired hold is still there, and ignored.
        self.assertEqual(2, len(self.holds()))
        self.lease(NOW + 10 * datetime.timedelta(seconds=60),
                   NOW + HOUR, count=3)

    def test_a_proposal_from_a_busy_pool_starts_when_hosts_are_freed(self):
        self.lease(NOW, NOW + 5 * HOUR, count=2)
        (proposal,) = self.propose(count=1, roles=ADMIN)
        self.assertEqual((viewed(NOW + 5 * HOUR), ['host0', 'host2']),
                         (proposal['start_date'], proposal['hosts']))

    def test_cleaning_time_separates_proposals_from_bookings(self):
        self.conf.set_override('cleaning_time', 30, group='reservation')
        self.lease(NOW, NOW + 5 * HOUR, count=3)
        (proposal,) = self.propose(count=1)
        self.assertEqual(viewed(NOW + 5 * HOUR + HOUR / 2),
                         proposal['start_date'])

    def test_named_hosts(self):
        proposals = self.propose(count=2, roles=ADMIN, reservations=[{
            'resource_type': 'physical:host', 'hosts': ['host1', 'host3']}])
        self.assertEqual([['host1', 'host3']] * 2,
                         [p['hosts'] for p in proposals])

    def test_nothing_fits_before_not_after(self):
        self.lease(NOW, NOW + 100 * HOUR, count=3)
        self.assertEqual([], self.propose())
        self.assertEqual(0, self.proposal_count())

    def test_properties_that_match_no_host_are_refused(self):
        error = self.propose(expected=400, reservations=[
            hosts_request(query='["=", "$gpu", "maybe"]')])
        self.assertEqual(
            'reservations[0].resource_properties: 0 reservable host(s) '
            'match the request, 2 wanted: no window can ever fit it',
            error['error_message'])
        error = self.lease(NOW, NOW + HOUR, count=4, expected=400)
        self.assertEqual(
            'reservations[0].resource_properties: 3 reservable host(s) '
            'match the request, 4 wanted: no window can ever fit it',
            error['error_message'])

    def test_bad_requests_name_the_field_and_hold_nothing(self):
        cases = [
            ({'duration': '0'}, 'duration: must be longer than 0'),
            ({'duration': -5}, 'duration: must be longer than 0'),
            ({'not_before': date(NOW + 2 * HOUR),
              'not_after': date(NOW + HOUR)},
             'not_after: must not be before not_before'),
            ({'count': 0}, 'count: must be an integer of at least 1'),
            ({'count': 1000}, 'count: must be at most 20'),
            ({'colour': 'red'}, 'colour: unknown key'),
            ({'reservations': []},
             'reservations: must have at least 1 item(s)'),
            ({'reservations': [hosts_request(flavour='big')]},
             'reservations[0].flavour: unknown key'),
            ({'reservations': [hosts_request(), hosts_request()]},
             'reservations[1].resource_type: a proposals request takes one '
             'physical:host reservation, and reservations[0] has one '
             'already'),
            ({'reservations': [hosts_request(), {
                'resource_type': 'virtual:instance', 'vcpus': 1,
                'memory_mb': 512, 'disk_gb': 1}]},
             'reservations[1].resource_type: a proposals request takes one '
             'of flavor:instance, physical:host, virtual:instance: a '
             'physical:host and a virtual:instance reservation share the '
             'same capacity'),
            ({'reservations': [{'resource_type': 'virtual:volume',
                                'size_gb': 1}, {
                'resource_type': 'storage:pool', 'min': 1, 'max': 1}]},
             'reservations[1].resource_type: a proposals request takes one '
             'of storage:pool, virtual:volume: a virtual:volume and a '
             'storage:pool reservation share the same capacity'),
            ({'not_before': date(NOW - 2 * HOUR)},
             'not_before: Start date must be later than current date'),
        ]
        for body, message in cases:
            with self.subTest(body=body):
                error = self.propose(expected=400, **body)
                self.assertEqual(message, error['error_message'])
        self.assertEqual(0, self.proposal_count())
        self.assertEqual([], self.holds())

    def test_a_create_from_a_proposal_takes_no_window_of_its_own(self):
        (proposal,) = self.propose(count=1)
        response = self.request('POST', '/v1/leases', {
            'name': 'x', 'proposal_id': proposal['id'],
            'start_date': date(NOW)})
        self.assertEqual(400, response.status_int)
        self.assertEqual(
            'start_date: cannot be combined with proposal_id: the proposal '
            'sets the window and the reservations',
            response.json['error_message'])

    def test_volume_proposals_hold_gigabytes(self):
        volume = {'resource_type': 'virtual:volume', 'size_gb': 60}
        proposals = self.propose(count=2, reservations=[volume])
        self.assertEqual([viewed(NOW), viewed(NOW + HOUR)],
                         [p['start_date'] for p in proposals])
        availability = self.availability('virtual:volume', NOW,
                                         NOW + 3 * HOUR)
        self.assertEqual([(viewed(NOW), viewed(NOW + 2 * HOUR), 40),
                          (viewed(NOW + 2 * HOUR), viewed(NOW + 3 * HOUR),
                           100)],
                         [(s['start'], s['end'], s['amount'])
                          for s in availability['free']])
        error = self.propose(expected=400, reservations=[
            dict(volume, size_gb=101)])
        self.assertIn('reservations[0].size_gb: is more than the 100 GB',
                      error['error_message'])

    def test_instance_proposals_hold_a_slice(self):
        flavor = {'resource_type': 'virtual:instance', 'vcpus': 8,
                  'memory_mb': 1024, 'disk_gb': 10}
        self.lease(NOW, NOW + HOUR, count=3)
        proposals = self.propose(count=4, reservations=[flavor],
                                 roles=ADMIN)
        # One window each hour, on the lowest host free then.
        self.assertEqual(
            [(viewed(NOW + k * HOUR), [host])
             for k, host in enumerate(['host1', 'host0', 'host0',
                                       'host0'])],
            [(p['start_date'], p['hosts']) for p in proposals])

    def availability(self, resource_type, start, end, roles=MEMBER,
                     expected=200, **query):
        query = dict({'resource_type': resource_type, 'start': date(start),
                      'end': date(end)}, **query)
        response = self.request(
            'GET', '/v1/availability?' + '&'.join(
                '%s=%s' % item for item in query.items()), roles=roles)
        self.assertEqual(expected, response.status_int, response.text)
        return response.json.get('availability', response.json)

    def test_availability_counts_free_hosts_over_time(self):
        self.lease(NOW + HOUR, NOW + 3 * HOUR, count=2, project='p2')
        availability = self.availability(
            'physical:host', NOW, NOW + 4 * HOUR,
            resource_properties=GPU)
        self.assertEqual(
            {'resource_type': 'physical:host', 'start': viewed(NOW),
             'end': viewed(NOW + 4 * HOUR), 'unit': 'hosts',
             'free': [
                 {'start': viewed(NOW), 'end': viewed(NOW + HOUR),
                  'amount': 3},
                 {'start': viewed(NOW + HOUR),
                  'end': viewed(NOW + 3 * HOUR), 'amount': 1},
                 {'start': viewed(NOW + 3 * HOUR),
                  'end': viewed(NOW + 4 * HOUR), 'amount': 3}]},
            availability)
        admin = self.availability('physical:host', NOW, NOW + 4 * HOUR,
                                  roles=ADMIN, resource_properties=GPU)
        self.assertEqual(
            [{'host': 'host0', 'free': [
                {'start': viewed(NOW), 'end': viewed(NOW + HOUR)},
                {'start': viewed(NOW + 3 * HOUR),
                 'end': viewed(NOW + 4 * HOUR)}]},
             {'host': 'host2', 'free': [
                 {'start': viewed(NOW), 'end': viewed(NOW + HOUR)},
                 {'start': viewed(NOW + 3 * HOUR),
                  'end': viewed(NOW + 4 * HOUR)}]},
             {'host': 'host4', 'free': [
                 {'start': viewed(NOW), 'end': viewed(NOW + 4 * HOUR)}]}],
            admin['hosts'])

    def test_availability_refuses_bad_queries(self):
        cases = [
            ({}, 'resource_type: Missing parameter resource_type'),
            ({'resource_type': 'physical:host', 'end': 'soon'},
             'end: soon is an invalid date. Required format: %Y-%m-%d '
             '%H:%M; "now" and ISO 8601 are also accepted'),
            ({'resource_type': 'physical:host', 'start': date(NOW + HOUR),
              'end': date(NOW)},
             'end: End date must be later than start date.'),
            ({'resource_type': 'physical:host', 'end': date(NOW + HOUR),
              'colour': 'red'}, 'colour: unknown key'),
            ({'resource_type': 'physical:fridge', 'end': date(NOW + HOUR)},
             "resource_type: unknown resource type 'physical:fridge', "
             "expected one of: flavor:instance, heat:stack, network, "
             "physical:host, "
             "storage:pool, virtual:floatingip, "),
            ({'resource_type': 'virtual:instance', 'end': date(NOW + HOUR),
              'vcpus': 'two', 'memory_mb': 1, 'disk_gb': 1},
             'vcpus: must be an integer'),
        ]
        for query, message in cases:
            with self.subTest(query=query):
                response = self.request('GET', '/v1/availability?' + '&'.join(
                    '%s=%s' % item for item in query.items()))
                self.assertEqual(400, response.status_int, response.text)
                self.assertThat(response.json['error_message'],
                                matchers.StartsWith(message))


class ProposalSQLiteTest(_ProposalTests, base.DBTestCase):
    pass


class ProposalPostgreSQLTest(_ProposalTests, base.PostgreSQLTestCase):
    pass


class ProposalMySQLTest(_ProposalTests, base.MySQLTestCase):
    pass
