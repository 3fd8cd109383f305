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

"""The authorization table's Nova rows, inside Nova's functional harness.

The owner's world: a host lease (compute-2 and compute-3, ACTIVE, shared
with ``shared-project``) with a server booted on it, a RESERVED server
(booked on compute-1 for later), a schedule proposal, and the reservable
floating IPs and storage pools of a real Neutron and Cinder
(:mod:`tests.neutron_service`, :mod:`tests.cinder_service`). Each persona
calls the lease API and the compute API as the harness's stubbed
keystonemiddleware takes identities (:mod:`tests.nova_auth`); requests
without a token go to a second copy of the same api-paste.ini pipelines,
loaded with the real keystonemiddleware (its test fixture stands in for
Keystone's token validation), which must refuse them all.
"""

import datetime
import functools
import json
import time

import fixtures as fixtures_lib
from keystonemiddleware import auth_token
from keystonemiddleware import fixture as ksm_fixture
from nova.api import wsgi as nova_wsgi
from nova import policy as nova_policy
from oslo_utils.fixture import uuidsentinel
import requests
from wsgi_intercept import interceptor

from reservation_ext import dates
from reservation_ext import policy
from reservation_ext.sandbox.neutron import topology
from tests.authz import table
from tests import cinder_service
from tests.functional import nova_base
from tests import neutron_service

# Taken before Nova's harness stubs it.
REAL_AUTH_TOKEN = auth_token.filter_factory
ANONYMOUS_URL = 'http://%s:80' % uuidsentinel.anonymous_osapi_host
HOUR = datetime.timedelta(hours=1)
DAY = datetime.timedelta(days=1)
PREFIX = {table.LEASE_API: '/reservation/v1', table.COMPUTE: '/v2.1',
          table.BOOT: '/v2.1'}
# The storage pools of the real Cinder that the calls share, and the one
# registered and removed again for the calls that use one up.
SHARED_POOL = cinder_service.pool_name('gold')
SPARE_POOL = cinder_service.pool_name('silver')
# Bounds of the waits for a server (a hang guard).
WAIT = 60
POLL = 0.1


