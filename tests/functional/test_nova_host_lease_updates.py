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

"""Host lease updates in Nova's harness: the lease API, engine, Nova."""

import datetime

from tests.functional import nova_base

GPU = '["=", "$gpu", "true"]'
NO_GPU = '["=", "$gpu", "false"]'


class HostLeaseUpdateTest(nova_base.GpuHostsTestCase):

    def create_lease(self, name='hpc', start=None, end=None, **reservation):
        body = {'name': name,
                'start_date': nova_base.lease_date(start or self.start),
                'end_date': nova_base.lease_date(end or self.end),
                'reservations': [dict({
                    'resource_type': 'physical:host', 'min': 1, 'max': 1,
                    'resource_properties': GPU}, **reservation)]}
        return self.lease_api('POST', '/leases', body)['lease']

    def update(self, lease, expect=None, **body):
        answer = self.lease_api('PUT', '/leases/' + lease['id'], body,
                                expect=expect)
        return answer.get('lease', answer)

    def change(self, lease, expect=None, **values):
        reservation = lease['reservations'][0]
        return self.update(lease, expect=expect, reservations=[
            dict(values, id=reservation['id'])])

    def get(self, lease):
        return self.lease_api('GET', '/leases/' + lease['id'])['lease']

    def hosts_of(self, lease):
        """The lease's hosts' names and the ends of their allocations."""
        names = {host['id']: host['hypervisor_hostname'] for host in
                 self.admin_lease_api('GET', '/os-hosts')['hosts']}
        allocations = self.admin_lease_api(
            'GET', '/os-hosts/allocations?lease_id=' + lease['id'])
        return sorted(
            (names[allocation['resource_id']], reservation['end_date'])
            for allocation in allocations['allocations']
            for reservation in allocation['reservations'])

    def start_lease(self, lease):
        self.run_engine(self.start + datetime.timedelta(minutes=1))
        lease = self.get(lease)
        self.assertEqual('ACTIVE', lease['status'])
        return lease

    def test_a_pending_host_lease_grows_then_changes_its_properties(self):
        lease = self.create_lease()
        lease = self.change(lease, min=2, max=2)
        self.assertEqual(['compute-2', 'compute-3'],
                         [name for name, _end in self.hosts_of(lease)])
        self.assertEqual((2, 2), (lease['reservations'][0]['min'],
                                  lease['reservations'][0]['max']))
        lease = self.change(lease, min=1, max=1, resource_properties=NO_GPU)
        self.assertEqual(['compute-1'],
                         [name for name, _end in self.hosts_of(lease)])
        self.assertEqual(NO_GPU,
                         lease['reservations'][0]['resource_properties'])
        self.assertEqual('PENDING', lease['status'])

    def test_a_pending_lease_moves_its_window_on_its_hosts(self):
        lease = self.create_lease()
        [(host, _end)] = self.hosts_of(lease)
        later = self.start + datetime.timedelta(hours=2)
        lease = self.update(lease, start_date=nova_base.lease_date(later),
                            end_date=nova_base.lease_date(
                                self.end + datetime.timedelta(hours=2)))
        self.assertEqual(nova_base.lease_date(later),
                         nova_base.lease_date(datetime.datetime.fromisoformat(
                             lease['start_date'])))
        self.assertEqual([host], [name for name, _end in
                                  self.hosts_of(lease)])

    def test_an_active_host_lease_extends_in_place(self):
        lease = self.start_lease(self.create_lease())
        before = self.hosts_of(lease)
        lease = self.update(lease, prolong_for='1d')
        self.assertEqual('ACTIVE', lease['status'])
        after = self.hosts_of(lease)
        self.assertEqual([name for name, _end in before],
                         [name for name, _end in after])
        self.assertEqual([lease['end_date']], [end for _name, end in after])
        aggregate = self.aggregate(lease['reservations'][0]['id'])
        self.assertEqual([name for name, _end in before],
                         aggregate['hosts'])

    def test_an_active_host_lease_gains_hosts_in_its_aggregate(self):
        lease = self.start_lease(self.create_lease())
        lease = self.change(lease, min=2, max=2)
        self.assertEqual('ACTIVE', lease['status'])
        reservation = lease['reservations'][0]
        self.assertEqual(['compute-2', 'compute-3'],
                         sorted(self.aggregate(reservation['id'])['hosts']))
        self.assertEqual(['compute-1'], self.aggregate('freepool')['hosts'])
        server = self.boot(hints={'reservation': reservation['id']})
        self.assertIn(server['OS-EXT-SRV-ATTR:hypervisor_hostname'],
                      ('compute-2', 'compute-3'))

    def test_growth_that_nova_refuses_is_undone(self):
        # Started now, as the lease API's clock sees it: the hosts it
        # gains are booked from now on, after its start.
        self.start = self.now
        lease = self.start_lease(self.create_lease())
        # compute-3, which the growth would take, leaves Nova.
        [service] = self.admin_api.get_services(binary='nova-compute',
                                                host='compute-3')
        self.admin_api.api_delete('/os-services/%s' % service['id'])
        answer = self.change(lease, expect=409, min=2, max=2)
        self.assertIn('the lease is unchanged', answer['error_message'])
        self.assertIn('compute-3', answer['error_message'])
        after = self.get(lease)
        self.assertEqual(('ACTIVE', 1, 1), (
            after['status'], after['reservations'][0]['min'],
            after['reservations'][0]['max']))
        self.assertEqual([('compute-2', lease['end_date'])],
                         self.hosts_of(after))
        self.assertEqual(['compute-2'], self.aggregate(
            lease['reservations'][0]['id'])['hosts'])

    def test_an_active_host_lease_keeps_its_hosts(self):
        lease = self.start_lease(self.create_lease(min=2, max=2))
        for values, field in [({'min': 1, 'max': 1}, 'max'),
                              ({'resource_properties': NO_GPU},
                               'resource_properties')]:
            answer = self.change(lease, expect=400, **values)
            self.assertIn('reservations[0].' + field,
                          answer['error_message'])
        self.assertEqual(lease, self.get(lease))

    def test_an_extension_a_later_lease_blocks_says_until_when(self):
        lease = self.create_lease(min=2, max=2)
        later = self.end + datetime.timedelta(hours=2)
        self.create_lease(name='next', start=later,
                          end=later + datetime.timedelta(days=1),
                          min=2, max=2)
        answer = self.update(lease, expect=409, prolong_for='1d')
        self.assertIn('The lease can be extended until %s at the latest.'
                      % nova_base.lease_date(later),
                      answer['error_message'])
        self.assertEqual(lease, self.get(lease))
        lease = self.update(lease, end_date=nova_base.lease_date(later))
        self.assertEqual('PENDING', lease['status'])

    def test_a_change_no_host_can_serve_is_409_and_changes_nothing(self):
        lease = self.create_lease()
        answer = self.change(lease, expect=409, min=3, max=3)
        self.assertIn('Not enough hosts', answer['error_message'])
        self.assertEqual(lease, self.get(lease))
