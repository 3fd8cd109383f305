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

"""Instance-capacity reservations in Nova's harness.

The lease API and the boots with the reservation's flavor go through the
real nova-api (with the server middleware), scheduler (with
ReservationFilter), Placement and fake computes; the engine's start and
end act through the real Nova API (:meth:`NovaTestCase.run_engine`).
compute-2 and compute-3 (10 vCPUs, 8192 MB each) are reservable.
"""

import datetime

from nova.tests.functional.api import client

from db import api as db_api
from reservation_ext import clock as clock_mod
from reservation_ext import conf as conf_mod
from reservation_ext import context
from reservation_ext import dates
from reservation_ext.leases import notification_schema
from reservation_ext.leases import notifications
from reservation_ext.leases import views
from reservation_ext import plugins as plugins_mod
from reservation_ext.store import instance_reservations as store_instances
from tests.functional import nova_base
from tests import payloads

SECOND = datetime.timedelta(seconds=1)
HOUR = datetime.timedelta(hours=1)


class InstanceCapacityTest(nova_base.NovaTestCase):

    def setUp(self):
        super().setUp()
        self.now = clock_mod.SYSTEM.now().replace(microsecond=0)
        self.add_reservable_host('compute-2')
        self.add_reservable_host('compute-3')

    def create_lease(self, reservation, start='now', hours=2,
                     name='capacity', body_projects=(), **kwargs):
        body = {'name': name, 'start_date': start,
                'end_date': dates.format_date(
                    self.now + hours * HOUR),
                'reservations': [reservation],
                'projects': list(body_projects)}
        return self.lease_api('POST', '/leases', body, **kwargs)

    def capacity(self, amount=2, affinity='False', **kwargs):
        """A virtual:instance request as python-blazarclient sends it."""
        return dict({'resource_type': 'virtual:instance', 'vcpus': 1,
                     'memory_mb': 512, 'disk_gb': 1, 'amount': amount,
                     'affinity': affinity, 'resource_properties': ''},
                    **kwargs)

    def started(self, reservation, **kwargs):
        """A lease of ``reservation`` that starts now, started."""
        lease = self.create_lease(reservation, **kwargs)['lease']
        self.run_engine(at=clock_mod.SYSTEM.now() + SECOND)
        return self.lease_api('GET', '/leases/' + lease['id'])['lease']

    def post(self, flavor_id, project=nova_base.OWNER, expect=None,
             hints=None, **server):
        request = {'server': dict(self._build_server(
            flavor_id=flavor_id, networks='none'), **server)}
        if hints:
            request['os:scheduler_hints'] = hints
        api = self.user_api(project)
        if expect is None:
            return api.post_server(request)
        error = self.assertRaises(client.OpenStackApiException,
                                  api.post_server, request)
        self.assertEqual(expect, error.response.status_code,
                         error.response.text)
        return error.response.text

    def boot(self, flavor_id, project=nova_base.OWNER, **server):
        return self._wait_for_state_change(
            self.post(flavor_id, project=project, **server), 'ACTIVE')

    def host_of(self, server):
        return self.admin_api.get_server(server['id'])[
            'OS-EXT-SRV-ATTR:host']

    def test_a_blazar_body_is_booked_and_shown_as_blazar_shows_it(self):
        lease = self.create_lease(self.capacity(), start=(
            dates.format_date(self.now + HOUR)))['lease']
        [reservation] = lease['reservations']
        self.assertEqual(
            ('virtual:instance', 2, 1, 512, 1, False, '', reservation['id']),
            tuple(reservation[key] for key in (
                'resource_type', 'amount', 'vcpus', 'memory_mb', 'disk_gb',
                'affinity', 'resource_properties', 'flavor_id')))
        hosts = self.admin_lease_api('GET', '/os-hosts')['hosts']
        booked = [self.admin_lease_api(
            'GET', '/os-hosts/%s/allocation' % host['id'])['allocation']
            for host in hosts]
        self.assertEqual(2, sum(len(allocation['reservations'])
                                for allocation in booked))
        self.lease_api('DELETE', '/leases/' + lease['id'])
        self.lease_api('GET', '/leases/' + lease['id'], expect=404)

    def flavor(self, flavor_id, project='admin'):
        """The flavor as ``project`` sees it (None when it cannot)."""
        api = self.admin_api if project == 'admin' else self.user_api(project)
        response = api.api_get('/flavors/%s' % flavor_id,
                               check_response_status=False)
        return response.body['flavor'] if response.status == 200 else None

    def group(self, group_id):
        response = self.admin_api.api_get('/os-server-groups/%s' % group_id,
                                          check_response_status=False)
        return response.body['server_group'] if response.status == 200 \
            else None

    def test_the_flavor_and_group_exist_from_the_creation_as_in_blazar(self):
        lease = self.create_lease(self.capacity(amount=2, affinity='False'),
                                  start=dates.format_date(self.now + HOUR),
                                  body_projects=[nova_base.OTHER])['lease']
        [reservation] = lease['reservations']
        flavor = self.flavor(reservation['flavor_id'], nova_base.OWNER)
        self.assertEqual((1, 512, 1, False), (
            flavor['vcpus'], flavor['ram'], flavor['disk'],
            flavor['os-flavor-access:is_public']))
        self.assertIsNotNone(self.flavor(reservation['flavor_id'],
                                         nova_base.OTHER))
        group = self.group(reservation['server_group_id'])
        self.assertEqual(('anti-affinity', nova_base.OWNER),
                         (group['policy'], group['project_id']))
        self.lease_api('DELETE', '/leases/' + lease['id'])
        self.assertIsNone(self.flavor(reservation['flavor_id']))
        self.assertIsNone(self.group(reservation['server_group_id']))

    def test_without_affinity_there_is_a_flavor_and_no_group(self):
        lease = self.create_lease(self.capacity(affinity=None), start=(
            dates.format_date(self.now + HOUR)))['lease']
        [reservation] = lease['reservations']
        self.assertIsNone(reservation['server_group_id'])
        self.assertIsNotNone(self.flavor(reservation['flavor_id']))

    def test_a_refused_booking_leaves_no_flavor_and_no_group(self):
        groups = self.admin_api.api_get(
            '/os-server-groups?all_projects=True').body['server_groups']
        flavors = self.admin_api.api_get('/flavors?is_public=None').body[
            'flavors']
        self.create_lease(self.capacity(amount=17, affinity=True),
                          expect=409)
        self.assertEqual(groups, self.admin_api.api_get(
            '/os-server-groups?all_projects=True').body['server_groups'])
        self.assertEqual(flavors, self.admin_api.api_get(
            '/flavors?is_public=None').body['flavors'])

    def test_a_new_size_before_the_start_makes_the_flavor_anew(self):
        lease = self.create_lease(self.capacity(amount=1), start=(
            dates.format_date(self.now + HOUR)))['lease']
        [reservation] = lease['reservations']
        self.lease_api('PUT', '/leases/' + lease['id'], {'reservations': [
            {'id': reservation['id'], 'vcpus': 2, 'memory_mb': 1024}]})
        flavor = self.flavor(reservation['flavor_id'])
        self.assertEqual((2, 1024), (flavor['vcpus'], flavor['ram']))
        # The group stays the one made at the creation.
        groups = self.admin_api.api_get(
            '/os-server-groups?all_projects=True').body['server_groups']
        self.assertEqual([reservation['server_group_id']],
                         [group['id'] for group in groups])
        self.assertEqual(reservation['id'], self.admin_api.api_get(
            '/flavors/%s/os-extra_specs' % reservation['flavor_id']).body[
                'extra_specs']['reservation:id'])

    def test_the_group_hint_of_blazar_users_works_for_the_leases_projects(
            self):
        lease = self.started(self.capacity(amount=2, affinity='True'),
                             body_projects=[nova_base.OTHER])
        [reservation] = lease['reservations']
        group_id = reservation['server_group_id']
        servers = [self.boot(reservation['flavor_id'], project=project,
                             hints={'group': group_id})
                   for project in (nova_base.OWNER, nova_base.OTHER)]
        self.assertEqual({server['id'] for server in servers},
                         set(self.group(group_id)['members']))
        self.assertEqual(1, len({self.host_of(server)
                                 for server in servers}))

    def test_a_group_hint_naming_another_group_is_refused(self):
        lease = self.started(self.capacity(amount=1, affinity='True'))
        [reservation] = lease['reservations']
        other = self.user_api(nova_base.OWNER).post_server_groups(
            {'name': 'mine', 'policy': 'affinity'})
        error = self.post(reservation['flavor_id'], expect=400,
                          hints={'group': other['id']})
        self.assertIn('group: a server booted with the flavor of '
                      'reservation %s joins its server group %s' % (
                          reservation['id'], reservation['server_group_id']),
                      error)

    def test_a_reservation_made_without_its_flavor_gets_it_at_the_start(
            self):
        # As one of an older release left it: it made them at the start.
        lease = self.create_lease(self.capacity(amount=1, affinity='True'))[
            'lease']
        [reservation] = lease['reservations']
        self.admin_api.api_delete('/flavors/%s' % reservation['flavor_id'])
        self.admin_api.api_delete('/os-server-groups/%s'
                                  % reservation['server_group_id'])
        with db_api.writer(context.get_admin_context(),
                           clock_mod.SYSTEM) as session:
            store_instances.set_server_group(session, reservation['id'], None)
        self.run_engine(at=clock_mod.SYSTEM.now() + SECOND)
        [started] = self.lease_api('GET', '/leases/' + lease['id'])[
            'lease']['reservations']
        self.assertEqual('affinity', self.group(
            started['server_group_id'])['policy'])
        self.boot(started['flavor_id'])

    def test_bad_requests_name_the_field_and_create_nothing(self):
        for changes, field in (({'amount': ''}, 'amount'),
                               ({'amount': 0}, 'amount'),
                               ({'affinity': 'maybe'}, 'affinity'),
                               ({'vcpus': 'two'}, 'vcpus'),
                               ({'resource_properties': '["=", "$gpu"'},
                                'resource_properties')):
            error = self.create_lease(self.capacity(**changes), expect=400)
            self.assertIn('reservations[0].%s' % field,
                          error['error_message'])
        # 17 x 512 MB is more than the 8192 MB of one host.
        error = self.create_lease(self.capacity(amount=17, affinity=True),
                                  expect=409)
        self.assertIn('on one host', error['error_message'])
        self.assertEqual([], self.lease_api('GET', '/leases')['leases'])

    def test_servers_boot_with_the_flavor_on_their_seats_up_to_amount(self):
        lease = self.started(self.capacity(amount=2, affinity='False'))
        [reservation] = lease['reservations']
        flavor_id = reservation['flavor_id']
        self.assertEqual('ACTIVE', lease['status'])
        self.assertIsNotNone(reservation['server_group_id'])
        flavor = self.admin_api.api_get('/flavors/%s' % flavor_id).body[
            'flavor']
        self.assertEqual((1, 512, 1, False),
                         (flavor['vcpus'], flavor['ram'], flavor['disk'],
                          flavor['os-flavor-access:is_public']))
        servers = [self.boot(flavor_id) for _ in range(2)]
        # Anti-affinity: one seat on each reservable host.
        self.assertEqual({'compute-2', 'compute-3'},
                         {self.host_of(server) for server in servers})
        error = self.post(flavor_id, expect=409)
        self.assertIn('All 2 instances of reservation %s are in use'
                      % reservation['id'], error)
        # Deleting a server frees its seat.
        freed = self.host_of(servers[0])
        self._delete_server(servers[0])
        self.assertEqual(freed, self.host_of(self.boot(flavor_id)))

    def test_a_seated_server_shows_its_lease_and_its_delete_keeps_it(self):
        lease = self.started(self.capacity(amount=2))
        server = self.boot(lease['reservations'][0]['flavor_id'])
        shown = self.api.get_server(server['id'])
        self.assertEqual(lease['id'],
                         shown['metadata']['reservation:lease_id'])
        self.assertEqual('ACTIVE', shown['status'])
        self._delete_server(server)
        self.assertEqual('ACTIVE', self.lease_api(
            'GET', '/leases/' + lease['id'])['lease']['status'])

    def test_another_project_learns_nothing_of_the_flavor(self):
        lease = self.started(self.capacity(amount=1))
        flavor_id = lease['reservations'][0]['flavor_id']
        error = self.post(flavor_id, project=nova_base.OTHER, expect=400)
        self.assertIn('Flavor %s could not be found' % flavor_id, error)
        self.boot(flavor_id)

    def test_a_project_the_lease_is_shared_with_boots_with_the_flavor(self):
        lease = self.create_lease(self.capacity(amount=1),
                                  body_projects=[nova_base.OTHER])['lease']
        self.run_engine(at=clock_mod.SYSTEM.now() + SECOND)
        flavor_id = lease['reservations'][0]['flavor_id']
        self.boot(flavor_id, project=nova_base.OTHER)
        error = self.post(flavor_id, expect=409)
        self.assertIn('All 1 instances of reservation', error)

    def test_one_boot_of_several_servers_takes_that_many_seats(self):
        lease = self.started(self.capacity(amount=3, affinity='True'))
        flavor_id = lease['reservations'][0]['flavor_id']
        error = self.post(flavor_id, expect=409, min_count=4)
        self.assertIn('has 3 of its 3 instances free, 4 asked for', error)
        self.post(flavor_id, min_count=2, max_count=2)
        servers = self.active_servers()
        self.assertEqual(2, len(servers))
        self.assertEqual(1, len({self.host_of(server)
                                 for server in servers}))
        self.boot(flavor_id)
        self.post(flavor_id, expect=409)

    def test_several_servers_of_one_boot_keep_apart_without_affinity(self):
        lease = self.started(self.capacity(amount=2, affinity='False'))
        [reservation] = lease['reservations']
        self.post(reservation['flavor_id'], min_count=2)
        servers = self.active_servers()
        self.assertEqual({'compute-2', 'compute-3'},
                         {self.host_of(server) for server in servers})
        group = self.admin_api.api_get('/os-server-groups/%s' % reservation[
            'server_group_id']).body['server_group']
        self.assertEqual({server['id'] for server in servers},
                         set(group['members']))

    def active_servers(self):
        return [self._wait_for_state_change(server, 'ACTIVE')
                for server in self.user_api(nova_base.OWNER).get_servers()]

    def test_the_flavor_is_refused_before_the_start(self):
        lease = self.create_lease(self.capacity(amount=1), start=(
            dates.format_date(self.now + HOUR)))['lease']
        error = self.post(lease['reservations'][0]['id'], expect=409)
        self.assertIn('starts at %s' % nova_base.lease_date(
            self.now + HOUR), error)

    def test_the_end_deletes_the_servers_flavor_and_group(self):
        lease = self.started(self.capacity(amount=1, affinity='True'))
        [reservation] = lease['reservations']
        server = self.boot(reservation['flavor_id'])
        self.run_engine(at=self.now + 2 * HOUR + SECOND)
        self._wait_until_deleted(server)
        self.assertEqual(404, self.admin_api.api_get(
            '/flavors/%s' % reservation['flavor_id'],
            check_response_status=False).status)
        self.assertEqual(404, self.admin_api.api_get(
            '/os-server-groups/%s' % reservation['server_group_id'],
            check_response_status=False).status)
        error = self.post(reservation['flavor_id'], expect=409)
        self.assertIn('ended at', error)

    def test_a_flavor_reservation_copies_the_flavor(self):
        source = self._create_flavor(memory_mb=1024, vcpu=2, disk=2,
                                     ephemeral=1, extra_spec={'x:y': 'z'})
        lease = self.started({'resource_type': 'flavor:instance',
                              'flavor_id': source, 'amount': 1,
                              'affinity': 'None'})
        [reservation] = lease['reservations']
        self.assertEqual((2, 1024, 3, source, None),
                         tuple(reservation[key] for key in (
                             'vcpus', 'memory_mb', 'disk_gb',
                             'source_flavor_id', 'server_group_id')))
        flavor = self.admin_api.api_get(
            '/flavors/%s' % reservation['flavor_id']).body['flavor']
        self.assertEqual({'x:y': 'z', 'reservation:id': reservation['id']},
                         flavor['extra_specs'])
        self.assertEqual((2, 1), (flavor['disk'],
                                  flavor['OS-FLV-EXT-DATA:ephemeral']))
        self.assertIn(self.host_of(self.boot(reservation['flavor_id'])),
                      ('compute-2', 'compute-3'))

    def test_a_flavor_the_project_cannot_see_is_no_flavor(self):
        private = self._create_flavor(is_public=False)
        for flavor_id in (private, 'no-such-flavor'):
            error = self.create_lease(
                {'resource_type': 'flavor:instance', 'flavor_id': flavor_id,
                 'amount': 1}, expect=400)
            self.assertIn('reservations[0].flavor_id: no flavor %s'
                          % flavor_id, error['error_message'])

    def test_a_pending_reservation_is_booked_anew_on_update(self):
        lease = self.create_lease(self.capacity(
            amount=1, affinity='None', memory_mb=3840), start=(
                dates.format_date(self.now + HOUR)))['lease']
        [reservation] = lease['reservations']
        changed = self.lease_api('PUT', '/leases/' + lease['id'], {
            'reservations': [{'id': reservation['id'], 'amount': 4}]})
        self.assertEqual(4, changed['lease']['reservations'][0]['amount'])
        # 5 x 3840 MB is more than the two hosts' 2 x 7680 MB (8192 less
        # Nova's reserve of 512 MB).
        error = self.lease_api('PUT', '/leases/' + lease['id'], {
            'reservations': [{'id': reservation['id'], 'amount': 5}]},
            expect=409)
        self.assertIn('5 instances', error['error_message'])
        self.assertEqual(4, self.lease_api('GET', '/leases/' + lease['id'])[
            'lease']['reservations'][0]['amount'])

    def test_a_started_reservation_extends_only_while_its_hosts_are_free(
            self):
        # Each seat takes a whole host's 7680 usable MB (8192 less Nova's
        # reserve).
        lease = self.started(self.capacity(amount=2, memory_mb=7680))
        later = self.now + 3 * HOUR
        self.create_lease(self.capacity(amount=2, memory_mb=7680),
                          start=nova_base.lease_date(later), hours=4,
                          name='next')
        self.lease_api('PUT', '/leases/' + lease['id'], {
            'end_date': nova_base.lease_date(self.now + 2.5 * HOUR)})
        error = self.lease_api('PUT', '/leases/' + lease['id'], {
            'end_date': nova_base.lease_date(self.now + 5 * HOUR)},
            expect=409)
        self.assertIn('can be extended until %s at the latest'
                      % nova_base.lease_date(later), error['error_message'])
        error = self.lease_api('PUT', '/leases/' + lease['id'], {
            'reservations': [{'id': lease['reservations'][0]['id'],
                              'amount': 3}]}, expect=400)
        self.assertIn('amount: cannot be changed', error['error_message'])

    def test_a_private_flavor_shared_with_the_project_may_be_reserved(self):
        private = self._create_flavor(is_public=False)
        self.admin_api.api_post('/flavors/%s/action' % private, {
            'addTenantAccess': {'tenant': nova_base.OWNER}})
        lease = self.create_lease({'resource_type': 'flavor:instance',
                                   'flavor_id': private, 'amount': 1})
        self.assertEqual(private, lease['lease']['reservations'][0][
            'source_flavor_id'])

    def test_the_billing_payload_carries_the_amount_and_size(self):
        source = self._create_flavor(memory_mb=1024, vcpu=2, disk=2,
                                     ephemeral=1)
        lease = self.lease_api('POST', '/leases', {
            'name': 'billed', 'end_date': nova_base.lease_date(
                self.now + HOUR), 'reservations': [
                    self.capacity(amount=2), {
                        'resource_type': 'flavor:instance',
                        'flavor_id': source, 'amount': 1}]})['lease']
        plugins = plugins_mod.load_plugins(conf_mod.CONF, clock_mod.SYSTEM)
        with db_api.context_manager.reader.using(
                context.get_admin_context()) as session:
            [payload] = notifications.read_payloads(
                session, plugins, views.lease_views_by_id(
                    session, plugins, [lease['id']]))
        payloads.checked(dict(
            payload, payload_version=notification_schema.PAYLOAD_VERSION,
            event_time=dates.format_date(self.now)))
        self.assertEqual(
            {'virtual:instance': [(2, 1, 512, 1)],
             'flavor:instance': [(1, 2, 1024, 3)]},
            {reservation['resource_type']: [
                (resource['amount'], resource['vcpus'],
                 resource['memory_mb'], resource['disk_gb'])
                for resource in reservation['resources']]
             for reservation in payload['reservations']})
