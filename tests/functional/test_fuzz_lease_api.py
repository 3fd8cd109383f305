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

"""Generated requests against the lease API, in process.

The real WSGI application (:func:`reservation_ext.api.wsgi.build_app`)
with the real resource plugins on a SQLite leases DB with four reservable
hosts, as in ``test_api_leases``; requests carry the headers
keystonemiddleware sets, as an administrator or a member. Every endpoint
but those that call Nova (a host's create and delete, a lease's delete,
an instance-capacity reservation's create, which makes its flavor and
server group: ``test_fuzz_nova`` sends those through Nova's harness)
gets bodies and query strings from :mod:`tests.fuzz.strategies`. The
state carries over from one request to the next (leases created,
updated, deleted), so later requests meet full hosts and taken
proposals.

Every answer is checked by :mod:`tests.fuzz.checks`; after the run, the
leases DB holds exactly the leases that were answered 201 and not
deleted since, and only proposals that were; each lease whole (its
events; its reservations' requests, bookings and projects belong to
it), and no hold of a proposal that is gone.
"""

import datetime
import logging
import uuid

from hypothesis import given
from hypothesis import strategies as st
import sqlalchemy as sa
import testtools.content
import webob

from db import api as db_api
from db import models
from reservation_ext.api import wsgi
from reservation_ext.clients import compute as compute_client
from reservation_ext import clock as clock_mod
from reservation_ext.hosts import schemas as host_schemas
from reservation_ext.leases import notifications
from reservation_ext.leases import schemas as lease_schemas
from reservation_ext import plugins as plugins_mod
from reservation_ext.plugins import floating_ip
from reservation_ext.plugins import instance_capacity
from reservation_ext.plugins import physical_host
from reservation_ext.plugins import virtual_volume
from reservation_ext.store import floating_ips as store_floating_ips
from reservation_ext.store import hosts as store_hosts
from tests import base
from tests import fixtures
from tests.fuzz import checks
from tests.fuzz import strategies as fz

LOG = logging.getLogger(__name__)
NOW = datetime.datetime(2027, 1, 10, 9, 0, 0)
ADMIN = ('admin', 'admin,member,reader')
MEMBER = ('p1', 'member,reader')
PLUGIN_SCHEMAS = {'physical:host': physical_host.SCHEMA,
                  'virtual:volume': virtual_volume.SCHEMA,
                  'virtual:floatingip': floating_ip.SCHEMA}
# A proposal makes nothing in Nova: every kind is asked for.
PROPOSAL_SCHEMAS = dict(PLUGIN_SCHEMAS, **{
    'virtual:instance': instance_capacity.SCHEMA})
# Requests per CI run (times RESERVATION_FUZZ_SCALE).
EXAMPLES = 8800
# Reservable hosts: some with a gpu, enough for a few hundred leases.
HOSTS = (('compute-1', 2, {'gpu': 'false'}),
         ('compute-2', 10, {'gpu': 'true'}),
         ('compute-3', 10, {'gpu': 'true', 'rack': 'r1'}),
         ('compute-4', 1000, {})) + tuple(
    ('node-%d' % index, 16, {'gpu': str(index % 2 == 0).lower()})
    for index in range(20))


def _lease_requests():
    """Requests of /v1/leases, proposals, availability and plugins.

    Creates and updates are the most frequent.
    """
    leases = fz.segments('lease', 4)
    create = st.builds(
        fz.Request, st.just('POST'), st.just(('leases',)), st.just([]),
        fz.bodies(fz.lease_bodies(NOW, PLUGIN_SCHEMAS), lease_schemas.CREATE))
    update = st.builds(
        fz.Request, st.just('PUT'), st.tuples(st.just('leases'), leases),
        st.just([]), fz.bodies(fz.lease_updates(NOW), lease_schemas.UPDATE))
    return fz.weighted(
        (4, create), (2, update),
        # No DELETE: deleting a host lease releases its aggregate in
        # Nova, so test_fuzz_nova sends those.
        (1, st.builds(fz.Request, st.sampled_from(('GET', 'PATCH')),
                      st.tuples(st.just('leases'), leases), st.just([]),
                      st.just(fz.NO_BODY))),
        (1, st.builds(fz.Request, st.just('GET'), st.just(('leases',)),
                      fz.queries(sorted(
                          lease_schemas.LIST_QUERY['properties']),
                          fz.dates(NOW)), st.just(fz.NO_BODY))),
        (2, st.builds(fz.Request, st.just('POST'),
                      st.just(('leases', 'proposals')), st.just([]),
                      fz.bodies(fz.proposal_bodies(NOW, PROPOSAL_SCHEMAS),
                                lease_schemas.PROPOSE))),
        (1, st.builds(fz.Request, st.just('GET'), st.just(('availability',)),
                      _availability_queries(), st.just(fz.NO_BODY))),
        (1, st.builds(fz.Request, st.sampled_from(('GET', 'POST')),
                      st.just(('plugins',)), st.just([]),
                      st.just(fz.NO_BODY))))


