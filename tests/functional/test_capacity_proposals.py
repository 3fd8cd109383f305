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

"""Schedule proposals and availability of capacity reservations, by API.

On SQLite, PostgreSQL and MariaDB, with the real plugins, planner and an
injected clock; Nova's flavors and server groups are a fake that answers
as Nova would. "When can I have 8 x m1.large with affinity for 3 days?":
a proposal holds the servers' slices where the planner would place them
by affinity (all on one host, each on its own host, or packed); other
leases cannot take them; a lease made from one books exactly what it
held; a request that never fits is a 400 naming the field; availability
counts the servers of the size that one reservation of the affinity
could have. ``openstack reservation lease propose`` and ``availability
show`` run against the same application.
"""

import collections
import datetime
import io
import json
import types

from blazarclient import client as blazar_client
from keystoneauth1 import session as ks_session
from keystoneauth1 import token_endpoint
import sqlalchemy as sa
import webob
from wsgi_intercept import interceptor

from db import api as db_api
from db import tables
from reservation_ext.api import wsgi
from reservation_ext.clients import compute as compute_client
from reservation_ext.clients import plugin_clients
from reservation_ext import clock as clock_mod
from reservation_ext import dates
from reservation_ext.leases import notifications
from reservation_ext.osc import v1 as osc
from reservation_ext import plugins as plugins_mod
from reservation_ext.store import hosts as store_hosts
from tests import base
from tests import fixtures

NOW = datetime.datetime(2027, 1, 10, 9, 0)
HOUR = datetime.timedelta(hours=1)
DAYS = 3 * 24 * HOUR
MEMBER = 'member,reader'
ADMIN = 'admin,member,reader'
ALLOCATIONS = tables.ALLOCATIONS
PROPOSALS = tables.PROPOSALS
# Every host has 8 vCPUs (32 at Nova's ratio of 4), 64 GB of RAM and
# 800 GB besides the memory Nova keeps for the host: eight larges.
RESERVED_MB = 512
LARGE = (4, 8192, 80)
FLAVORS = {'m1.large': LARGE, 'm1.small': (1, 2048, 20),
           'secret': (1, 1024, 10)}
# A private flavor of project p2.
PRIVATE = {'secret': ['p2']}
NEVER = 'no window can ever fit it'


def date(moment):
    """A date as a request writes it."""
    return moment.strftime('%Y-%m-%d %H:%M')


def viewed(moment):
    """A date as the API shows it."""
    return dates.format_date(moment)


def large(amount, affinity, **fields):
    """A flavor:instance request of ``amount`` m1.large."""
    return dict({'resource_type': 'flavor:instance', 'flavor_id': 'm1.large',
                 'amount': amount, 'affinity': affinity}, **fields)


def sized(amount, affinity, **fields):
    """A virtual:instance request of ``amount`` servers of m1.large's size."""
    return dict({'resource_type': 'virtual:instance', 'vcpus': LARGE[0],
                 'memory_mb': LARGE[1], 'disk_gb': LARGE[2],
                 'amount': amount, 'affinity': affinity,
                 'resource_properties': ''}, **fields)


class FakeNova:
    """Nova's flavors and server groups, answered from memory."""

    def __init__(self):
        """Nova's flavors by name; nothing made yet."""
        self.flavors = dict(FLAVORS)
        self.made, self.groups = {}, {}

    def flavor(self, flavor_id):
        """Nova's view of a flavor (made or given), or None."""
        if flavor_id in self.made:
            return self.made[flavor_id]
        if flavor_id not in self.flavors:
            return None
        vcpus, ram, disk = self.flavors[flavor_id]
        return {'id': flavor_id, 'name': flavor_id, 'vcpus': vcpus,
                'ram': ram, 'disk': disk, 'OS-FLV-EXT-DATA:ephemeral': 0,
                'swap': '', 'extra_specs': {},
                'os-flavor-access:is_public': flavor_id not in PRIVATE}

    def flavor_projects(self, flavor_id):
        """The projects a private flavor is given to."""
        return PRIVATE.get(flavor_id, [])

    def ensure_private_flavor(self, flavor, extra_specs, projects):
        """Make a reservation's flavor."""
        self.made[flavor['id']] = dict(flavor, extra_specs=extra_specs)

    def delete_flavor(self, flavor_id):
        """Delete a reservation's flavor, if made."""
        self.made.pop(flavor_id, None)

    def ensure_server_group(self, name, policy, auth=None):
        """Make a reservation's server group; return its id."""
        self.groups[name] = policy
        # A UUID, as Nova's: the reservation's, of the group's name.
        return name[len('reservation-'):]

    def delete_server_group(self, group_id):
        """Delete a reservation's server group, if made."""
        self.groups.pop('reservation-' + group_id, None)


