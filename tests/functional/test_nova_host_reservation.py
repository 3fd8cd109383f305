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

"""Host reservation end to end inside Nova's functional harness.

Real Nova API, conductor, scheduler (with ReservationFilter) and fake
computes; the lease API mounted in nova-api; a real engine for the lease
events. The engine's clock is moved to run the start and end events.
"""

import datetime
import json

import sqlalchemy as sa

from db import api as db_api
from db import models
from reservation_ext import clock as clock_mod
from reservation_ext import context
from tests.functional import nova_base

OWNER = nova_base.OWNER
OTHER = nova_base.OTHER
SHARED = 'shared-project'


class HostReservationTest(nova_base.GpuHostsTestCase):

    def create_lease(self, name='hpc', projects=None, expect=None,
                     start=None, end=None, **reservation):
        body = {'name': name,
                'start_date': nova_base.lease_date(start or self.start),
                'end_date': nova_base.lease_date(end or self.end),
                'reservations': [dict({
                    'resource_type': 'physical:host', 'min': 2, 'max': 2,
                    'hypervisor_properties': '[">=", "$vcpus", "8"]',
                    'resource_properties': '["=", "$gpu", "true"]'},
                    **reservation)]}
        if projects:
            body['projects'] = projects
        answer = self.lease_api('POST', '/leases', body, expect=expect)
        return answer['lease'] if answer and 'lease' in answer else answer

    def test_admin_adds_hosts_with_their_nova_properties(self):
        hosts = self.admin_lease_api('GET', '/os-hosts')['hosts']
        by_name = {host['hypervisor_hostname']: host for host in hosts}
        self.assertEqual(['compute-1', 'compute-2', 'compute-3'],
                         sorted(by_name))
        self.assertEqual(2, by_name['compute-1']['vcpus'])
        self.assertEqual(10, by_name['compute-2']['vcpus'])
        self.assertEqual('true', by_name['compute-2']['gpu'])
        self.assertEqual('compute-2', by_name['compute-2']['service_name'])
        freepool = self.aggregate('freepool')
        self.assertEqual(['compute-1', 'compute-2', 'compute-3'],
                         sorted(freepool['hosts']))

    def test_a_hosts_cpu_info_is_json_text_as_in_blazar(self):
        # blazar-dashboard's host page parses it with json.loads; Nova's
        # API gives an object since microversion 2.28.
        [host] = [host for host in self.admin_lease_api(
            'GET', '/os-hosts')['hosts']
            if host['hypervisor_hostname'] == 'compute-1']
        self.assertIsInstance(host['cpu_info'], str)
        self.assertIn('arch', json.loads(host['cpu_info']))

    def test_adding_a_host_nova_does_not_know_is_404(self):
        answer = self.admin_lease_api('POST', '/os-hosts',
                                      {'name': 'no-such-host'}, expect=404)
        self.assertIn('no-such-host', answer['error_message'])
        self.assertEqual(3, len(self.admin_lease_api('GET',
                                                     '/os-hosts')['hosts']))

    def test_adding_a_host_twice_is_409(self):
        self.admin_lease_api('POST', '/os-hosts', {'name': 'compute-1'},
                             expect=409)

    def test_members_cannot_manage_hosts(self):
        self.lease_api('GET', '/os-hosts', expect=403)
        self.lease_api('POST', '/os-hosts', {'name': 'compute-4'},
                       expect=403)

    def test_ordinary_boots_avoid_reservable_hosts(self):
        for _ in range(3):
            server = self.boot(project=OTHER)
            self.assertEqual('compute-4',
                             server['OS-EXT-SRV-ATTR:hypervisor_hostname'])

    def test_lease_lifecycle_with_the_reservation_hint(self):
        lease = self.create_lease(projects=[SHARED])
        reservation = lease['reservations'][0]
        allocations = self.admin_lease_api(
            'GET', '/os-hosts/allocations?lease_id=' + lease['id'])
        hosts = self.admin_lease_api('GET', '/os-hosts')['hosts']
        names = {host['id']: host['hypervisor_hostname'] for host in hosts}
        leased = sorted(names[a['resource_id']]
                        for a in allocations['allocations'])
        self.assertEqual(['compute-2', 'compute-3'], leased)
        hint = {'reservation': reservation['id']}

        # Before the start the hint leads nowhere.
        self.boot(hints=hint, expect_state='ERROR')

        self.run_engine(self.start + datetime.timedelta(minutes=1))
        lease = self.lease_api('GET', '/leases/' + lease['id'])['lease']
        self.assertEqual('ACTIVE', lease['status'])
        aggregate = self.aggregate(reservation['id'])
        self.assertEqual(leased, sorted(aggregate['hosts']))
        self.assertEqual(OWNER, aggregate['metadata']['reservation:owner'])
        self.assertEqual('true', aggregate['metadata'][SHARED])
        shown = self.lease_api('GET', '/leases/' + lease['id'])['lease']
        self.assertEqual(aggregate['id'],
                         shown['reservations'][0]['aggregate_id'])
        self.assertEqual(['compute-1'],
                         self.aggregate('freepool')['hosts'])

        for project in (OWNER, SHARED, OWNER):
            server = self.boot(project=project, hints=hint)
            self.assertIn(server['OS-EXT-SRV-ATTR:hypervisor_hostname'],
                          leased)
        self.boot(project=OTHER, hints=hint, expect_state='ERROR')
        server = self.boot(project=OWNER)
        self.assertEqual('compute-4',
                         server['OS-EXT-SRV-ATTR:hypervisor_hostname'])

        self.run_engine(self.end + datetime.timedelta(minutes=1))
        lease = self.lease_api('GET', '/leases/' + lease['id'])['lease']
        self.assertEqual('TERMINATED', lease['status'])
        self.assertIsNone(self.aggregate(reservation['id']))
        self.assertEqual(['compute-1', 'compute-2', 'compute-3'],
                         sorted(self.aggregate('freepool')['hosts']))
        # release: the instances on the leased hosts stay.
        servers = self.admin_api.get_servers(
            search_opts={'all_tenants': 1, 'status': 'ACTIVE'})
        self.assertEqual(3, sum(
            1 for server in servers
            if server['OS-EXT-SRV-ATTR:hypervisor_hostname'] in leased))

    def test_delete_instances_at_end(self):
        lease = self.create_lease(on_end='delete_instances')
        reservation_id = lease['reservations'][0]['id']
        self.run_engine(self.start + datetime.timedelta(minutes=1))
        server = self.boot(hints={'reservation': reservation_id})
        self.run_engine(self.end + datetime.timedelta(minutes=1))
        self._wait_until_deleted(server)
        self.assertEqual(['compute-1', 'compute-2', 'compute-3'],
                         sorted(self.aggregate('freepool')['hosts']))

    def test_back_to_back_leases_hand_the_hosts_over_at_one_instant(self):
        first = self.create_lease(name='first')
        second = self.create_lease(
            name='second', start=self.end,
            end=self.end + datetime.timedelta(hours=1))
        self.run_engine(self.start + datetime.timedelta(minutes=1))
        self.run_engine(self.end)
        self.assert_second_lease_holds_the_hosts(first, second)

    def test_a_late_end_leaves_the_next_leases_hosts_in_its_pool(self):
        first = self.create_lease(name='first')
        second = self.create_lease(
            name='second', start=self.end,
            end=self.end + datetime.timedelta(hours=1))
        self.run_engine(self.start + datetime.timedelta(minutes=1))
        # The first lease is being updated: its end waits, the next
        # lease's start does not.
        self.set_lease_status(first['id'], 'UPDATING')
        self.run_engine(self.end)
        self.assertEqual('ACTIVE', self.lease_api(
            'GET', '/leases/' + second['id'])['lease']['status'])
        self.set_lease_status(first['id'], 'ACTIVE')
        self.run_engine(self.end + datetime.timedelta(minutes=1))
        self.assert_second_lease_holds_the_hosts(first, second)

    def set_lease_status(self, lease_id, status):
        with db_api.writer(context.get_admin_context(),
                           clock_mod.SYSTEM) as session:
            session.execute(sa.update(models.Lease.__table__).where(
                models.Lease.id == lease_id).values(status=status))

    def assert_second_lease_holds_the_hosts(self, first, second):
        shown = self.lease_api('GET', '/leases/' + first['id'])['lease']
        self.assertEqual('TERMINATED', shown['status'])
        aggregate = self.aggregate(second['reservations'][0]['id'])
        self.assertEqual(['compute-2', 'compute-3'],
                         sorted(aggregate['hosts']))
        self.assertEqual(['compute-1'], self.aggregate('freepool')['hosts'])

    def test_overlapping_lease_wanting_too_many_hosts_is_409(self):
        self.create_lease()
        before = self.lease_api('GET', '/leases')['leases']
        answer = self.create_lease(name='second', expect=409)
        self.assertIn('Not enough hosts', answer['error_message'])
        self.assertEqual(before, self.lease_api('GET', '/leases')['leases'])
        allocations = self.admin_lease_api('GET', '/os-hosts/allocations')
        self.assertEqual(2, len(allocations['allocations']))

    def test_lease_of_named_hosts(self):
        lease = self.create_lease(hosts=['compute-1'], min=1, max=1,
                                  hypervisor_properties='',
                                  resource_properties='')
        allocations = self.admin_lease_api(
            'GET', '/os-hosts/allocations?lease_id=' + lease['id'])
        host = self.admin_lease_api(
            'GET', '/os-hosts/' + allocations['allocations'][0][
                'resource_id'])['host']
        self.assertEqual('compute-1', host['hypervisor_hostname'])

    def test_bad_host_request_is_400_and_writes_nothing(self):
        for bad, field in (({'min': 0}, 'min'), ({'max': 'x'}, 'max'),
                           ({'on_end': 'explode'}, 'on_end'),
                           ({'region': 'Elsewhere'}, 'region'),
                           ({'hypervisor_properties': '["bad"'},
                            'hypervisor_properties'),
                           ({'color': 'red'}, 'color')):
            answer = self.create_lease(expect=400, **bad)
            self.assertIn('reservations[0].' + field,
                          answer['error_message'])
        self.assertEqual([], self.lease_api('GET', '/leases')['leases'])

    def test_host_with_a_future_lease_cannot_be_removed(self):
        self.create_lease()
        self.admin_lease_api('DELETE', '/os-hosts/compute-2', expect=409)
        self.admin_lease_api('DELETE', '/os-hosts/compute-1', expect=204)
        self.assertEqual(['compute-2', 'compute-3'],
                         sorted(self.aggregate('freepool')['hosts']))

    def test_extra_capabilities_update_and_properties(self):
        host = self.admin_lease_api('PUT', '/os-hosts/compute-1',
                                    {'rack': 'r1', 'gpu': None})['host']
        self.assertEqual('r1', host['rack'])
        self.assertNotIn('gpu', host)
        properties = self.admin_lease_api(
            'GET', '/os-hosts/properties?detail=1')['resource_properties']
        self.assertEqual(
            [{'property': 'gpu', 'private': False, 'values': ['true']},
             {'property': 'rack', 'private': False, 'values': ['r1']}],
            properties)
        self.admin_lease_api('PATCH', '/os-hosts/properties/rack',
                             {'private': True})
        properties = self.admin_lease_api(
            'GET', '/os-hosts/properties')['resource_properties']
        self.assertEqual([{'property': 'gpu'}], properties)
