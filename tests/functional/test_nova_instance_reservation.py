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

"""Server reservation through ``POST /servers`` hints, in Nova's harness.

Real nova-api with the server middleware, conductor, scheduler with
ReservationFilter, Placement and fake computes; the engine's actions run
through the real Nova API (:meth:`NovaTestCase.run_engine`).
"""

import datetime
import json

from nova.tests.functional.api import client

from reservation_ext import dates
from tests.functional import nova_base

HOUR = datetime.timedelta(hours=1)
LEASE_KEY = 'reservation:lease_id'


def _hints(start, end, **params):
    return {'reserved': 'True', 'lease_params': json.dumps(dict(
        params, start=dates.format_date(start),
        end=dates.format_date(end)))}


class InstanceReservationTest(nova_base.NovaTestCase):

    def setUp(self):
        super().setUp()
        self.api_user = self.user_api(nova_base.OWNER)
        self.start = (datetime.datetime.utcnow() + HOUR).replace(
            microsecond=0)
        self.end = self.start + HOUR
        # Two fit a host's 8192 MB less Nova's reserve of 512 MB.
        self.flavor = self._create_flavor(memory_mb=3840, vcpu=1, disk=1,
                                          ephemeral=0)

    def reserve(self, name='vm1', flavor=None, **params):
        """A RESERVED server, booked from ``self.start`` to ``self.end``."""
        server = self.post_server(_hints(self.start, self.end, **params),
                                  name=name, flavor=flavor)
        return self._wait_for_state_change(server, 'RESERVED')

    def post_server(self, hints, name='vm1', flavor=None, expect=None):
        request = {'server': self._build_server(
            name=name, flavor_id=flavor or self.flavor, networks='none')}
        if hints is not None:
            request['os:scheduler_hints'] = hints
        if expect is None:
            return self.api_user.post_server(request)
        error = self.assertRaises(client.OpenStackApiException,
                                  self.api_user.post_server, request)
        self.assertEqual(expect, error.response.status_code,
                         error.response.text)
        return error.response.json()

    def leases(self):
        return self.lease_api('GET', '/leases')['leases']

    def servers(self):
        return self.api_user.get_servers()

    def lease_of(self, server):
        return self.lease_api('GET', '/leases/' + self.lease_id_of(server))[
            'lease']

    def admin_server(self, server):
        return self.admin_api.get_server(server['id'])

    def test_future_lease_is_reserved_then_built_on_its_booked_host(self):
        self.add_reservable_host('compute-2')
        server = self.reserve()
        lease = self.lease_of(server)
        [reservation] = lease['reservations']
        self.assertEqual(('virtual:instance', server['id'], 'compute-2', 1,
                          3840, 1),
                         tuple(reservation[key] for key in (
                             'resource_type', 'server_id', 'host', 'vcpus',
                             'memory_mb', 'disk_gb')))
        # Every view with a status shows it RESERVED (the plain list has
        # none); it holds nothing in Placement.
        [listed] = self.api_user.api_get('/servers').body['servers']
        self.assertEqual({'id', 'name', 'links'}, set(listed))
        [detailed] = self.servers()
        for view in (detailed, self.api_user.get_server(server['id'])):
            self.assertEqual(('RESERVED', lease['id']),
                             (view['status'], view['metadata'][LEASE_KEY]))
        self.assertEqual({}, self._get_allocations_by_server_uuid(
            server['id']))
        self.run_engine(at=self.start + datetime.timedelta(seconds=1))
        server = self._wait_for_state_change(server, 'ACTIVE')
        self.assertEqual('compute-2',
                         self.admin_server(server)['OS-EXT-SRV-ATTR:host'])
        self.assertEqual(lease['id'], server['metadata'][LEASE_KEY])
        self.assertIn(self._get_provider_uuid_by_host('compute-2'),
                      self._get_allocations_by_server_uuid(server['id']))
        self.assertEqual('ACTIVE', self.lease_of(server)['status'])
        # A started server's lease extends on its host.
        self.lease_api('PUT', '/leases/' + lease['id'], {
            'end_date': dates.format_date(self.end + HOUR)})
        self.assertEqual('compute-2', self.lease_of(server)[
            'reservations'][0]['host'])

    def propose(self, count=2):
        return self.lease_api('POST', '/leases/proposals', {
            'reservations': [{'resource_type': 'virtual:instance',
                              'vcpus': 1, 'memory_mb': 3840, 'disk_gb': 1}],
            'duration': '1h', 'count': count,
            'not_before': dates.format_date(self.start)})['proposals']

    def test_a_proposal_gives_a_reserved_server_its_window_and_host(self):
        self.add_reservable_host('compute-2')
        proposals = self.propose()
        self.assertEqual(
            [dates.format_date(self.start + k * HOUR) for k in (0, 1)],
            [proposal['start_date'] for proposal in proposals])
        server = self.post_server({'reserved': 'True',
                                   'proposal': proposals[1]['id']})
        server = self._wait_for_state_change(server, 'RESERVED')
        lease = self.lease_of(server)
        [reservation] = lease['reservations']
        self.assertEqual(
            (proposals[1]['start_date'], proposals[1]['end_date'],
             'compute-2'),
            (lease['start_date'], lease['end_date'], reservation['host']))
        # Taking one proposal released the other.
        error = self.post_server({'reserved': 'True',
                                  'proposal': proposals[0]['id']},
                                 name='vm2', expect=404)
        self.assertIn('Proposal %s could not be found' % proposals[0]['id'],
                      json.dumps(error))

    def test_a_proposal_sets_the_window_that_lease_params_cannot(self):
        self.add_reservable_host('compute-2')
        [proposal] = self.propose(count=1)
        error = self.post_server(
            {'reserved': 'True', 'proposal': proposal['id'],
             'lease_params': json.dumps({'start': 'now'})}, expect=400)
        self.assertIn('lease_params.start: cannot be combined with the '
                      'proposal hint', json.dumps(error))
        self.assertEqual([], self.servers())

    def test_snapshot_delete_at_end(self):
        self.add_reservable_host('compute-2')
        server = self.reserve(on_end='snapshot_delete')
        # Its lease, read before the end deletes the server.
        self.lease_id_of(server)
        self.run_engine(at=self.start + datetime.timedelta(seconds=1))
        self.run_engine(at=self.end + datetime.timedelta(seconds=1))
        self._wait_until_deleted(server)
        [image] = [image for image in self.glance.detail(None)
                   if image['name'] == 'vm1-snapshot']
        self.assertEqual(server['id'],
                         image['properties'].get('instance_uuid'))
        self.assertEqual('TERMINATED', self.lease_of(server)['status'])

    def test_actions_on_a_reserved_server_are_409(self):
        self.add_reservable_host('compute-2')
        server = self.reserve()
        for action in ({'reboot': {'type': 'SOFT'}}, {'pause': None},
                       {'resize': {'flavorRef': '1'}}):
            error = self.assertRaises(
                client.OpenStackApiException, self.api_user.post_server_action,
                server['id'], action)
            self.assertEqual(409, error.response.status_code)
            self.assertIn('is reserved', error.response.text)
        # Only the reservation service (a service user or an admin)
        # starts it.
        error = self.assertRaises(
            client.OpenStackApiException, self.api_user.post_server_action,
            server['id'], {'os-reservation-start': {
                'lease_id': self.lease_id_of(server)}})
        self.assertEqual(403, error.response.status_code)
        self.assertEqual('RESERVED', self.api_user.get_server(
            server['id'])['status'])

    def test_a_service_user_starts_a_reserved_server(self):
        self.add_reservable_host('compute-2')
        server = self.reserve()
        engine = client.TestOpenStackClient(
            'reservation', self.api_fixture.base_url, project_id='service',
            roles=['service'])
        engine.post_server_action(server['id'], {'os-reservation-start': {
            'lease_id': self.lease_id_of(server)}})
        server = self._wait_for_state_change(server, 'ACTIVE')
        self.assertEqual('compute-2', server['OS-EXT-SRV-ATTR:host'])

    def test_no_room_is_409_and_creates_nothing(self):
        # compute-1 has 8192 MB of RAM (ratio 1.0), 7680 once Nova's
        # reserve is kept: two 3840 MB servers.
        self.add_reservable_host('compute-1')
        self.reserve(name='a')
        self.reserve(name='b')
        fault = self.post_server(_hints(self.start, self.end), name='c',
                                 expect=409)
        self.assertIn('No reservable host has 1 vCPU(s), 3840 MB',
                      fault['conflictingRequest']['message'])
        self.assertEqual(['a', 'b'],
                         sorted(server['name'] for server in self.servers()))
        self.assertEqual(2, len(self.leases()))
        # After the others' window there is room again.
        self.post_server(_hints(self.end, self.end + HOUR), name='later')

    def test_bad_hints_are_400_and_create_nothing(self):
        past = datetime.datetime.utcnow() - HOUR
        for hints, field in (
                ({'reserved': 'maybe'}, 'reserved'),
                ({'reserved': 'True', 'lease_params': '{not json'},
                 'lease_params'),
                ({'reserved': 'True', 'lease_params': '{"colour": 1}'},
                 'lease_params.colour'),
                ({'reserved': 'True', 'lease_params': '{"start": "soon"}'},
                 'lease_params.start'),
                (_hints(self.end, self.start), 'lease_params.end'),
                (_hints(past, self.end), 'lease_params.start'),
                ({'reserved': 'True', 'lease_params': '{"duration": "0"}'},
                 'lease_params.duration'),
                ({'reserved': 'True',
                  'lease_params': json.dumps({'name': 'x' * 300})},
                 'lease_params.name')):
            fault = self.post_server(hints, expect=400)
            self.assertTrue(fault['badRequest']['message'].startswith(
                field + ':'), (hints, fault))
        self.assertEqual([], self.servers())
        self.assertEqual([], self.leases())

    def test_seed_line_starts_now_in_the_shared_pool(self):
        # Without fill_gaps; test_nova_gap_filling has the gaps of
        # reservable hosts.
        self.flags(fill_gaps=False, group='reservation')
        self.add_reservable_host('compute-2')
        server = self.post_server({
            'reserved': 'True', 'lease_params': json.dumps({
                'name': 'lease1', 'start': 'now', 'end': '2027-12-1 16:07'})})
        server = self._wait_for_state_change(server, 'ACTIVE')
        self.assertNotEqual('compute-2',
                            self.admin_server(server)['OS-EXT-SRV-ATTR:host'])
        lease = self.lease_of(server)
        self.assertEqual('lease1', lease['name'])
        self.assertEqual('2027-12-01T16:07:00.000000', lease['end_date'])
        self.assertEqual(server['id'], lease['reservations'][0]['server_id'])
        self.assertTrue(lease['reservations'][0]['shared_pool'])
        # Deleting the server deletes its lease.
        self._delete_server(server)
        self.assertEqual([], self.leases())

    def test_deleting_the_lease_before_start_deletes_the_server(self):
        self.add_reservable_host('compute-2')
        server = self.reserve()
        self.lease_api('DELETE', '/leases/' + self.lease_id_of(server))
        self._wait_until_deleted(server)
        self.assertEqual([], self.servers())

    def test_deleting_a_reserved_server_deletes_its_lease(self):
        self.add_reservable_host('compute-2')
        server = self.reserve()
        self._delete_server(server)
        self.assertEqual([], self.leases())

    def test_reserve_all_instances(self):
        self.flags(reserve_all_instances=True, group='reservation')
        server = self._wait_for_state_change(self.post_server(None),
                                             'ACTIVE')
        [lease] = self.leases()
        self.assertEqual(lease['id'], server['metadata'][LEASE_KEY])
        self.assertEqual('vm1-' + server['id'], lease['name'])

    def test_lease_update_rebooks_the_server(self):
        # compute-1 has room for two 3840 MB servers at a time.
        self.add_reservable_host('compute-1')
        server = self.reserve(name='a')
        self.reserve(name='b')
        later = self.end + HOUR
        self.post_server(_hints(self.end, later), name='c')
        # Extended, a's window would overlap both b and c: the planner
        # counts the slices overlapping a window together, 3 x 3840 MB.
        body = {'end_date': dates.format_date(later)}
        answer = self.lease_api('PUT', '/leases/' + self.lease_id_of(server),
                                body, expect=409)
        # c starts where a ends: a cannot be extended at all.
        self.assertIn('The lease can be extended until %s at the latest.'
                      % self.end.strftime('%Y-%m-%d %H:%M'),
                      answer['error_message'])
        self.lease_api('PUT', '/leases/' + self.lease_id_of(server), {
            'start_date': dates.format_date(later),
            'end_date': dates.format_date(later + HOUR)})
        lease = self.lease_of(server)
        self.assertEqual(dates.format_date(later), lease['start_date'])
        self.assertEqual('compute-1', lease['reservations'][0]['host'])
        self.assertEqual('RESERVED', self.api_user.get_server(
            server['id'])['status'])

    def test_shelve_at_end_with_openstackclient_hints(self):
        self.add_reservable_host('compute-2')
        hints = _hints(self.start, self.end, on_end='shelve')
        request = {'server': self._build_server(
            name='vm1', flavor_id=self.flavor, networks='none'),
            'OS-SCH-HNT:scheduler_hints': hints}
        server = self._wait_for_state_change(
            self.api_user.post_server(request), 'RESERVED')
        self.run_engine(at=self.start + datetime.timedelta(seconds=1))
        self._wait_for_state_change(server, 'ACTIVE')
        self.run_engine(at=self.end + datetime.timedelta(seconds=1))
        self._wait_for_state_change(server, 'SHELVED_OFFLOADED')
        self.assertEqual({}, self._get_allocations_by_server_uuid(
            server['id']))

    def test_a_host_is_never_leased_whole_and_booked_for_servers(self):
        self.add_reservable_host('compute-2')
        server = self.reserve()
        host_request = {
            'name': 'whole', 'start_date': dates.format_date(
                self.start - HOUR / 2),
            'end_date': dates.format_date(self.start + HOUR / 2),
            'reservations': [{'resource_type': 'physical:host', 'min': 1,
                              'max': 1, 'hosts': ['compute-2']}]}
        self.lease_api('POST', '/leases', host_request, expect=409)
        # Once the host is leased whole, no server is booked on it.
        self.lease_api('DELETE', '/leases/' + self.lease_id_of(server))
        self.lease_api('POST', '/leases', host_request)
        fault = self.post_server(_hints(self.start, self.end), expect=409)
        self.assertIn('No reservable host', fault['conflictingRequest'][
            'message'])

    def test_reserved_alone_lasts_the_default_duration_then_deletes(self):
        before = datetime.datetime.utcnow()
        server = self._wait_for_state_change(
            self.post_server({'reserved': 'True'}), 'ACTIVE')
        lease = self.lease_of(server)
        end = datetime.datetime.fromisoformat(lease['end_date'])
        start = datetime.datetime.fromisoformat(lease['start_date'])
        self.assertEqual(datetime.timedelta(days=30), end - start)
        self.assertLessEqual(before, start)
        self.assertEqual('delete', lease['reservations'][0]['on_end'])
        self.run_engine(at=start + datetime.timedelta(seconds=1))
        self.run_engine(at=end + datetime.timedelta(seconds=1))
        self._wait_until_deleted(server)
        self.assertEqual('TERMINATED', self.lease_of(server)['status'])

    # Lease updates that change the server's flavor.

    def change_flavor(self, server, flavor_id, expect=None):
        lease = self.lease_of(server)
        return self.lease_api('PUT', '/leases/' + lease['id'], {
            'reservations': [{'id': lease['reservations'][0]['id'],
                              'flavor_id': flavor_id}]}, expect=expect)

    def test_a_reserved_servers_flavor_changes_with_its_lease(self):
        self.add_reservable_host('compute-2')
        server = self.reserve()
        bigger = self._create_flavor(memory_mb=2048, vcpu=2, disk=2,
                                     ephemeral=0)
        lease = self.change_flavor(server, bigger)['lease']
        [reservation] = lease['reservations']
        self.assertEqual((bigger, 2, 2048, 2), tuple(
            reservation[key] for key in ('flavor_id', 'vcpus', 'memory_mb',
                                         'disk_gb')))
        self.assertEqual('PENDING', lease['status'])
        shown = self.api_user.get_server(server['id'])
        self.assertEqual(('RESERVED', 2, 2048),
                         (shown['status'], shown['flavor']['vcpus'],
                          shown['flavor']['ram']))
        self.run_engine(at=self.start + datetime.timedelta(seconds=1))
        server = self._wait_for_state_change(server, 'ACTIVE')
        self.assertEqual(2, server['flavor']['vcpus'])
        [allocation] = self._get_allocations_by_server_uuid(
            server['id']).values()
        self.assertEqual(2, allocation['resources']['VCPU'])

    def test_a_flavor_that_does_not_exist_changes_nothing(self):
        self.add_reservable_host('compute-2')
        server = self.reserve()
        lease = self.lease_of(server)
        answer = self.change_flavor(server, 'no-such-flavor', expect=400)
        self.assertIn('reservations[0].flavor_id', answer['error_message'])
        self.assertEqual(lease, self.lease_of(server))

    def test_a_built_servers_flavor_is_novas_to_resize(self):
        server = self._wait_for_state_change(self.post_server(
            {'reserved': 'True'}), 'ACTIVE')
        lease = self.lease_of(server)
        other = self._create_flavor(memory_mb=2048, vcpu=2, disk=1,
                                    ephemeral=0)
        answer = self.change_flavor(server, other, expect=400)
        self.assertIn('reservations[0].flavor_id: server %s is built '
                      'already' % server['id'], answer['error_message'])
        self.assertEqual(lease, self.lease_of(server))

    def test_a_flavor_over_novas_quota_is_403_and_changes_nothing(self):
        self.add_reservable_host('compute-2')
        server = self.reserve()
        lease = self.lease_of(server)
        self.admin_api.update_quota({'cores': 2},
                                    project_id=nova_base.OWNER)
        bigger = self._create_flavor(memory_mb=2048, vcpu=4, disk=1,
                                     ephemeral=0)
        answer = self.change_flavor(server, bigger, expect=403)
        # Nova's quotas over the lease's window refuse it before anything
        # changes (see test_nova_window_quotas).
        self.assertEqual(
            ('ComputeQuotaExceeded', 'Quota exceeded for cores: Requested '
             '4, but already used 0 of 2 cores'),
            (answer['error_name'], answer['error_message']))
        after = self.lease_of(server)
        self.assertEqual((lease['status'], lease['reservations']),
                         (after['status'], after['reservations']))
        self.assertEqual(1, self.api_user.get_server(
            server['id'])['flavor']['vcpus'])