class _CapacityProposalTests:
    """The tests, on each database."""

    def setUp(self):
        """The lease API over three hosts that hold eight larges each."""
        super().setUp()
        self.conf = self.useFixture(fixtures.ReservationConf()).conf
        self.clock = clock_mod.ManualClock(NOW)
        self.nova = FakeNova()
        clients = plugin_clients.PluginClients(self.conf, nova=self.nova)
        self.app = wsgi.build_app(
            self.conf, self.clock,
            plugins_mod.load_plugins(self.conf, self.clock, clients),
            notifications.get_notifier(self.conf),
            compute_client.NovaClient(self.conf))
        with db_api.writer(self.ctx, self.clock) as session:
            self.hosts = [
                store_hosts.add_host(session, {
                    'hypervisor_hostname': 'host%d' % i,
                    'service_name': 'host%d' % i, 'vcpus': 8,
                    'memory_mb': 65536 + RESERVED_MB, 'local_gb': 800}, {})
                for i in range(3)]

    def request(self, method, path, body=None, project='p1', roles=MEMBER):
        """Call the lease API as a member of ``project``."""
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
        """Ask for 3-day proposals of ``reservation``; return them."""
        body = dict({'reservations': [reservation], 'duration': '3d',
                     'not_after': date(NOW + 30 * DAYS)}, **body)
        response = self.request('POST', '/v1/leases/proposals', body,
                                roles=roles)
        self.assertEqual(expected, response.status_int, response.text)
        return response.json.get('proposals', response.json)

    def lease(self, reservation, start=NOW, end=NOW + HOUR, name='other',
              project='p2', expected=201):
        """Create a lease of ``reservation`` (another project's)."""
        response = self.request('POST', '/v1/leases', {
            'name': name, 'start_date': date(start), 'end_date': date(end),
            'reservations': [reservation]}, project=project)
        self.assertEqual(expected, response.status_int, response.text)
        return response.json.get('lease', response.json)

    def create(self, proposal_id, expected=201, name='from-proposal'):
        """Create the lease of a proposal."""
        response = self.request('POST', '/v1/leases', {
            'name': name, 'proposal_id': proposal_id})
        self.assertEqual(expected, response.status_int, response.text)
        return response.json.get('lease', response.json)

    def rows(self, **owner):
        """``{(host, window, size): count}`` of an owner's allocations.

        ``proposal_id=`` or ``reservation_id=``.
        """
        (column, value), = owner.items()
        with self.engine.connect() as conn:
            return dict(collections.Counter(
                (row.host_id, row.start_date, row.end_date,
                 (row.vcpus, row.memory_mb, row.disk_gb))
                for row in conn.execute(sa.select(ALLOCATIONS).where(
                    ALLOCATIONS.c[column] == value))))

    def hosts_of(self, **owner):
        """``{host index: slices}`` of an owner's allocations."""
        held = collections.Counter()
        for (host, _start, _end, _size), count in self.rows(
                **owner).items():
            held[self.hosts.index(host)] += count
        return dict(held)

    def count(self, table, *where):
        """Count the rows of ``table`` that match."""
        with self.engine.connect() as conn:
            return conn.scalar(sa.select(sa.func.count()).select_from(
                table).where(*where))

    def windows(self, proposals):
        """The proposals' windows."""
        return [(p['start_date'], p['end_date']) for p in proposals]

    def expected_windows(self, *starts):
        """3-day windows from ``starts``, as shown."""
        return [(viewed(start), viewed(start + DAYS)) for start in starts]

    def test_eight_larges_with_affinity_are_held_on_one_host(self):
        proposals = self.propose(large(8, True), count=3, roles=ADMIN)
        # A host holds eight: each window holds host0 whole for larges,
        # and the next one starts where it ends.
        self.assertEqual(
            self.expected_windows(NOW, NOW + DAYS, NOW + 2 * DAYS),
            self.windows(proposals))
        self.assertEqual([['host0']] * 3, [p['hosts'] for p in proposals])
        for proposal in proposals:
            self.assertEqual({0: 8}, self.hosts_of(proposal_id=proposal['id']))
        # Nothing is made in Nova for a proposal.
        self.assertEqual(({}, {}), (self.nova.made, self.nova.groups))

    def test_servers_without_affinity_are_held_on_different_hosts(self):
        (proposal,) = self.propose(large(3, False), count=1, roles=ADMIN)
        self.assertEqual(['host0', 'host1', 'host2'], proposal['hosts'])
        self.assertEqual({0: 1, 1: 1, 2: 1},
                         self.hosts_of(proposal_id=proposal['id']))

    def test_servers_of_no_affinity_are_packed_from_the_first_host(self):
        (proposal,) = self.propose(sized(10, None), count=1, roles=ADMIN)
        self.assertEqual({0: 8, 1: 2},
                         self.hosts_of(proposal_id=proposal['id']))

    def test_a_proposal_holds_what_a_create_then_books(self):
        # Five larges booked on host0 in every window asked for.
        start = NOW + 24 * HOUR
        self.lease(sized(5, None), start=NOW, end=start + 10 * DAYS,
                   name='five')
        cases = [(large(8, True), {1: 8}),
                 (large(3, False), {0: 1, 1: 1, 2: 1}),
                 (sized(10, None), {0: 3, 1: 7})]
        for index, (reservation, hosts) in enumerate(cases):
            with self.subTest(reservation=reservation):
                (proposal,) = self.propose(reservation, count=1,
                                           not_before=date(start))
                self.assertEqual(hosts, self.hosts_of(
                    proposal_id=proposal['id']))
                # Once the proposal expired, a lease of its window and
                # reservation is booked where it held.
                self.clock.advance(
                    seconds=self.conf.reservation.proposal_ttl)
                booked = self.lease(reservation, start=start,
                                    end=start + DAYS, name='same%d' % index,
                                    project='p1')
                self.assertEqual(hosts, self.hosts_of(
                    reservation_id=booked['reservations'][0]['id']))
                response = self.request('DELETE',
                                        '/v1/leases/' + booked['id'])
                self.assertEqual(204, response.status_int, response.text)

    def test_a_window_where_a_host_has_no_room_for_all_is_skipped(self):
        # One large on each host for two hours: no host holds eight.
        self.lease(sized(3, False), end=NOW + 2 * HOUR)
        (proposal,) = self.propose(large(8, True), count=1)
        self.assertEqual(viewed(NOW + 2 * HOUR), proposal['start_date'])

    def test_a_window_where_hosts_are_leased_whole_is_skipped(self):
        self.lease({'resource_type': 'physical:host', 'min': 1, 'max': 1,
                    'resource_properties': ''}, end=NOW + 5 * HOUR)
        (proposal,) = self.propose(large(3, False), count=1)
        self.assertEqual(viewed(NOW + 5 * HOUR), proposal['start_date'])
        # Two on different hosts fit beside it.
        (proposal,) = self.propose(large(2, False), count=1)
        self.assertEqual(viewed(NOW), proposal['start_date'])

    def test_holds_keep_other_leases_out(self):
        self.propose(large(8, True), count=1)
        # host0 is held for eight larges: 16 are left, no three hosts.
        self.lease({'resource_type': 'physical:host', 'min': 3, 'max': 3,
                    'resource_properties': ''}, expected=409)
        self.lease(sized(17, None), expected=409)
        self.lease(sized(3, False), expected=409)
        self.lease(sized(16, None), name='rest')
        # Another proposal for eight together finds a host when the
        # lease ends.
        (later,) = self.propose(large(8, True), count=1)
        self.assertEqual(viewed(NOW + HOUR), later['start_date'])

    def test_a_lease_from_a_proposal_books_exactly_the_held_rows(self):
        for index, reservation in enumerate((
                large(3, False), sized(10, None), large(8, True))):
            with self.subTest(reservation=reservation):
                self.assert_booked_as_held(reservation, 'lease%d' % index)

    def assert_booked_as_held(self, reservation, name):
        """A lease from a proposal of ``reservation`` books its holds."""
        proposals = self.propose(reservation, count=3,
                                 not_before=date(NOW + 100 * DAYS),
                                 not_after=date(NOW + 200 * DAYS))
        second = proposals[1]
        held = self.rows(proposal_id=second['id'])
        lease = self.create(second['id'], name=name)
        self.assertEqual((second['start_date'], second['end_date']),
                         (lease['start_date'], lease['end_date']))
        (booked,) = lease['reservations']
        self.assertEqual(
            (reservation['resource_type'], reservation['amount'],
             reservation['affinity'], LARGE),
            (booked['resource_type'], booked['amount'], booked['affinity'],
             (booked['vcpus'], booked['memory_mb'], booked['disk_gb'])))
        self.assertEqual(held, self.rows(reservation_id=booked['id']))
        # The create made the flavor (and the server group) as any create.
        self.assertIn(booked['id'], self.nova.made)
        self.assertEqual({True: 'affinity', False: 'anti-affinity'}.get(
            reservation['affinity']), self.nova.groups.get(
                'reservation-' + booked['id']))
        # Every proposal of the request is gone, and its holds.
        self.assertEqual(0, self.count(PROPOSALS))
        self.assertEqual(0, self.count(
            ALLOCATIONS, ALLOCATIONS.c.proposal_id.is_not(None)))

    def test_a_flavor_made_anew_with_another_size_is_refused(self):
        (proposal,) = self.propose(large(2, None), count=1)
        self.nova.flavors['m1.large'] = (4, 8192, 40)
        error = self.create(proposal['id'], expected=409)
        self.assertIn('The reservation now asks for 2 server(s) of 4 vCPU(s), '
                      '8192 MB of RAM and 40 GB of disk, not what the '
                      'proposal holds', error['error_message'])
        # What the create made in Nova is undone; the proposal still
        # holds its capacity.
        self.assertEqual(({}, {}), (self.nova.made, self.nova.groups))
        self.assertEqual(2, self.count(
            ALLOCATIONS, ALLOCATIONS.c.proposal_id == proposal['id']))

    def test_a_request_that_never_fits_is_refused_naming_the_field(self):
        what = '8192 MB of RAM and 80 GB of disk'
        cases = [
            (large(1, None, flavor_id='m1.huge'),
             'reservations[0].flavor_id: no flavor m1.huge'),
            # Another project's private flavor is as none.
            (large(1, None, flavor_id='secret'),
             'reservations[0].flavor_id: no flavor secret'),
            (large(0, None), 'reservations[0].amount: must be at least 1'),
            (large(1, 'maybe'), 'reservations[0].affinity: must be true, '
             'false or null'),
            (large(9, True),
             'reservations[0].amount: 9 server(s) of 4 vCPU(s), %s on one '
             'host: at most 8 fit on one of the 3 reservable host(s) that '
             'match the request, even with nothing else booked: %s'
             % (what, NEVER)),
            (sized(4, False),
             'reservations[0].amount: 4 server(s) of 4 vCPU(s), %s on '
             'different hosts: 3 reservable host(s) match the request and '
             'have room for one: %s' % (what, NEVER)),
            (large(25, None),
             'reservations[0].amount: 25 server(s) of 4 vCPU(s), %s: at '
             'most 24 fit on the 3 reservable host(s) that match the '
             'request, even with nothing else booked: %s' % (what, NEVER)),
            (sized(1, None, vcpus=33),
             'reservations[0].vcpus: a server of 33 vCPU(s), %s fits none '
             'of the 3 reservable host(s) that match the request: %s'
             % (what, NEVER)),
            (sized(1, None, resource_properties='["=", "$gpu", "true"]'),
             'reservations[0].resource_properties: no reservable host '
             'matches the request: ' + NEVER),
            ({'resource_type': 'flavor:instance', 'flavor_id': 'm1.large'},
             'reservations[0].amount'),
        ]
        for reservation, message in cases:
            with self.subTest(message=message):
                error = self.propose(reservation, expected=400)
                self.assertIn(message, error['error_message'])
        self.assertEqual(0, self.count(PROPOSALS))
        self.assertEqual(0, self.count(ALLOCATIONS))
        # The project that has the private flavor gets its proposals.
        response = self.request('POST', '/v1/leases/proposals', {
            'reservations': [large(2, True, flavor_id='secret')],
            'duration': '1h', 'count': 1}, project='p2')
        self.assertEqual(201, response.status_int, response.text)

    def availability(self, expected=200, roles=MEMBER, **query):
        """Ask for the availability of ``query`` over four hours."""
        query = dict({'resource_type': 'virtual:instance',
                      'start': date(NOW), 'end': date(NOW + 4 * HOUR)},
                     **query)
        response = self.request('GET', '/v1/availability?' + '&'.join(
            '%s=%s' % (key, str(value).replace(' ', '%20'))
            for key, value in query.items()), roles=roles)
        self.assertEqual(expected, response.status_int, response.text)
        return response.json.get('availability', response.json)

    def test_availability_counts_the_servers_one_reservation_could_have(
            self):
        # One large on each host in the second hour, host0 whole in the
        # third.
        self.lease(sized(3, False), start=NOW + HOUR, end=NOW + 2 * HOUR)
        self.lease({'resource_type': 'physical:host', 'min': 1, 'max': 1,
                    'resource_properties': ''}, start=NOW + 2 * HOUR,
                   end=NOW + 3 * HOUR, name='host')
        expected = {'True': [8, 7, 8], 'False': [3, 2, 3],
                    'None': [24, 21, 16, 24]}
        size = dict(zip(('vcpus', 'memory_mb', 'disk_gb'), LARGE))
        for affinity, counts in expected.items():
            with self.subTest(affinity=affinity):
                shown = self.availability(affinity=affinity, **size)
                self.assertEqual('servers', shown['unit'])
                self.assertEqual(counts, [
                    step['amount'] for step in shown['free']])
                by_flavor = self.availability(
                    resource_type='flavor:instance', flavor_id='m1.large',
                    affinity=affinity, amount=8)
                self.assertEqual(shown['free'], by_flavor['free'])
        steps = self.availability(affinity='None', **size)['free']
        self.assertEqual(
            [(viewed(NOW + k * HOUR), viewed(NOW + (k + 1) * HOUR))
             for k in range(4)],
            [(step['start'], step['end']) for step in steps])
        # Who may list the hosts sees each host's room.
        hosts = self.availability(roles=ADMIN, affinity='None',
                                  **size)['hosts']
        self.assertEqual({'host': 'host0', 'free': [
            {'start': viewed(NOW), 'end': viewed(NOW + HOUR), 'amount': 8},
            {'start': viewed(NOW + HOUR), 'end': viewed(NOW + 2 * HOUR),
             'amount': 7},
            {'start': viewed(NOW + 3 * HOUR), 'end': viewed(NOW + 4 * HOUR),
             'amount': 8}]}, hosts[0])

    def test_availability_of_capacity_refuses_bad_fields(self):
        for query, reason in (
                ({'resource_type': 'flavor:instance'},
                 'flavor_id: Missing parameter flavor_id'),
                ({'resource_type': 'flavor:instance', 'flavor_id': 'm1.huge'},
                 'flavor_id: no public flavor m1.huge'),
                ({'resource_type': 'flavor:instance', 'flavor_id': 'secret'},
                 'flavor_id: no public flavor secret'),
                ({'amount': '0', 'vcpus': '1', 'memory_mb': '1',
                  'disk_gb': '1'}, 'amount: must be at least 1'),
                ({'affinity': 'maybe', 'vcpus': '1', 'memory_mb': '1',
                  'disk_gb': '1'}, 'affinity: must be true, false or null'),
                ({'amount': '2', 'vcpus': '1'}, 'memory_mb')):
            with self.subTest(query=query):
                shown = self.availability(expected=400, **query)
                self.assertIn(reason, shown['error_message'])

    def test_the_commands_ask_for_capacity(self):
        url = 'http://nova-api.test/reservation'
        self.enterContext(interceptor.RequestsInterceptor(
            lambda: self._as_member, url=url))
        client = blazar_client.Client(session=ks_session.Session(
            auth=token_endpoint.Token(url + '/v1', 'token')))
        app = types.SimpleNamespace(client_manager=types.SimpleNamespace(
            reservation=client), stdout=io.StringIO())
        command = osc.ProposeLease(app, None)
        columns, rows = command.take_action(command.get_parser(
            'openstack reservation lease propose').parse_args([
                '--reservation', 'resource_type=flavor:instance,'
                'flavor_id=m1.large,amount=8,affinity=True',
                '--duration', '3d', '--count', '2']))
        self.assertEqual(('id', 'start_date', 'end_date', 'expires_at'),
                         columns)
        self.assertEqual([viewed(NOW), viewed(NOW + DAYS)],
                         [row[1] for row in rows])
        command = osc.ShowAvailability(app, None)
        columns, rows = command.take_action(command.get_parser(
            'openstack reservation availability show').parse_args([
                '--resource-type', 'virtual:instance', '--end',
                date(NOW + 4 * DAYS), '--field', 'vcpus=4', '--field',
                'memory_mb=8192', '--field', 'disk_gb=80', '--field',
                'affinity=True']))
        self.assertEqual(('start', 'end', 'free (servers)'), columns)
        # The two proposals hold host0 for six days.
        self.assertEqual([8], [row[2] for row in rows])

    def _as_member(self, environ, start_response):
        """The application, as keystonemiddleware leaves a member's call."""
        environ.update(HTTP_X_PROJECT_ID='p1', HTTP_X_USER_ID='u-p1',
                       HTTP_X_ROLES=MEMBER)
        environ['keystone.token_auth'] = types.SimpleNamespace(
            user=object())
        return self.app(environ, start_response)


class CapacityProposalSQLiteTest(_CapacityProposalTests, base.DBTestCase):
    """On SQLite."""


class CapacityProposalPostgreSQLTest(_CapacityProposalTests,
                                     base.PostgreSQLTestCase):
    """On PostgreSQL."""


class CapacityProposalMySQLTest(_CapacityProposalTests, base.MySQLTestCase):
    """On MariaDB."""
