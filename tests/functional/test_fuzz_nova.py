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

"""Generated requests inside Nova's harness: server hints and the lease
API's calls into Nova.

Nova's API with the project's paste pipeline (the server middleware, the
lease API at ``/reservation``), its scheduler, conductor and fake
computes (:mod:`tests.functional.nova_base`). ``POST /servers`` gets
scheduler hints from :func:`tests.fuzz.strategies.reservation_hints`
(``reserved``, ``lease_params``, ``reservation``, ``proposal``,
``preemptible``), and now and then a body that is hardly one; the lease
API gets what needs Nova: a host's create (names Nova's own check
refuses, names of no host, hosts already reservable), a host's delete and
show by odd ids, a lease's delete, an instance-capacity lease's create
(its flavor and server group are made in Nova).

Every answer is checked by :mod:`tests.fuzz.checks` (Nova's fault body
on ``/servers``, Blazar's on the lease API). After the run nothing is
half-made: the servers Nova has are exactly those answered 202, less
those whose lease was deleted; every reserved one has its lease; every
lease of a server names a server that exists; the reservations' flavors
in Nova are exactly those of the capacity reservations there are.
"""

import datetime
import logging

import fixtures
from hypothesis import given
from hypothesis import strategies as st
import sqlalchemy as sa
import testtools.content

from db import models
from reservation_ext import clock as clock_mod
from reservation_ext.hosts import schemas as host_schemas
from reservation_ext.leases import schemas as lease_schemas
from reservation_ext.plugins import instance_capacity
from tests.functional import nova_base
from tests.fuzz import checks
from tests.fuzz import strategies as fz

LOG = logging.getLogger(__name__)
NOW = clock_mod.SYSTEM.now()
# Requests per CI run (times RESERVATION_FUZZ_SCALE).
EXAMPLES = 600
ADMIN = ('admin', 'admin,member,reader')
OWNER = (nova_base.OWNER, 'member,reader')
OTHER = (nova_base.OTHER, 'member,reader')
RESERVATIONS = st.builds(fz.Ref, st.just('reservation'), st.integers(0, 1))


def _server_requests():
    hints = fz.reservation_hints(NOW, RESERVATIONS)
    body = st.builds(lambda name, hints: {
        'server': {'name': name, 'imageRef': fz.Ref('image', 0),
                   'flavorRef': '1', 'networks': 'none'},
        'os:scheduler_hints': hints}, fz.NAMES, hints)
    return st.builds(fz.Request, st.just('POST'), st.just(('servers',)),
                     st.just([]), fz.weighted(
                         (8, body), (1, fz.mutated(body)),
                         (1, fz.raw_bodies())))


def _lease_api_requests():
    hosts = fz.segments('host', 2)
    names = fz.weighted(
        (1, st.sampled_from(('compute-2', 'compute-3', 'compute-9',
                             'compute-2 ', 'compute 2', 'compute-2/x',
                             '../compute-2', 'compute-2?x=1', '%2e%2e',
                             'x' * 256))),
        (1, fz.odd_text()),
        (1, fz.schema_bodies(host_schemas.CREATE['properties']['name'])))
    create = st.builds(lambda name, caps: dict(caps, name=name), names,
                       st.dictionaries(st.sampled_from(('gpu', 'rack')),
                                       fz.scalars(), max_size=1))
    capacity = st.builds(
        fz.Request, st.just('POST'),
        st.just(('reservation', 'v1', 'leases')), st.just([]),
        fz.bodies(fz.lease_bodies(NOW, {
            'virtual:instance': instance_capacity.SCHEMA}),
            lease_schemas.CREATE))
    return fz.weighted(
        (4, st.builds(fz.Request, st.just('POST'),
                      st.just(('reservation', 'v1', 'os-hosts')), st.just([]),
                      fz.bodies(create, host_schemas.CREATE))),
        (2, capacity),
        (2, st.builds(fz.Request, st.sampled_from(('GET', 'DELETE')),
                      st.tuples(st.just('reservation'), st.just('v1'),
                                st.just('os-hosts'), hosts), st.just([]),
                      st.just(fz.NO_BODY))),
        (1, st.builds(fz.Request, st.sampled_from(('GET', 'DELETE')),
                      st.tuples(st.just('reservation'), st.just('v1'),
                                st.just('leases'), fz.segments('lease', 4)),
                      st.just([]), st.just(fz.NO_BODY))))


REQUESTS = fz.weighted(
    (3, st.tuples(st.sampled_from((OWNER, OWNER, OTHER)),
                  _server_requests())),
    (1, st.tuples(st.sampled_from((ADMIN, ADMIN, OWNER)),
                  _lease_api_requests())))