class NovaWorld:
    """The owner's resources, and fresh ones for the calls that use one up.

    ``test`` is the :class:`AuthorizationTest` that made it.
    """

    def __init__(self, test):
        self.test = test
        self.now = test.now
        self._windows = 0
        self._segments = 0
        self._floatingips = 0
        host_lease = test.owner_lease('hpc', test.start, test.end, {
            'min': 2, 'max': 2,
            'resource_properties': '["=", "$gpu", "true"]'},
            projects=[table.SHARED_PROJECT])
        test.run_engine(test.start + datetime.timedelta(minutes=1))
        self.lease_id = host_lease['id']
        self.host_reservation_id = host_lease['reservations'][0]['id']
        self.host_id = test.host('compute-1')['id']
        self.flavor = test._create_flavor(memory_mb=512, vcpu=1, disk=1,
                                          ephemeral=0)

    # The owner's resources that the calls share, made when first named.

    @functools.cached_property
    def _reserved(self):
        return self._new_reserved_server()

    @functools.cached_property
    def _leased(self):
        return self._new_leased_server()

    @functools.cached_property
    def _proposal(self):
        return self._new_proposal()

    def _window(self, base):
        """A window of an hour after ``base``, new at each call."""
        self._windows += 1
        start = base + self._windows * HOUR
        return start, start + HOUR

    # The lease API

    def lease_body(self):
        start, end = self._window(self.now + 20 * DAY)
        return {'name': 'lease-%d' % self._windows,
                'start_date': nova_base.lease_date(start),
                'end_date': nova_base.lease_date(end),
                'reservations': [self._one_host()]}

    def fresh_lease(self):
        body = self.lease_body()
        return self.test.call_as(table.PERSONAS[1], table.LEASE_API, 'POST',
                                 '/leases', body, expect=201)['lease']['id']

    def propose_body(self):
        return {'reservations': [self._one_host()], 'duration': '1h',
                'count': 1, 'not_before': dates.format_date(
                    self.now + 40 * DAY)}

    def availability_path(self):
        return '/availability?resource_type=physical:host&end=%s' % (
            dates.format_date(self.now + 2 * DAY))

    @staticmethod
    def _one_host():
        return {'resource_type': 'physical:host', 'min': 1, 'max': 1,
                'resource_properties': '["=", "$gpu", "false"]'}

    def spare_host(self, reservable):
        """compute-4, made reservable or not: its id, or its name."""
        host = self.test.host('compute-4')
        if reservable and host is None:
            host = self.test.add_reservable_host('compute-4')
        if not reservable and host is not None:
            self.test.admin_lease_api('DELETE', '/os-hosts/%s' % host['id'])
        return host['id'] if reservable else 'compute-4'

    # Network segments

    def segment_body(self):
        """A VXLAN segment not registered yet."""
        self._segments += 1
        return {'network_type': 'vxlan', 'segment_id': self._segments}

    @functools.cached_property
    def _segment(self):
        return self._new_segment()

    def segment(self, fresh):
        """The id of the shared segment, or of a new one (``fresh``)."""
        return self._new_segment() if fresh else self._segment

    def _new_segment(self):
        return self.test.admin_lease_api('POST', '/networks',
                                         self.segment_body())['network']['id']

    # Reservable floating IPs (of the real Neutron's network public)

    def floatingip_body(self):
        """An address of ``public`` not registered yet."""
        self._floatingips += 1
        return {'floating_network_id': self.test.neutron.public_network_id,
                'floating_ip_address': topology.outside_pool(
                    self._floatingips)}

    @functools.cached_property
    def _floatingip(self):
        return self._new_floatingip()

    def floatingip(self, fresh):
        """The id of the shared floating IP, or of a new one (``fresh``)."""
        return self._new_floatingip() if fresh else self._floatingip

    def _new_floatingip(self):
        return self.test.admin_lease_api(
            'POST', '/floatingips', self.floatingip_body())['floatingip'][
                'id']

    # Reservable storage pools (of the real Cinder's)

    def storage_pool_body(self):
        """The spare pool, made unregistered."""
        for pool in self.test.admin_lease_api('GET', '/storage-pools')[
                'storage_pools']:
            if pool['name'] == SPARE_POOL:
                self.test.admin_lease_api('DELETE',
                                          '/storage-pools/' + pool['id'])
        return {'name': SPARE_POOL}

    @functools.cached_property
    def _storage_pool(self):
        return self.test.admin_lease_api('POST', '/storage-pools', {
            'name': SHARED_POOL})['storage_pool']['id']

    def storage_pool(self, fresh):
        """The id of the shared pool, or (``fresh``) of the spare one anew."""
        if not fresh:
            return self._storage_pool
        return self.test.admin_lease_api(
            'POST', '/storage-pools',
            self.storage_pool_body())['storage_pool']['id']

    # Servers

    def reserved_server(self, own):
        return self._new_reserved_server() if own else self._reserved

    def leased_server(self, own):
        return self._new_leased_server() if own else self._leased

    def start_call(self, own):
        server_id = self.reserved_server(own)
        return table.Call('POST', '/servers/%s/action' % server_id, {
            'os-reservation-start': {'lease_id': self.test.lease_of(
                server_id)}}, server_id)

    def flavor_call(self):
        return table.Call('POST', '/servers/%s/action' % self._reserved, {
            'os-reservation-flavor': {
                'lease_id': self.test.lease_of(self._reserved),
                'flavor_id': self.flavor}}, self._reserved)

    def reservation_boot(self):
        return self._boot({'reservation': self.host_reservation_id},
                          self.host_reservation_id)

    def proposal_boot(self, own):
        proposal_id = self._new_proposal() if own else self._proposal
        return self._boot({'reserved': 'True', 'proposal': proposal_id},
                          proposal_id)

    def _boot(self, hints, target):
        return table.Call('POST', '/servers', {
            'server': self.test._build_server(networks='none'),
            'os:scheduler_hints': hints}, target)

    def _new_reserved_server(self):
        start, end = self._window(self.test.start + HOUR)
        call = self._boot({'reserved': 'True', 'lease_params': json.dumps({
            'start': dates.format_date(start),
            'end': dates.format_date(end)})}, None)
        call.body['server']['flavorRef'] = self.flavor
        return self.test.boot_as(table.PERSONAS[1], call, 'RESERVED')

    def _new_leased_server(self):
        return self.test.boot_as(table.PERSONAS[1], self.reservation_boot(),
                                 'ACTIVE')

    def _new_proposal(self):
        return self.test.call_as(
            table.PERSONAS[1], table.LEASE_API, 'POST', '/leases/proposals',
            {'reservations': [{'resource_type': 'virtual:instance',
                               'vcpus': 1, 'memory_mb': 512, 'disk_gb': 1}],
             'duration': '1h', 'count': 1,
             'not_before': dates.format_date(self.now + 10 * DAY)},
            expect=201)['proposals'][0]['id']


