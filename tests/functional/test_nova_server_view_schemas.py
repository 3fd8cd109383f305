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

"""Our server views against Nova's documented schemas, in Nova's harness.

Strict clients (tempest, and Blazar's scenario tests through it) validate
every server answer against Nova's response schemas, which allow no key
outside them: a leased server, a RESERVED one and one on an
instance-capacity reservation's seat show their lease in ``metadata``
only. Each view is checked with tempest's schemas and check
(:mod:`tests.tempest_schemas`) at every microversion at which tempest's
schema changes, up to Nova's newest.
"""

import datetime
import json

from nova.api.openstack import api_version_request
from tempest.lib import exceptions as tempest_exc

from reservation_ext import clock as clock_mod
from reservation_ext import dates
from reservation_ext.leases import metadata as lease_metadata
from tests.functional import nova_base
from tests import tempest_schemas

SECOND = datetime.timedelta(seconds=1)
HOUR = datetime.timedelta(hours=1)
NEWEST = api_version_request.max_api_version().get_string()
MICROVERSIONS = tempest_schemas.microversions(tempest_schemas.SERVERS,
                                              '2.1', NEWEST)
USERS = {'role': 'web'}


class ServerViewSchemaTest(nova_base.NovaTestCase):
    """A leased, a RESERVED and a seated server of the owner's project."""

    def setUp(self):
        super().setUp()
        self.add_reservable_host('compute-2')
        self.add_reservable_host('compute-3')
        self.api = self.user_api(nova_base.OWNER)
        now = clock_mod.SYSTEM.now().replace(second=0, microsecond=0)
        self.end = now + 2 * HOUR
        self.answers = {}
        self.leases = {}
        self.servers = {
            'leased': self.leased('leased', 'now', 'ACTIVE'),
            'reserved': self.leased('reserved', dates.format_date(
                now + HOUR), 'RESERVED'),
            'seated': self.seated()}

    def leased(self, name, start, state):
        """A server with a lease of its own; its create's answer kept."""
        answer = self.request(self.api, 'POST', '/servers', {
            'server': dict(self._build_server(name=name, networks='none'),
                           metadata=USERS),
            'os:scheduler_hints': {'reserved': 'True', 'lease_params': (
                json.dumps({'name': name, 'start': start,
                            'end': dates.format_date(self.end)}))}},
            status=202)
        self.answers[name] = answer
        self.leases[name] = self.lease_named(name)
        return self._wait_for_state_change(answer['server'], state)['id']

    def seated(self):
        """A server on the seat of an instance-capacity reservation."""
        lease = self.lease_api('POST', '/leases', {
            'name': 'seats', 'start_date': 'now',
            'end_date': dates.format_date(self.end),
            'reservations': [{'resource_type': 'virtual:instance',
                              'vcpus': 1, 'memory_mb': 512, 'disk_gb': 1,
                              'amount': 1, 'affinity': 'False',
                              'resource_properties': ''}]})['lease']
        self.run_engine(at=clock_mod.SYSTEM.now() + SECOND)
        self.leases['seated'] = lease['id']
        flavor_id = self.lease_api('GET', '/leases/' + lease['id'])[
            'lease']['reservations'][0]['flavor_id']
        answer = self.request(self.api, 'POST', '/servers', {
            'server': dict(self._build_server(
                name='seated', flavor_id=flavor_id, networks='none'),
                metadata=USERS)}, status=202)
        self.answers['seated'] = answer
        return self._wait_for_state_change(answer['server'], 'ACTIVE')['id']

    def lease_named(self, name):
        [lease] = [lease for lease in self.lease_api('GET', '/leases')[
            'leases'] if lease['name'] == name]
        return lease['id']

    def request(self, api, method, path, body=None, status=200):
        response = api.api_request(
            path, method=method, check_response_status=[status],
            body=None if body is None else json.dumps(body),
            headers={'Content-Type': 'application/json'})
        return response.json()

    def valid(self, schema, body, status=200):
        """Assert tempest finds ``body`` valid by ``schema``."""
        try:
            tempest_schemas.validate(schema, status, body)
        except tempest_exc.InvalidHTTPResponseBody as exc:
            self.fail('%s: %s' % (self.api.microversion, exc))

    def assert_lease_in_metadata(self, name, server):
        self.assertEqual(
            (self.leases[name], self.end.strftime(lease_metadata.END_FORMAT),
             USERS['role']),
            (server['metadata'].get(lease_metadata.LEASE_ID),
             server['metadata'].get(lease_metadata.END),
             server['metadata'].get('role')),
            (self.api.microversion, name))

    def test_each_view_of_the_three_servers_is_valid_at_every_microversion(
            self):
        for microversion in MICROVERSIONS:
            schema = tempest_schemas.compute_schema(microversion)
            for api in (self.api, self.admin_api):
                api.microversion = microversion
                for name, server_id in self.servers.items():
                    shown = self.request(api, 'GET', '/servers/' + server_id)
                    self.valid(schema.get_server, shown)
                    self.assert_lease_in_metadata(name, shown['server'])
                    self.assertEqual(name == 'reserved',
                                     shown['server']['status'] == 'RESERVED')
                detailed = self.request(api, 'GET', '/servers/detail')
                self.valid(schema.list_servers_detail, detailed)
                names = {server_id: name
                         for name, server_id in self.servers.items()}
                for server in detailed['servers']:
                    self.assert_lease_in_metadata(names[server['id']],
                                                  server)
                self.valid(schema.list_servers,
                           self.request(api, 'GET', '/servers'))

    def test_the_create_and_rename_answers_are_valid_as_tempest_expects(
            self):
        schemas = tempest_schemas.COMPUTE_BASE
        # A server built later has no password: Nova's create answer
        # without one.
        self.valid(schemas.create_server, self.answers['reserved'], 202)
        for name in ('leased', 'seated'):
            self.valid(schemas.create_server_with_admin_pass,
                       self.answers[name], 202)
        # A RESERVED server cannot be renamed (409) until it is built.
        for microversion in MICROVERSIONS:
            self.api.microversion = microversion
            for name in ('leased', 'seated'):
                server_id = self.servers[name]
                renamed = self.request(
                    self.api, 'PUT', '/servers/' + server_id,
                    {'server': {'name': name + '-' + microversion}})
                self.valid(tempest_schemas.compute_schema(
                    microversion).update_server, renamed)
                self.assert_lease_in_metadata(name, renamed['server'])

    def test_a_key_of_ours_beside_metadata_would_fail_tempest(self):
        # The check above can fail: the same views with a top-level key
        # of ours are refused, naming it.
        for microversion in (MICROVERSIONS[0], MICROVERSIONS[-1]):
            self.api.microversion = microversion
            schema = tempest_schemas.compute_schema(microversion)
            for server_id in self.servers.values():
                shown = self.request(self.api, 'GET',
                                     '/servers/' + server_id)
                shown['server'][lease_metadata.LEASE_ID] = 'x'
                error = self.assertRaises(
                    tempest_exc.InvalidHTTPResponseBody,
                    tempest_schemas.validate, schema.get_server, 200, shown)
                self.assertIn("'%s' was unexpected" % lease_metadata.LEASE_ID,
                              str(error))