def _availability_queries():
    known = st.fixed_dictionaries(
        {'resource_type': st.sampled_from(sorted(PLUGIN_SCHEMAS) + ['x']),
         'end': fz.dates(NOW)},
        optional={'start': fz.dates(NOW),
                  'hosts': st.sampled_from(('compute-1', '1,2', '²', '')),
                  'resource_properties': fz.QUERIES,
                  'vcpus': st.sampled_from(('1', '١', str(2 ** 40))),
                  'memory_mb': st.just('512'), 'disk_gb': st.just('1'),
                  'size_gb': st.sampled_from(('1', '²', '9' * 30)),
                  'min': st.just('1'), 'max': st.just('2')})
    return st.one_of(known.map(lambda query: sorted(query.items())),
                     fz.queries(['resource_type', 'start', 'end', 'hosts',
                                 'vcpus', 'size_gb'], fz.dates(NOW)))


def _host_requests():
    hosts = fz.segments('host', 4)
    updates = st.dictionaries(
        st.sampled_from(('gpu', 'rack', 'ssd')),
        st.one_of(st.sampled_from(('true', 'r2', 1, 2.5, None)),
                  fz.scalars()), max_size=2)
    return st.one_of(
        st.builds(fz.Request, st.just('GET'), st.just(('os-hosts',)),
                  st.just([]), st.just(fz.NO_BODY)),
        st.builds(fz.Request, st.sampled_from(('GET', 'PATCH')),
                  st.tuples(st.just('os-hosts'), hosts), st.just([]),
                  st.just(fz.NO_BODY)),
        st.builds(fz.Request, st.just('PUT'),
                  st.tuples(st.just('os-hosts'), hosts), st.just([]),
                  fz.bodies(updates, host_schemas.UPDATE)),
        st.builds(fz.Request, st.just('GET'),
                  st.one_of(st.just(('os-hosts', 'allocations')),
                            st.tuples(st.just('os-hosts'), hosts,
                                      st.just('allocation'))),
                  fz.queries(['lease_id', 'reservation_id'], st.one_of(
                      st.builds(fz.Ref, st.sampled_from(
                          ('lease', 'reservation')), st.integers(0, 3)),
                      fz.odd_text())),
                  st.just(fz.NO_BODY)),
        st.builds(fz.Request, st.just('GET'),
                  st.just(('os-hosts', 'properties')),
                  fz.queries(['detail', 'all'], st.sampled_from(
                      ('1', '0', 'true', 'yes', '²', ''))),
                  st.just(fz.NO_BODY)),
        st.builds(fz.Request, st.just('PATCH'),
                  st.tuples(st.just('os-hosts'), st.just('properties'),
                            st.one_of(st.sampled_from(('gpu', 'rack')),
                                      fz.odd_text().filter(bool))),
                  st.just([]),
                  fz.bodies(st.fixed_dictionaries(
                      {'private': st.booleans()}),
                      host_schemas.PROPERTY_UPDATE)))


def _floatingip_requests():
    """The reservable floating IPs' list, show and delete.

    Not their create, which asks Neutron (``test_floating_ips`` has it).
    """
    return st.one_of(
        st.builds(fz.Request, st.just('GET'), st.just(('floatingips',)),
                  st.just([]), st.just(fz.NO_BODY)),
        st.builds(fz.Request, st.sampled_from(('GET', 'DELETE', 'PUT')),
                  st.tuples(st.just('floatingips'),
                            fz.segments('floatingip', 4)),
                  st.just([]), st.just(fz.NO_BODY)))


# The leases made before the run, for the generated paths to name.
SEEDS = ({'resource_type': 'physical:host', 'min': 1, 'max': 1},
         {'resource_type': 'physical:host', 'min': 1, 'max': 2,
          'resource_properties': '["=", "$gpu", "true"]'},
         {'resource_type': 'physical:host', 'min': 2, 'max': 2})