class AuthorizationTest(nova_base.GpuHostsTestCase):
    """Every Nova row of the authorization table, for every persona."""

    def setUp(self):
        super().setUp()
        # As oslo.policy's default (Placement's fixture turns it off for
        # the process): the deprecated rules would let readers write.
        self.flags(enforce_new_defaults=True, group='oslo_policy')
        nova_policy.reset()
        nova_policy.init(suppress_deprecation_warnings=True)
        policy.reset()
        # Every persona that may delete or start a server gets one.
        self.flags(instances=100, cores=200, ram=10 ** 6, group='quota')
        self.anonymous_app = self._load_with_real_keystonemiddleware()
        self.neutron = self.useFixture(neutron_service.NeutronFixture())
        self.useFixture(cinder_service.CinderFixture())
        self.world = NovaWorld(self)

    def _load_with_real_keystonemiddleware(self):
        """The api-paste.ini pipelines with the real auth_token filter."""
        self.useFixture(ksm_fixture.AuthTokenFixture())
        self.flags(www_authenticate_uri='http://keystone.invalid/identity',
                   group='keystone_authtoken')
        with fixtures_lib.MonkeyPatch(
                'keystonemiddleware.auth_token.filter_factory',
                REAL_AUTH_TOKEN):
            app = nova_wsgi.Loader().load_app('osapi_compute')
        intercept = interceptor.RequestsInterceptor(lambda: app,
                                                    url=ANONYMOUS_URL)
        intercept.install_intercept()
        self.addCleanup(intercept.uninstall_intercept)
        return app

    # Calls as a persona

    def send(self, persona, api, call):
        """Make ``call`` as ``persona``: ``(outcome, text)``."""
        if persona.project is None:
            response = requests.request(
                call.method, ANONYMOUS_URL + PREFIX[api] + call.path,
                json=call.body)
            return response.status_code, response.text
        response = self._request(persona, api, call.method, call.path,
                                 call.body)
        if api == table.BOOT and response.status_code == 202:
            return self._settled(response.json()['server']['id'])
        if api == table.COMPUTE and call.method == 'POST' and (
                response.status_code == 202):
            self._wait_idle(call.target)
        return response.status_code, response.text

    def call_as(self, persona, api, method, path, body=None, expect=None):
        response = self._request(persona, api, method, path, body)
        self.assertEqual(expect, response.status_code, response.text)
        return response.json() if response.content else None

    def boot_as(self, persona, call, state):
        """Boot as ``persona``; the server's id once it is in ``state``."""
        server = self.call_as(persona, table.BOOT, call.method, call.path,
                              call.body, expect=202)['server']
        self.assertEqual((state, ''), self._settled(server['id']))
        return server['id']

    def _request(self, persona, api, method, path, body):
        headers = {'X-Auth-Token': 'token-' + persona.user,
                   'X-Roles': ','.join(persona.roles)}
        if api == table.LEASE_API:
            headers.update({'X-User-Id': persona.user,
                            'X-Project-Id': persona.project})
        else:
            headers.update({'X-Auth-User': persona.user,
                            'X-Auth-Project-Id': persona.project,
                            'OpenStack-API-Version': 'compute latest'})
        return requests.request(method, nova_base.NOVA_URL + PREFIX[api] +
                                path, json=body, headers=headers)

    def _server(self, server_id):
        return self.admin_api.api_get('/servers/%s' % server_id,
                                      check_response_status=[200, 404]).body

    def _settled(self, server_id):
        """A new server's state once it left BUILD, and its fault."""
        deadline = time.monotonic() + WAIT
        while time.monotonic() < deadline:
            server = self._server(server_id)['server']
            if server['status'] != 'BUILD':
                return server['status'], server.get('fault', {}).get(
                    'message', '')
            time.sleep(POLL)
        self.fail('server %s still building after %ss' % (server_id, WAIT))

    def _wait_idle(self, server_id):
        deadline = time.monotonic() + WAIT
        while time.monotonic() < deadline:
            found = self._server(server_id)
            if 'server' not in found or found['server'][
                    'OS-EXT-STS:task_state'] is None:
                return
            time.sleep(POLL)
        self.fail('server %s still busy after %ss' % (server_id, WAIT))

    # The owner's resources

    def owner_lease(self, name, start, end, reservation, projects=None):
        body = {'name': name, 'start_date': nova_base.lease_date(start),
                'end_date': nova_base.lease_date(end),
                'reservations': [dict(reservation,
                                      resource_type='physical:host')]}
        if projects:
            body['projects'] = projects
        return self.call_as(table.PERSONAS[1], table.LEASE_API, 'POST',
                            '/leases', body, expect=201)['lease']

    def host(self, name):
        for host in self.admin_lease_api('GET', '/os-hosts')['hosts']:
            if host['hypervisor_hostname'] == name:
                return host
        return None

    def lease_of(self, server_id):
        return self._server(server_id)['server']['metadata'][
            'reservation:lease_id']

    # The table

    def assert_rows(self, rows):
        cells, problems = table.run(rows, self.world, self.send)
        self.assertEqual([], problems, '%d of %d cells' % (len(problems),
                                                           cells))
        # What the others tried on the owner's servers changed nothing.
        self.assertEqual('RESERVED', self._server(self.world.reserved_server(
            False))['server']['status'])
        self.assertEqual('ACTIVE', self._server(self.world.leased_server(
            False))['server']['status'])

    def test_the_lease_api_answers_each_persona_as_the_table_says(self):
        self.assert_rows([row for row in table.rows('nova')
                          if row.api == table.LEASE_API])

    def test_reserved_and_leased_servers_answer_as_the_table_says(self):
        self.assert_rows([row for row in table.rows('nova')
                          if row.api == table.COMPUTE])

    def test_boots_with_the_owners_hints_go_as_the_table_says(self):
        self.assert_rows([row for row in table.rows('nova')
                          if row.api == table.BOOT])
