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

"""Schedule proposals of Heat stacks, through the lease API.

On SQLite, PostgreSQL and MariaDB, with the real plugins, planners and
an injected clock; Heat, Keystone's trusts, Nova's flavors and Neutron's
networks are fakes that answer as they would (Heat's preview lists a
template's resources). A stack's proposals hold its slices, GB and
addresses together; other leases cannot take them; a lease made from
one books exactly what it held; a stack that never fits is refused
naming its need. ``openstack reservation stack propose`` runs against
the same application.
"""

import collections
import datetime
import io
import json
import os
import tempfile
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
from reservation_ext.clients import orchestration
from reservation_ext.clients import plugin_clients
from reservation_ext import clock as clock_mod
from reservation_ext import dates
from reservation_ext.leases import notifications
from reservation_ext.osc import v1 as osc
from reservation_ext import plugins as plugins_mod
from reservation_ext.store import floating_ips as store_fips
from reservation_ext.store import hosts as store_hosts
from tests import base
from tests import fixtures

NOW = datetime.datetime(2027, 1, 10, 9, 0)
HOUR = datetime.timedelta(hours=1)
MEMBER = 'member,reader'
ADMIN = 'admin,member,reader'
ALLOCATIONS = tables.ALLOCATIONS
FIP_ALLOCATIONS = tables.FLOATINGIP_ALLOCATIONS
PROPOSALS = tables.PROPOSALS
NETWORK = 'public-id'
# Every host has 8 vCPUs, 8192 MB and 100 GB besides the memory Nova
# keeps for the host by default: two larges, or four smalls.
RESERVED_MB = 512
FLAVORS = {'m1.large': (4, 4096, 40), 'm1.small': (2, 2048, 20)}


def date(moment):
    return moment.strftime('%Y-%m-%d %H:%M')


def viewed(moment):
    return dates.format_date(moment)


def template(large=0, small=0, volume_gb=0, addresses=0):
    """A HOT template (as JSON text) of such servers, volume and IPs."""
    resources = {}
    for flavor, count in (('m1.large', large), ('m1.small', small)):
        for index in range(count):
            resources['%s-%d' % (flavor, index)] = {
                'type': 'OS::Nova::Server',
                'properties': {'flavor': flavor, 'image': 'cirros'}}
    if volume_gb:
        resources['data'] = {'type': 'OS::Cinder::Volume',
                             'properties': {'size': volume_gb}}
    for index in range(addresses):
        resources['ip-%d' % index] = {
            'type': 'OS::Neutron::FloatingIP',
            'properties': {'floating_network': 'public'}}
    return json.dumps({'heat_template_version': '2021-04-16',
                       'resources': resources})


def stack(**needs):
    return {'resource_type': 'heat:stack', 'template': template(**needs)}


# The stack every test asks for: 2 larges and 4 smalls (two hosts), 30 GB
# and 2 of the 3 addresses.
WEB = dict(large=2, small=4, volume_gb=30, addresses=2)


class FakeHeat:
    """Heat's preview: the template's resources, as Heat lists them."""

    def __init__(self):
        self.previews = []

    def preview(self, auth, name, text, parameters, environment=None):
        self.previews.append((auth, name))
        resources = json.loads(text).get('resources')
        if resources is None:
            raise orchestration.TemplateRefused('The template has no '
                                                'resources section.')
        return {'resources': [
            {'resource_name': name, 'resource_type': resource['type'],
             'properties': resource['properties']}
            for name, resource in sorted(resources.items())]}


class FakeTrusts:
    """Keystone's trusts: made and deleted, counted."""

    def __init__(self):
        self.made, self.deleted = [], []

    def create(self, auth, project_id, roles):
        self.made.append('trust-%d' % len(self.made))
        return self.made[-1]

    def delete(self, trust_id):
        self.deleted.append(trust_id)


class FakeNova:
    """Nova's flavors, by name."""

    def __init__(self):
        self.flavors = dict(FLAVORS)

    def find_flavor(self, name):
        if name not in self.flavors:
            return None
        vcpus, ram, disk = self.flavors[name]
        return {'id': name, 'vcpus': vcpus, 'ram': ram, 'disk': disk}


