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

"""What a preemptible server may expect, in its metadata, in Nova's harness.

``reservation:reclaim_after`` is computed in the views by the server
middleware from the bookings of the server's host (never stored, never
set by a user): when the engine reclaims the server at the latest, its
host's next booking start less the lead time (600 s) and the cleaning
time. Real nova-api, conductor, scheduler and fake computes; compute-2,
compute-3 and compute-4 are reservable, compute-1 is not.
"""

import datetime
import json

from reservation_ext import clock as clock_mod
from tests import fixtures
from tests.functional import nova_base

MINUTE = datetime.timedelta(minutes=1)
HOUR = datetime.timedelta(hours=1)
LEAD = 600 * datetime.timedelta(seconds=1)
HOST_KEY = 'OS-EXT-SRV-ATTR:hypervisor_hostname'
RECLAIM_AFTER = 'reservation:reclaim_after'
USERS = {'role': 'batch'}
RESERVABLE = ('compute-2', 'compute-3', 'compute-4')


def shown(moment):
    return moment.strftime('%Y-%m-%dT%H:%M:%SZ')


class ReclaimAfterTest(nova_base.NovaTestCase):

    def setUp(self):
        super().setUp()
        for name in RESERVABLE:
            self.add_reservable_host(name)
        self.now = clock_mod.SYSTEM.now().replace(second=0, microsecond=0)
        self.api = self.user_api(nova_base.OTHER)
        self.preemptible = self._create_flavor(
            memory_mb=1024, vcpu=1, disk=1, ephemeral=0,
            extra_spec={'reservation:preemptible': 'true'})

    def boot(self, flavor=None, hints=None, name='spot'):
        """An ACTIVE preemptible server of OTHER; its admin view."""
        request = {'server': dict(self._build_server(
            name=name, flavor_id=flavor or self.preemptible,
            networks='none'), metadata=USERS)}
        if hints:
            request['os:scheduler_hints'] = hints
        server = self._wait_for_state_change(
            self.api.post_server(request), 'ACTIVE')
        return self.admin_api.get_server(server['id'])

    def lease_host(self, host, start, name='hpc'):
        """A lease of ``host`` for an hour from ``start``."""
        return self.lease_one_host(name, host, nova_base.lease_date(start),
                                   nova_base.lease_date(start + HOUR))

    def request(self, method, path, body=None, status=(200,), api=None):
        response = (api or self.api).api_request(
            path, method=method, check_response_status=list(status),
            body=None if body is None else json.dumps(body),
            headers={'Content-Type': 'application/json'})
        return response.json() if response.content else None

    def metadata_of(self, server_id, api=None):
        return self.request('GET', '/servers/%s' % server_id,
                            api=api)['server']['metadata']

    def test_a_preemptible_server_shows_when_it_is_reclaimed_at_latest(
            self):
        server = self.boot()
        start = self.now + 3 * HOUR
        self.lease_host(server[HOST_KEY], start)
        expected = dict(USERS, **{RECLAIM_AFTER: shown(start - LEAD)})
        self.assertEqual(expected, self.metadata_of(server['id']))
        [listed] = self.api.get_servers()
        self.assertEqual((expected, False),
                         (listed['metadata'], RECLAIM_AFTER in listed))
        # The administrator sees the server, and so its fate.
        self.assertEqual(expected, self.admin_api.get_server(
            server['id'])['metadata'])
        # Nothing is stored: Nova's metadata API has the user's keys.
        self.assertEqual({'metadata': USERS}, self.request(
            'GET', '/servers/%s/metadata' % server['id']))

    def test_an_earlier_booking_on_its_host_moves_the_time_earlier(self):
        server = self.boot()
        self.lease_host(server[HOST_KEY], self.now + 3 * HOUR)
        sooner = self.now + HOUR
        self.lease_host(server[HOST_KEY], sooner, name='sooner')
        self.assertEqual(shown(sooner - LEAD), self.metadata_of(
            server['id'])[RECLAIM_AFTER])

    def test_the_cleaning_time_comes_before_the_lead_time(self):
        self.flags(cleaning_time=15, group='reservation')
        server = self.boot()
        start = self.now + 3 * HOUR
        self.lease_host(server[HOST_KEY], start)
        self.assertEqual(shown(start - LEAD - 15 * MINUTE),
                         self.metadata_of(server['id'])[RECLAIM_AFTER])

    def test_a_server_on_a_host_with_nothing_booked_shows_no_key(self):
        server = self.boot()
        other_host = [name for name in RESERVABLE
                      if name != server[HOST_KEY]][0]
        self.lease_host(other_host, self.now + 3 * HOUR)
        self.assertEqual(USERS, self.metadata_of(server['id']))

    def test_a_reserved_server_before_a_later_booking_shows_no_key(self):
        # Not preemptible, even on a preemptible flavor: it has a lease
        # of its own, which ends before that booking.
        server = self._wait_for_state_change(self.api.post_server({
            'server': dict(self._build_server(
                name='mine', flavor_id=self.preemptible, networks='none'),
                metadata=USERS),
            'os:scheduler_hints': {
                'reserved': 'True', 'lease_params': json.dumps({
                    'start': 'now', 'end': nova_base.lease_date(
                        self.now + 2 * HOUR)})}}), 'ACTIVE')
        host = self.admin_api.get_server(server['id'])[HOST_KEY]
        self.assertIn(host, RESERVABLE)
        self.lease_host(host, self.now + 3 * HOUR)
        metadata = self.metadata_of(server['id'])
        self.assertEqual(('reservation:end', 'reservation:lease_id', 'role'),
                         tuple(sorted(metadata)))

    def test_setting_or_deleting_the_key_is_400_naming_it(self):
        server = self.boot()
        self.lease_host(server[HOST_KEY], self.now + 3 * HOUR)
        path = '/servers/%s/metadata' % server['id']
        for method, where, body, field in (
                ('POST', path, {'metadata': {RECLAIM_AFTER: 'x'}},
                 'metadata.' + RECLAIM_AFTER),
                ('PUT', path + '/' + RECLAIM_AFTER,
                 {'meta': {RECLAIM_AFTER: 'x'}}, 'metadata.' + RECLAIM_AFTER),
                ('DELETE', path + '/' + RECLAIM_AFTER, None,
                 'metadata.' + RECLAIM_AFTER),
                ('POST', '/servers', {'server': dict(
                    self._build_server(name='vm2', networks='none'),
                    metadata={RECLAIM_AFTER: 'x'})},
                 'server.metadata.' + RECLAIM_AFTER)):
            error = self.request(method, where, body, status=(400,))
            self.assertIn(field + ': is shown from the bookings',
                          json.dumps(error), (method, where))
        self.assertEqual({'metadata': USERS}, self.request('GET', path))

    def test_another_project_never_sees_the_key_of_a_server_it_cannot_see(
            self):
        server = self.boot()
        self.lease_host(server[HOST_KEY], self.now + 3 * HOUR)
        owner = self.user_api(nova_base.OWNER)
        self.request('GET', '/servers/%s' % server['id'], status=(404,),
                     api=owner)
        self.assertEqual([], owner.get_servers())

    def test_the_server_list_shows_every_key_in_a_few_queries(self):
        ordinary = self._create_flavor(memory_mb=1024, vcpu=1, disk=1,
                                       ephemeral=0)
        servers = [self.boot(name='spot%d' % k) for k in range(2)]
        # Preemptible by its hint rather than its flavor.
        servers.append(self.boot(flavor=ordinary, name='hinted',
                                 hints={'preemptible': 'true'}))
        start = self.now + 3 * HOUR
        for name in {server[HOST_KEY] for server in servers}:
            self.assertIn(name, RESERVABLE)
            self.lease_host(name, start, name=name)
        statements = self.useFixture(fixtures.Statements(
            self.database.engine))
        listed = self.api.get_servers()
        # One read of the leases, one of the bookings ahead, for the
        # page.
        reads = statements.reading('host_allocations')
        self.assertEqual(2, len(reads), reads)
        self.assertEqual(
            {server['id']: dict(USERS, **{RECLAIM_AFTER: shown(start - LEAD)})
             for server in servers},
            {server['id']: server['metadata'] for server in listed})
