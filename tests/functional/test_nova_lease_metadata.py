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

"""A server's lease in its metadata, in Nova's harness.

``reservation:lease_id`` and ``reservation:end`` are computed in the
views by the server middleware (what ``openstack server show`` and
``server list --long`` print as ``properties``), never stored, never
set by a user, and shown only to who may show the lease; the metadata is
the only place where a view shows the lease (see
:mod:`tests.functional.test_nova_server_view_schemas`).
"""

import datetime
import json

from nova import context as nova_context
from nova import objects

from reservation_ext import clock as clock_mod
from reservation_ext import dates
from tests import fixtures
from tests.functional import nova_base

SECOND = datetime.timedelta(seconds=1)
HOUR = datetime.timedelta(hours=1)
LEASE_ID = 'reservation:lease_id'
END = 'reservation:end'
USERS = {'role': 'web'}


class LeaseMetadataTest(nova_base.NovaTestCase):

    def setUp(self):
        super().setUp()
        self.api = self.user_api(nova_base.OWNER)
        self.now = clock_mod.SYSTEM.now().replace(second=0, microsecond=0)
        self.end = self.now + 2 * HOUR

    def request(self, method, path, body=None, status=(200,), api=None):
        """Call Nova as ``api`` (the owner's member); the JSON answer."""
        response = (api or self.api).api_request(
            path, method=method, check_response_status=list(status),
            body=None if body is None else json.dumps(body),
            headers={'Content-Type': 'application/json'})
        return response.json() if response.content else None

    def leased(self, start='now', metadata=USERS, name='vm1'):
        """A server leased from ``start`` to ``self.end``."""
        request = {'server': dict(
            self._build_server(name=name, networks='none'),
            metadata=dict(metadata)),
            'os:scheduler_hints': {
                'reserved': 'True', 'lease_params': json.dumps({
                    'start': start,
                    'end': dates.format_date(self.end)})}}
        return self.api.post_server(request)

    def metadata_of(self, server_id, api=None):
        return self.request('GET', '/servers/%s' % server_id,
                            api=api)['server']['metadata']

    def lease_of(self, server):
        """The id of the owner's lease of ``server``, from the lease API."""
        [lease_id] = [
            lease['id'] for lease in self.lease_api('GET', '/leases')[
                'leases']
            if lease['reservations'][0].get('server_id') == server['id']]
        return lease_id

    def expected(self, lease_id, metadata=USERS):
        return dict(metadata, **{LEASE_ID: lease_id,
                                 END: self.end.strftime('%Y-%m-%dT%H:%M:%SZ')})

    def test_a_leased_server_shows_its_lease_in_its_metadata(self):
        server = self._wait_for_state_change(self.leased(), 'ACTIVE')
        lease_id = self.lease_of(server)
        lease = self.lease_api('GET', '/leases/' + lease_id)['lease']
        self.assertEqual(dates.format_date(self.end), lease['end_date'])
        expected = self.expected(lease_id)
        self.assertEqual(expected, self.metadata_of(server['id']))
        [detailed] = self.api.get_servers()
        # In the metadata only: Nova's schema has no key of ours.
        self.assertEqual((expected, False),
                         (detailed['metadata'], LEASE_ID in detailed))
        # A rename and a rebuild answer with the server's view.
        renamed = self.request('PUT', '/servers/%s' % server['id'],
                               {'server': {'name': 'renamed'}})['server']
        self.assertEqual(expected, renamed['metadata'])
        rebuilt = self.request(
            'POST', '/servers/%s/action' % server['id'],
            {'rebuild': {'imageRef': server['image']['id'],
                         'metadata': USERS}}, status=(202,))['server']
        self.assertEqual(expected, rebuilt['metadata'])
        self._wait_for_state_change(server, 'ACTIVE')
        # Nothing is stored: Nova's record, and its metadata API, have
        # the user's keys only.
        self.assertEqual(USERS, self._get_instance_metadata(server['id']))
        self.assertEqual({'metadata': USERS}, self.request(
            'GET', '/servers/%s/metadata' % server['id']))

    def _get_instance_metadata(self, server_id):
        instance = objects.Instance.get_by_uuid(
            nova_context.get_admin_context(), server_id,
            expected_attrs=['metadata'])
        return dict(instance.metadata)

    def test_a_reserved_server_shows_its_lease_and_a_plain_one_none(self):
        self.add_reservable_host('compute-2')
        later = dates.format_date(self.now + HOUR)
        reserved = self._wait_for_state_change(
            self.leased(start=later), 'RESERVED')
        plain = self._wait_for_state_change(self.api.post_server({
            'server': dict(self._build_server(name='plain',
                                              networks='none'),
                           metadata=USERS)}), 'ACTIVE')
        shown = {server['id']: server['metadata']
                 for server in self.api.get_servers()}
        self.assertEqual({reserved['id']: self.expected(
                              self.lease_of(reserved)),
                          plain['id']: USERS}, shown)

    def test_metadata_naming_a_lease_key_is_400_and_changes_nothing(self):
        server = self._wait_for_state_change(self.leased(), 'ACTIVE')
        path = '/servers/%s/metadata' % server['id']
        for method, where, body, field in (
                ('POST', path, {'metadata': {'tier': 'gold', END: 'x'}},
                 'metadata.reservation:end'),
                ('PUT', path, {'metadata': {LEASE_ID: 'x'}},
                 'metadata.reservation:lease_id'),
                ('PUT', path + '/' + END, {'meta': {END: 'x'}},
                 'metadata.reservation:end'),
                ('DELETE', path + '/' + LEASE_ID, None,
                 'metadata.reservation:lease_id'),
                ('POST', '/servers/%s/action' % server['id'],
                 {'rebuild': {'imageRef': server['image']['id'],
                              'metadata': {END: 'x'}}},
                 'rebuild.metadata.reservation:end'),
                ('POST', '/servers', {'server': dict(
                    self._build_server(name='vm2', networks='none'),
                    metadata={LEASE_ID: 'x'})},
                 'server.metadata.reservation:lease_id')):
            error = self.request(method, where, body, status=(400,))
            self.assertIn(field + ': is shown from the lease',
                          json.dumps(error), (method, where))
        expected = self.expected(self.lease_of(server))
        self.assertEqual(expected, self.metadata_of(server['id']))
        self.assertEqual([server['id']],
                         [listed['id'] for listed in self.api.get_servers()])
        # The user's own keys are the user's; the lease's stay.
        self.request('POST', path, {'metadata': {'tier': 'gold'}})
        self.assertEqual(dict(expected, tier='gold'),
                         self.metadata_of(server['id']))
        self.request('PUT', path, {'metadata': {}})
        self.assertEqual(self.expected(self.lease_of(server), {}),
                         self.metadata_of(server['id']))

    def test_only_who_may_show_the_lease_sees_it(self):
        self.add_reservable_host('compute-2')
        lease = self.lease_api('POST', '/leases', {
            'name': 'shared', 'start_date': 'now',
            'end_date': dates.format_date(self.end),
            'projects': [nova_base.OTHER],
            'reservations': [{'resource_type': 'virtual:instance',
                              'vcpus': 1, 'memory_mb': 512, 'disk_gb': 1,
                              'amount': 1, 'affinity': 'False',
                              'resource_properties': ''}]})['lease']
        self.run_engine(at=clock_mod.SYSTEM.now() + SECOND)
        flavor_id = self.lease_api('GET', '/leases/' + lease['id'])[
            'lease']['reservations'][0]['flavor_id']
        other = self.user_api(nova_base.OTHER)
        server = self._wait_for_state_change(other.post_server({
            'server': dict(self._build_server(
                name='seated', flavor_id=flavor_id, networks='none'),
                metadata=USERS)}), 'ACTIVE')
        # The project the lease is shared with may not show the lease:
        # its server's views say nothing of it.
        for view in (other.get_server(server['id']),
                     other.get_servers()[0]):
            self.assertEqual((USERS, None),
                             (view['metadata'], view.get(LEASE_ID)))
        self.assertEqual({'metadata': USERS}, self.request(
            'GET', '/servers/%s/metadata' % server['id'], api=other))
        self.lease_api('GET', '/leases/' + lease['id'],
                       project=nova_base.OTHER, expect=404)
        # The administrator sees it.
        shown = self.admin_api.get_server(server['id'])
        self.assertEqual((self.expected(lease['id']), False),
                         (shown['metadata'], LEASE_ID in shown))

    def test_the_server_list_reads_the_leases_db_once_per_page(self):
        servers = [self._wait_for_state_change(
            self.leased(name='vm%d' % k), 'ACTIVE') for k in range(3)]
        statements = self.useFixture(fixtures.Statements(
            self.database.engine))
        listed = self.api.get_servers()
        reads = statements.reading('instance_reservations')
        self.assertEqual(1, len(reads), reads)
        self.assertEqual(
            {server['id']: self.expected(self.lease_of(server))
             for server in servers},
            {server['id']: server['metadata'] for server in listed})