class FakeNeutron:
    """Neutron's networks: only ``public``."""

    @staticmethod
    def find_network_id(name):
        return {'public': NETWORK, NETWORK: NETWORK}.get(name)


class _StackProposalTests:

    def setUp(self):
        super().setUp()
        self.conf = self.useFixture(fixtures.ReservationConf({
            ('reservation', 'volume_reservable_gb'): 100})).conf
        self.clock = clock_mod.ManualClock(NOW)
        self.nova = FakeNova()
        clients = plugin_clients.PluginClients(self.conf, nova=self.nova,
                                               network=FakeNeutron())
        clients.heat, clients.trusts = FakeHeat(), FakeTrusts()
        self.heat, self.trusts = clients.heat, clients.trusts
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
                    'memory_mb': 8192 + RESERVED_MB, 'local_gb': 100}, {})
                for i in range(3)]
            for index in range(3):
                store_fips.register(session, {
                    'id': 'fip%d' % index, 'floating_network_id': NETWORK,
                    'subnet_id': 'subnet',
                    'floating_ip_address': '172.24.4.%d' % (10 + index)})

    def request(self, method, path, body=None, project='p1', roles=MEMBER,
                token=True):
        req = webob.Request.blank(path, method=method, headers={
            'X-User-Id': 'u-' + project, 'X-Project-Id': project,
            'X-Roles': roles})
        if token:
            # What keystonemiddleware leaves: the caller's token.
            req.environ['keystone.token_auth'] = types.SimpleNamespace(
                user=object())
        if body is not None:
            req.body = json.dumps(body).encode()
            req.content_type = 'application/json'
        return req.get_response(self.app)

    def propose(self, expected=201, roles=MEMBER, token=True, **body):
        body = dict({'reservations': [stack(**WEB)], 'duration': '1h',
                     'not_after': date(NOW + 48 * HOUR)}, **body)
        response = self.request('POST', '/v1/leases/proposals', body,
                                roles=roles, token=token)
        self.assertEqual(expected, response.status_int, response.text)
        return response.json.get('proposals', response.json)

    def lease(self, reservation, start=NOW, end=NOW + HOUR, name='other',
              project='p2', expected=201):
        response = self.request('POST', '/v1/leases', {
            'name': name, 'start_date': date(start), 'end_date': date(end),
            'reservations': [reservation]}, project=project)
        self.assertEqual(expected, response.status_int, response.text)
        return response.json.get('lease', response.json)

    def create(self, proposal_id, expected=201):
        response = self.request('POST', '/v1/leases', {
            'name': 'from-proposal', 'proposal_id': proposal_id})
        self.assertEqual(expected, response.status_int, response.text)
        return response.json.get('lease', response.json)

    def rows(self, **owner):
        """What an owner (``proposal_id=`` or ``reservation_id=``) has.

        ``(slices {(host, vcpus): count}, addresses)``.
        """
        with self.engine.connect() as conn:
            (column, value), = owner.items()
            slices = collections.Counter(conn.execute(sa.select(
                ALLOCATIONS.c.host_id, ALLOCATIONS.c.vcpus).where(
                    ALLOCATIONS.c[column] == value)).all())
            addresses = conn.execute(sa.select(
                FIP_ALLOCATIONS.c.floatingip_id).where(
                    FIP_ALLOCATIONS.c[column] == value).order_by(
                    FIP_ALLOCATIONS.c.floatingip_id)).scalars().all()
        return dict(slices), addresses

    def count(self, table, *where):
        with self.engine.connect() as conn:
            return conn.scalar(sa.select(sa.func.count()).select_from(
                table).where(*where))

    def held_gb(self, proposal_id):
        with self.engine.connect() as conn:
            return conn.scalar(sa.select(PROPOSALS.c.volume_gb).where(
                PROPOSALS.c.id == proposal_id))

    def test_proposals_hold_slices_gigabytes_and_addresses_together(self):
        proposals = self.propose(count=3, roles=ADMIN)
        # Two hosts and two of the three addresses a window: the next
        # window cannot fit beside it.
        self.assertEqual(
            [(viewed(NOW + k * HOUR), viewed(NOW + (k + 1) * HOUR))
             for k in range(3)],
            [(p['start_date'], p['end_date']) for p in proposals])
        self.assertEqual([['host0', 'host1']] * 3,
                         [p['hosts'] for p in proposals])
        host0, host1 = self.hosts[:2]
        for proposal in proposals:
            self.assertEqual(
                ({(host0, 4): 2, (host1, 2): 4}, ['fip0', 'fip1']),
                self.rows(proposal_id=proposal['id']))
            self.assertEqual(30, self.held_gb(proposal['id']))
        # Heat previewed the stack once, as the caller; no trust yet.
        self.assertEqual(1, len(self.heat.previews))
        self.assertIsNotNone(self.heat.previews[0][0])
        self.assertEqual([], self.trusts.made)

    def assert_waits_for(self, reservation, hours):
        """Book ``reservation`` for ``hours``: the stack fits after it."""
        self.lease(reservation, end=NOW + hours * HOUR)
        (proposal,) = self.propose(count=1)
        self.assertEqual(viewed(NOW + hours * HOUR), proposal['start_date'])

    def test_a_window_where_hosts_are_booked_is_skipped(self):
        # One host is left: the servers need two.
        self.assert_waits_for({'resource_type': 'physical:host', 'min': 2,
                               'max': 2, 'resource_properties': ''}, 2)

    def test_a_window_where_gigabytes_are_booked_is_skipped(self):
        self.assert_waits_for(stack(volume_gb=80), 3)

    def test_a_window_where_addresses_are_booked_is_skipped(self):
        self.assert_waits_for({'resource_type': 'virtual:floatingip',
                               'network_id': NETWORK, 'amount': 2}, 4)

    def test_holds_keep_other_leases_out(self):
        self.propose(count=1)
        # The proposal holds two hosts' slices, 30 GB and two addresses.
        self.lease({'resource_type': 'physical:host', 'min': 2, 'max': 2,
                    'resource_properties': ''}, expected=409)
        self.lease(stack(volume_gb=71), expected=409)
        self.lease({'resource_type': 'virtual:floatingip',
                    'network_id': NETWORK, 'amount': 2}, expected=409)
        # What is left can still be booked.
        self.lease(stack(large=2, volume_gb=70, addresses=1), name='rest')
        # Another proposal for the same hour finds nothing left then.
        (later,) = self.propose(count=1)
        self.assertEqual(viewed(NOW + HOUR), later['start_date'])

    def test_a_lease_from_a_proposal_books_exactly_the_held_rows(self):
        proposals = self.propose(count=3)
        second = proposals[1]
        held = self.rows(proposal_id=second['id'])
        lease = self.create(second['id'])
        self.assertEqual((second['start_date'], second['end_date']),
                         (lease['start_date'], lease['end_date']))
        (reservation,) = lease['reservations']
        self.assertEqual(
            ('heat:stack', {'m1.large': 2, 'm1.small': 4}, 30,
             {'public': 2}),
            (reservation['resource_type'], reservation['servers'],
             reservation['volume_gb'], reservation['floating_ips']))
        self.assertEqual(held, self.rows(reservation_id=reservation['id']))
        # The create previewed the stack again and made its trust.
        self.assertEqual(2, len(self.heat.previews))
        self.assertEqual((['trust-0'], []),
                         (self.trusts.made, self.trusts.deleted))
        # Every proposal of the request is gone, and its holds.
        self.assertEqual(0, self.count(PROPOSALS))
        self.assertEqual(0, self.count(
            ALLOCATIONS, ALLOCATIONS.c.proposal_id.is_not(None)))
        self.assertEqual(0, self.count(
            FIP_ALLOCATIONS, FIP_ALLOCATIONS.c.proposal_id.is_not(None)))
        # The lease holds the GB: 70 are left in its window.
        self.lease(stack(volume_gb=71), start=NOW + HOUR,
                   end=NOW + 2 * HOUR, expected=409)

    def test_a_stack_whose_needs_changed_is_refused_and_its_trust_undone(
            self):
        (proposal,) = self.propose(count=1)
        self.nova.flavors['m1.small'] = (2, 2048, 10)
        error = self.create(proposal['id'], expected=409)
        self.assertIn('The stack now needs 2 server(s) of flavor m1.large, '
                      '4 server(s) of flavor m1.small, not what the '
                      'proposal holds', error['error_message'])
        self.assertEqual(self.trusts.made, self.trusts.deleted)
        # The proposal still holds its capacity.
        self.assertEqual(6, self.count(
            ALLOCATIONS, ALLOCATIONS.c.proposal_id == proposal['id']))

    def test_a_stack_that_can_never_fit_is_refused_naming_what(self):
        never = 'no window can ever fit it'
        cases = [
            (stack(large=7),
             'reservations[0].template: 1 of the 7 server(s) of flavor '
             'm1.large do not fit the 3 reservable host(s) even with '
             'nothing else booked: ' + never),
            (stack(large=5, small=3),
             'reservations[0].template: 1 of the 3 server(s) of flavor '
             'm1.small do not fit the 3 reservable host(s) even with '
             'nothing else booked: ' + never),
            (stack(small=1, volume_gb=101),
             "reservations[0].template: the stack's volumes take 101 GB, "
             'more than the 100 GB reservable ([reservation] '
             'volume_reservable_gb): ' + never),
            (stack(addresses=4),
             'reservations[0].template: the stack has 4 floating IP(s) of '
             'network public, which has 3 reservable: ' + never),
            (dict(stack(small=1), template=json.dumps({
                'resources': {'vm': {'type': 'OS::Nova::Server',
                                     'properties': {'flavor': 'm1.huge'}}}
            })), 'reservations[0].template: no flavor m1.huge'),
            (dict(stack(), template='{"parameters": {}}'),
             'reservations[0].template: The template has no resources '
             'section.'),
            (stack(),
             'reservations[0].template: the stack has no servers, volumes '
             'or floating IPs to book: any window fits it, no proposal is '
             'needed'),
            (dict(stack(small=1), on_end='keep'),
             'reservations[0].on_end: must be one of:'),
        ]
        for reservation, message in cases:
            with self.subTest(message=message):
                error = self.propose(expected=400,
                                     reservations=[reservation])
                self.assertIn(message, error['error_message'])
        error = self.propose(expected=400, reservations=[
            {'resource_type': 'virtual:volume', 'size_gb': 1}, stack(**WEB)])
        self.assertEqual(
            'reservations[1].resource_type: a proposals request takes a '
            'heat:stack reservation alone: its servers, volumes and '
            'floating IPs share the capacity of the others',
            error['error_message'])
        error = self.propose(expected=400, token=False)
        self.assertEqual(
            "reservations[0].template: a stack is previewed with the "
            "caller's token, and this request has none",
            error['error_message'])
        self.assertEqual(0, self.count(PROPOSALS))
        self.assertEqual(0, self.count(ALLOCATIONS))

    def test_nothing_fits_before_not_after(self):
        self.lease({'resource_type': 'physical:host', 'min': 2, 'max': 2,
                    'resource_properties': ''}, end=NOW + 100 * HOUR)
        self.assertEqual([], self.propose())
        self.assertEqual(0, self.count(PROPOSALS))

    def availability(self, expected=200, **query):
        query = dict({'resource_type': 'heat:stack',
                      'start': date(NOW), 'end': date(NOW + 4 * HOUR)},
                     **query)
        response = self.request('GET', '/v1/availability?' + '&'.join(
            '%s=%s' % (key, value.replace(' ', '%20'))
            for key, value in query.items()))
        self.assertEqual(expected, response.status_int, response.text)
        return response.json.get('availability', response.json)

    def test_availability_counts_the_copies_of_a_stacks_needs_that_fit(self):
        # Four smalls a host (two copies), 100 GB (three copies of 30),
        # three addresses (three copies of one): three copies at most.
        needs = {'servers': 'm1.small:2', 'volume_gb': '30',
                 'floating_ips': 'public:1'}
        self.lease({'resource_type': 'virtual:floatingip',
                    'network_id': NETWORK, 'amount': 2},
                   start=NOW + HOUR, end=NOW + 2 * HOUR)
        self.lease(stack(large=4, small=1), start=NOW + 3 * HOUR,
                   end=NOW + 4 * HOUR, name='servers')
        shown = self.availability(end=date(NOW + 5 * HOUR), **needs)
        self.assertEqual('stacks', shown['unit'])
        self.assertEqual([
            (viewed(NOW), viewed(NOW + HOUR), 3),
            # One address left.
            (viewed(NOW + HOUR), viewed(NOW + 2 * HOUR), 1),
            (viewed(NOW + 2 * HOUR), viewed(NOW + 3 * HOUR), 3),
            # Four larges fill host0 and host1, a small takes a quarter of
            # host2: three smalls left, one copy.
            (viewed(NOW + 3 * HOUR), viewed(NOW + 4 * HOUR), 1),
            (viewed(NOW + 4 * HOUR), viewed(NOW + 5 * HOUR), 3)],
            [(step['start'], step['end'], step['amount'])
             for step in shown['free']])
        # Without the addresses, the servers and GB bound the copies.
        del needs['floating_ips']
        self.assertEqual([3, 1, 3], [
            step['amount'] for step in self.availability(
                end=date(NOW + 5 * HOUR), **needs)['free']])

    def test_availability_of_a_stack_refuses_what_names_no_need(self):
        for query, reason in (
                ({}, 'servers: a stack query names what the stack needs'),
                ({'servers': 'm1.huge:1'}, 'servers: no flavor m1.huge'),
                ({'servers': 'm1.small'}, 'servers: '),
                ({'floating_ips': 'private:1'},
                 'floating_ips: no network private'),
                ({'volume_gb': 'ten'}, 'volume_gb: must be an integer'),
                ({'template': 'x'}, 'template')):
            shown = self.availability(expected=400, **query)
            self.assertIn(reason, shown['error_message'])

    def test_the_propose_command_asks_for_a_stacks_proposals(self):
        url = 'http://nova-api.test/reservation'
        self.enterContext(interceptor.RequestsInterceptor(
            lambda: self._as_member, url=url))
        client = blazar_client.Client(session=ks_session.Session(
            auth=token_endpoint.Token(url + '/v1', 'token')))
        app = types.SimpleNamespace(client_manager=types.SimpleNamespace(
            reservation=client), stdout=io.StringIO())
        path = self._file(template(**WEB))
        command = osc.ProposeStack(app, None)
        columns, rows = command.take_action(command.get_parser(
            'openstack reservation stack propose').parse_args([
                '--template', path, '--parameter', 'image=cirros',
                '--duration', '1h', '--not-before', date(NOW + HOUR),
                '--count', '2']))
        self.assertEqual(('id', 'start_date', 'end_date', 'expires_at'),
                         columns)
        self.assertEqual([viewed(NOW + HOUR), viewed(NOW + 2 * HOUR)],
                         [row[1] for row in rows])
        command = osc.CreateLeaseFromProposal(app, None)
        columns, values = command.take_action(command.get_parser(
            'openstack reservation lease create-from-proposal').parse_args(
                [rows[0][0], 'web']))
        shown = dict(zip(columns, values))
        self.assertEqual(('web', viewed(NOW + HOUR)),
                         (shown['name'], shown['start_date']))

    def _as_member(self, environ, start_response):
        environ.update(HTTP_X_PROJECT_ID='p1', HTTP_X_USER_ID='u-p1',
                       HTTP_X_ROLES=MEMBER)
        environ['keystone.token_auth'] = types.SimpleNamespace(
            user=object())
        return self.app(environ, start_response)

    def _file(self, text):
        handle, path = tempfile.mkstemp(suffix='.yaml')
        self.addCleanup(os.remove, path)
        with os.fdopen(handle, 'w') as out:
            out.write(text)
        return path


class StackProposalSQLiteTest(_StackProposalTests, base.DBTestCase):
    """On SQLite."""


class StackProposalPostgreSQLTest(_StackProposalTests,
                                  base.PostgreSQLTestCase):
    """On PostgreSQL."""


class StackProposalMySQLTest(_StackProposalTests, base.MySQLTestCase):
    """On MariaDB."""