class NovaFuzzTest(nova_base.NovaTestCase):
    """Nova with reservations never fails on what a careless client sends.

    It makes no server without its lease nor lease without its server.
    """

    def setUp(self):
        # Nova's database fixtures can deadlock in a native-threads process:
        # a service's state report (a writer outside any cell target, which
        # takes the database's write lock, then the cells' read lock) meets
        # a request that switches cells (the cells' write lock) while a
        # third thread in a cell target waits for that database lock. The
        # hundreds of boots here made it happen: the services report only
        # after the test, and count as up meanwhile.
        self.flags(report_interval=3600, service_down_time=7200)
        self.useFixture(fixtures.MonkeyPatch(
            'nova.servicegroup.api.INITIAL_REPORTING_DELAY', 3600))
        super().setUp()
        self.resolve = fz.Resolver('host', 'lease', 'reservation',
                                   'proposal', 'image')
        self.refs = self.resolve.known
        self.refs['image'].append(self._build_server()['imageRef'])
        self.tally = checks.Tally("Nova's harness")
        self.servers = {}
        for name in ('compute-2', 'compute-3'):
            self.refs['host'].append(self.add_reservable_host(name)['id'])
        lease = self.lease_api('POST', '/leases', {
            'name': 'hosts', 'start_date': 'now',
            'end_date': nova_base.lease_date(NOW + datetime.timedelta(
                days=1)),
            'reservations': [{'resource_type': 'physical:host', 'min': 1,
                              'max': 1}], 'events': []})['lease']
        self.refs['lease'].append(lease['id'])
        self.refs['reservation'].append(lease['reservations'][0]['id'])
        self.refs['proposal'].extend(
            proposal['id'] for proposal in self.lease_api(
                'POST', '/leases/proposals', {
                    'reservations': [{'resource_type': 'virtual:instance',
                                      'vcpus': 1, 'memory_mb': 512,
                                      'disk_gb': 1}],
                    'duration': '1h', 'count': 2})['proposals'])

    def send(self, persona, request):
        project, roles = persona
        path = self.resolve.path(request.path)
        # What keystonemiddleware sets, and what Nova's harness reads.
        headers = {'X-User-Id': 'user-' + project, 'X-Project-Id': project,
                   'X-Auth-User': 'user-' + project,
                   'X-Auth-Project-Id': project, 'X-Roles': roles,
                   'X-Auth-Token': 'token',
                   'Content-Type': 'application/json'}
        body = (None if request.body is fz.NO_BODY
                else fz.encode(request.body, self.resolve))
        if request.path[0] == 'servers':
            headers['X-OpenStack-Nova-API-Version'] = self.microversion
            headers['OpenStack-API-Version'] = 'compute ' + self.microversion
            url = '%s/v2.1/%s' % (nova_base.NOVA_URL, path)
        else:
            url = '%s/%s' % (nova_base.NOVA_URL, path)
        response = self.api.request(url, request.method, body, headers)
        self.tally.count(response.status_code)
        check = (checks.service_problem if request.path[0] == 'servers'
                 else checks.blazar_problem)
        self.assertIsNone(check(response.status_code, response.text),
                          '%s %s %r' % (request.method, url, body[:300]
                                        if body else body))
        self._note(request, path, response)

    def _note(self, request, path, response):
        if request.path[0] == 'servers' and response.status_code == 202:
            server_id = response.json()['server']['id']
            lease_id = self._own_lease(server_id)
            self.servers[server_id] = lease_id
            if lease_id:
                self.refs['lease'].append(lease_id)
        elif request.method == 'DELETE' and response.status_code == 204 \
                and request.path[2] == 'leases':
            lease_id = path.rsplit('/', 1)[1]
            self.servers = {server: lease for server, lease in
                            self.servers.items() if lease != lease_id}

    def _own_lease(self, server_id):
        """The id of the lease made for the server (none for a seat's)."""
        lease_id = self.lease_id_of({'id': server_id})
        if lease_id is None:
            return None
        [reservation] = self.admin_lease_api('GET', '/leases/' + lease_id)[
            'lease']['reservations']
        return lease_id if reservation.get('server_id') == server_id else None

    def test_a_host_name_nova_refuses_is_a_bad_request_naming_it(self):
        for name in ('compute 2', 'compute-2/x', '../compute-2', 'ü'):
            response = self.lease_api('POST', '/os-hosts', {'name': name},
                                      project='admin',
                                      roles='admin,member,reader',
                                      expect=400)
            self.assertTrue(response['error_message'].startswith('name: '),
                            response)
            self.assertNotIn('os-hypervisors', response['error_message'])

    def test_no_request_fails_or_half_creates(self):
        @fz.fuzz_settings(EXAMPLES)
        @given(REQUESTS)
        def run(generated):
            self.send(*generated)
        run()
        self.addDetail('fuzz', testtools.content.text_content(
            self.tally.summary()))
        LOG.warning('%s', self.tally.summary())
        print(self.tally.summary())
        self.assertGreaterEqual(self.tally.total, fz.examples(EXAMPLES))
        self._check_whole()

    def _check_whole(self):
        in_nova = {server['id'] for server in self.admin_api.get_servers(
            detail=False, search_opts={'all_tenants': 1})}
        self.assertEqual(set(self.servers), in_nova,
                         'servers not answered 202, or 202 but missing')
        instances = models.InstanceReservation.__table__
        reservations = models.Reservation.__table__
        with self.database.engine.connect() as conn:
            leased = dict(conn.execute(sa.select(
                instances.c.server_id, reservations.c.lease_id).join(
                reservations,
                reservations.c.id == instances.c.reservation_id).where(
                instances.c.server_id.is_not(None))).all())
        self.assertLessEqual(set(leased), in_nova,
                             'leases of servers that do not exist')
        self.assertEqual(
            {server: lease for server, lease in self.servers.items()
             if lease}, {server: leased.get(server)
                         for server, lease in self.servers.items() if lease},
            'reserved servers without their lease')
        self._check_flavors()

    def _check_flavors(self):
        """Nova has the flavor of each capacity reservation, and no other."""
        instances = models.InstanceReservation.__table__
        with self.database.engine.connect() as conn:
            capacity = set(conn.scalars(sa.select(
                instances.c.reservation_id).where(
                    instances.c.server_id.is_(None))))
        flavors = {flavor['id'] for flavor in self.admin_api.api_get(
            '/flavors?is_public=None').body['flavors']
            if flavor['name'].startswith('reservation-')}
        self.assertEqual(capacity, flavors,
                         'capacity reservations and their flavors differ')