# Members' requests of the leases, more of them than administrators';
# the hosts' mostly as an administrator (a member's are 403).
REQUESTS = fz.weighted(
    (3, st.tuples(st.sampled_from((ADMIN, MEMBER, MEMBER)),
                  _lease_requests())),
    (1, st.tuples(st.sampled_from((ADMIN, ADMIN, MEMBER)),
                  st.one_of(_host_requests(), _floatingip_requests()))))


class LeaseAPIFuzzTest(base.DBTestCase):
    """The lease API never fails on what a careless client sends."""

    def setUp(self):
        super().setUp()
        conf = self.useFixture(fixtures.ReservationConf()).conf
        self.clock = clock_mod.ManualClock(NOW)
        self.app = wsgi.build_app(conf, self.clock,
                                  plugins_mod.load_plugins(conf, self.clock),
                                  notifications.get_notifier(conf),
                                  compute_client.NovaClient(conf))
        self.tally = checks.Tally('lease API (in process)')
        self.resolve = fz.Resolver('host', 'lease', 'reservation',
                                   'proposal', 'floatingip')
        self.refs = self.resolve.known
        self.answered = {'lease': set(), 'proposal': set()}
        self._add_hosts()
        self._seed()

    def _add_hosts(self):
        with db_api.writer(self.ctx, self.clock) as session:
            for name, vcpus, caps in HOSTS:
                self.refs['host'].append(str(store_hosts.add_host(session, {
                    'hypervisor_hostname': name, 'service_name': name,
                    'availability_zone': 'nova', 'vcpus': vcpus,
                    'memory_mb': vcpus * 4096, 'local_gb': vcpus * 100,
                    'reservable': True, 'generation': 0,
                    'created_at': NOW}, caps)))
            for index in range(4):
                fip_id = str(uuid.uuid4())
                store_floating_ips.register(session, {
                    'id': fip_id, 'subnet_id': 'ext-subnet',
                    'floating_network_id': fz.FLOATING_NETWORK,
                    'floating_ip_address': '172.24.4.%d' % (index + 2)})
                self.refs['floatingip'].append(fip_id)

    def _seed(self):
        """Leases and proposals for the generated paths to name.

        No volume lease: deleting one deletes its reserved volume through
        Cinder, which ``test_fuzz_cinder`` has.
        """
        for index, reservation in enumerate(SEEDS):
            response = self.send(ADMIN, fz.Request('POST', ('leases',), [], {
                'name': 'seed%d' % index, 'start_date': '2027-01-11 10:00',
                'end_date': '2027-01-12 10:00',
                'reservations': [reservation], 'events': []}))
            self.assertEqual(201, response.status_int, response.text)
        self.send(MEMBER, fz.Request('POST', ('leases', 'proposals'), [], {
            'reservations': [{'resource_type': 'physical:host', 'min': 1,
                              'max': 1}], 'duration': '2h', 'count': 2}))
        self.assertEqual(3, len(self.answered['lease']))
        self.assertEqual(2, len(self.answered['proposal']))

    def send(self, persona, request):
        """Send ``request`` as ``persona``; check and count the answer."""
        project, roles = persona
        path = '/v1/' + self.resolve.path(request.path)
        query = [(key, self.resolve.value(value))
                 for key, value in request.query]
        if query:
            path += '?' + fz.query_string(query)
        req = webob.Request.blank(path, method=request.method, headers={
            'X-User-Id': 'u-' + project, 'X-Project-Id': project,
            'X-Roles': roles, 'X-Auth-Token': 'token',
            'Accept': 'application/json'})
        if request.body is not fz.NO_BODY:
            req.body = fz.encode(request.body, self.resolve)
            req.content_type = 'application/json'
        response = req.get_response(self.app)
        self.tally.count(response.status_int)
        problem = checks.blazar_problem(response.status_int, response.text)
        self.assertIsNone(problem, '%s %s' % (request.method, path))
        self._note(request, response)
        return response

    def _note(self, request, response):
        """Keep the ids of what the answer says was created or deleted."""
        if response.status_int == 201 and request.path == ('leases',):
            lease = response.json['lease']
            self.answered['lease'].add(lease['id'])
            self.refs['lease'].append(lease['id'])
            self.refs['reservation'].extend(
                reservation['id'] for reservation in lease['reservations'])
        elif response.status_int == 201 and request.path[-1] == 'proposals':
            for proposal in response.json['proposals']:
                self.answered['proposal'].add(proposal['id'])
                self.refs['proposal'].append(proposal['id'])
        elif response.status_int == 204 and request.path[0] == 'leases':
            self.answered['lease'].discard(
                self.resolve.value(request.path[1]))

    def test_no_request_fails_or_half_creates(self):
        self._fuzz()
        self.addDetail('fuzz', testtools.content.text_content(
            self.tally.summary()))
        LOG.warning("%s", self.tally.summary())
        print(self.tally.summary())
        self.assertGreaterEqual(self.tally.total, fz.examples(EXAMPLES))
        self._check_whole()

    def test_the_listed_bad_inputs_are_bad_requests_or_not_found(self):
        """The careless client's 500s of issue 16, one by one."""
        depth = 5000
        for raw in (b'[' * depth + b']' * depth,
                    b'{"a": ' * depth + b'1' + b'}' * depth):
            response = self.send(MEMBER, fz.Request(
                'POST', ('leases',), [], fz.Raw(raw)))
            self.assertEqual((400, 'body'), (
                response.status_int,
                response.json['error_message'].split(':')[0]))
        for host in ('١٢', '²', str(2 ** 64), '9' * 5000):
            for path in (('os-hosts', host), ('os-hosts', host,
                                              'allocation')):
                self.assertEqual(404, self.send(ADMIN, fz.Request(
                    'GET', path, [], fz.NO_BODY)).status_int)
        body = {'name': 'big', 'start_date': '2027-01-11 10:00',
                'end_date': '2027-01-12 10:00', 'events': [],
                'reservations': [dict(SEEDS[0], min=2 ** 64, max='١٢')]}
        response = self.send(MEMBER, fz.Request('POST', ('leases',), [],
                                                body))
        self.assertEqual('reservations[0].min: must be at most 2147483647',
                         response.json['error_message'])
        body['reservations'][0]['min'] = 1
        response = self.send(MEMBER, fz.Request('POST', ('leases',), [],
                                                body))
        self.assertEqual((400, 'reservations[0].max'), (
            response.status_int,
            response.json['error_message'].split(':')[0]))

    def _fuzz(self):
        @fz.fuzz_settings(EXAMPLES)
        @given(REQUESTS)
        def run(generated):
            persona, request = generated
            self.send(persona, request)
        run()

    def _check_whole(self):
        """The DB holds what the answers said, each lease whole."""
        tables = {name: table for name, table in
                  models.Base.metadata.tables.items()}
        leases, reservations = tables['leases'], tables['reservations']
        allocations, proposals = (tables['host_allocations'],
                                  tables['proposals'])
        events = tables['events']
        with self.engine.connect() as conn:
            self.assertEqual(self.answered['lease'], set(conn.scalars(
                sa.select(leases.c.id))))
            # Proposals taken by a lease are deleted, so a subset.
            self.assertLessEqual(set(conn.scalars(sa.select(
                proposals.c.id))), self.answered['proposal'])
            self.assertEqual([], conn.execute(sa.select(leases.c.id).where(
                sa.select(sa.func.count()).where(
                    events.c.lease_id == leases.c.id).scalar_subquery() < 2)
            ).all(), 'leases without their start and end events')
            for name in ('reservations', 'events', 'lease_projects'):
                table = tables[name]
                self.assertEqual([], conn.execute(sa.select(table).where(
                    table.c.lease_id.not_in(sa.select(leases.c.id)))).all(),
                    '%s of no lease' % name)
            for table in (allocations, tables['floatingip_allocations']):
                self.assertEqual([], conn.execute(sa.select(table).where(
                    sa.or_(table.c.reservation_id.not_in(
                        sa.select(reservations.c.id)),
                        table.c.proposal_id.not_in(
                            sa.select(proposals.c.id))))).all(),
                    'bookings or holds of nothing')
            for name, resource_type in (('host_reservations', 'physical:host'),
                                        ('volume_reservations',
                                         'virtual:volume'),
                                        ('floatingip_reservations',
                                         'virtual:floatingip')):
                table = tables[name]
                self.assertEqual([], conn.execute(sa.select(
                    reservations.c.id).where(
                    reservations.c.resource_type == resource_type,
                    reservations.c.id.not_in(sa.select(
                        table.c.reservation_id)))).all(),
                    '%s reservations without their request' % resource_type)
