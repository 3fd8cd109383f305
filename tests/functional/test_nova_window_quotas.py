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

"""Nova's quotas count a leased server over its lease's window, and only there.

Nova's harness with its DB quota driver: the quotas are set through
Nova's ``os-quota-sets`` API as ``openstack quota set`` does; the boots
are ``POST /servers`` with the ``reserved`` / ``lease_params`` hints, the
capacity reservations ``POST /reservation/v1/leases``.
"""

import datetime
import json

from nova.tests import fixtures as nova_fixtures
from nova.tests.functional.api import client

from reservation_ext import dates
from tests.functional import nova_base

HOUR = datetime.timedelta(hours=1)
SECOND = datetime.timedelta(seconds=1)


class NovaWindowQuotasTest(nova_base.NovaTestCase):

    def setUp(self):
        super().setUp()
        self.api_user = self.user_api(nova_base.OWNER)
        # compute-4 (FakeDriver) has room for every booking here: only
        # the quotas refuse.
        self.add_reservable_host('compute-4')
        self.start = (datetime.datetime.utcnow() + HOUR).replace(
            microsecond=0)
        self.flavor = self._create_flavor(memory_mb=512, vcpu=1, disk=1,
                                          ephemeral=0)

    def set_quota(self, **quotas):
        self.admin_api.update_quota(quotas, project_id=nova_base.OWNER)

    def request(self, start, hours=1, flavor=None, name='vm'):
        return {'server': self._build_server(
            name=name, flavor_id=flavor or self.flavor, networks='none'),
            'os:scheduler_hints': {
                'reserved': 'True', 'lease_params': json.dumps({
                    'start': dates.format_date(start),
                    'end': dates.format_date(start + hours * HOUR)})}}

    def reserve(self, start=None, **kwargs):
        """A RESERVED server, leased from ``start`` (self.start)."""
        server = self.api_user.post_server(
            self.request(start or self.start, **kwargs))
        return self._wait_for_state_change(server, 'RESERVED')

    def refused(self, start=None, **kwargs):
        """Post a reserved boot that must be refused; return Nova's fault."""
        error = self.assertRaises(
            client.OpenStackApiException, self.api_user.post_server,
            self.request(start or self.start, **kwargs))
        self.assertEqual(403, error.response.status_code, error.response.text)
        return error.response.json()

    def leases(self):
        return self.lease_api('GET', '/leases')['leases']

    def assert_left(self, servers, leases):
        self.assertEqual(servers, len(self.api_user.get_servers()))
        self.assertEqual(leases, len(self.leases()))

    def test_the_boot_over_the_instances_quota_is_novas_403_and_leaves_nothing(
            self):
        self.set_quota(instances=2)
        self.reserve(name='a')
        self.reserve(name='b')
        fault = self.refused(name='c')
        self.assertEqual({'forbidden': {
            'code': 403, 'message': 'Quota exceeded for instances: '
            'Requested 1, but already used 2 of 2 instances'}}, fault)
        self.assert_left(servers=2, leases=2)
        self.assertEqual([], self.admin_api.api_get(
            '/servers?all_tenants=1&name=^c$').body['servers'])

    def test_cores_and_ram_are_counted_with_the_flavor(self):
        big = self._create_flavor(memory_mb=1024, vcpu=2, disk=1,
                                  ephemeral=0)
        self.set_quota(cores=3, ram=4096)
        self.reserve(flavor=big)
        fault = self.refused(flavor=big)
        self.assertEqual('Quota exceeded for cores: Requested 2, but '
                         'already used 2 of 3 cores',
                         fault['forbidden']['message'])
        self.set_quota(cores=20, ram=1536)
        fault = self.refused(flavor=big)
        self.assertEqual('Quota exceeded for ram: Requested 1024, but '
                         'already used 1024 of 1536 ram',
                         fault['forbidden']['message'])
        self.assert_left(servers=1, leases=1)

    def test_leases_in_disjoint_windows_do_not_compete(self):
        self.set_quota(instances=1)
        self.reserve(name='a')
        # Back to back: the first ends when the second starts.
        self.reserve(self.start + HOUR, name='b')
        self.refused(self.start + HOUR / 2, name='c')
        self.assert_left(servers=2, leases=2)

    def test_an_ordinary_server_counts_against_every_future_window(self):
        self.set_quota(instances=2)
        self.boot()
        self.reserve(name='a')
        self.reserve(self.start + 24 * HOUR, name='b')
        fault = self.refused(name='c')
        self.assertEqual('Quota exceeded for instances: Requested 1, but '
                         'already used 2 of 2 instances',
                         fault['forbidden']['message'])
        self.assert_left(servers=3, leases=2)

    def test_a_started_server_counts_in_its_window_only(self):
        self.set_quota(instances=1)
        server = self.reserve(name='a')
        self.run_engine(at=self.start + SECOND)
        self._wait_for_state_change(server, 'ACTIVE')
        # Nova counts it now; over the leases' windows it counts in its
        # own only.
        self.reserve(self.start + HOUR, name='b')
        fault = self.refused(self.start + HOUR / 2, name='c')
        self.assertEqual('Quota exceeded for instances: Requested 1, but '
                         'already used 1 of 1 instances',
                         fault['forbidden']['message'])
        self.assert_left(servers=2, leases=2)

    def test_a_deleted_lease_frees_its_quota(self):
        self.set_quota(instances=1)
        server = self.reserve(name='a')
        self.refused(name='b')
        self.api_user.delete_server(server['id'])
        self._wait_until_deleted(server)
        self.reserve(name='b')
        self.assert_left(servers=1, leases=1)

    def test_a_capacity_reservation_over_quota_is_403_in_blazars_body(self):
        self.set_quota(cores=4)
        body = {'name': 'capacity', 'start_date': dates.format_date(
            self.start), 'end_date': dates.format_date(self.start + HOUR),
            'reservations': [{
                'resource_type': 'virtual:instance', 'vcpus': 2,
                'memory_mb': 512, 'disk_gb': 1, 'amount': 3,
                'affinity': 'True', 'resource_properties': ''}]}
        error = self.lease_api('POST', '/leases', body, expect=403)
        self.assertEqual({
            'error_code': 403, 'error_name': 'ComputeQuotaExceeded',
            'error_message': 'Quota exceeded for cores: Requested 6, but '
            'already used 0 of 4 cores'}, error)
        self.assertEqual([], self.leases())
        body['reservations'][0]['amount'] = 2
        self.lease_api('POST', '/leases', body)
        # Its seats count against the boots in its window.
        self.refused(name='a')

    def test_a_flavor_reservation_counts_its_amount_of_the_flavor(self):
        self.set_quota(ram=1024)
        body = {'name': 'flavor', 'start_date': dates.format_date(
            self.start), 'end_date': dates.format_date(self.start + HOUR),
            'reservations': [{'resource_type': 'flavor:instance',
                              'flavor_id': self.flavor, 'amount': 3,
                              'affinity': 'None'}]}
        error = self.lease_api('POST', '/leases', body, expect=403)
        self.assertEqual('Quota exceeded for ram: Requested 1536, but '
                         'already used 0 of 1024 ram', error['error_message'])
        self.assertEqual([], self.leases())

    def test_a_start_nova_refuses_over_quota_ends_in_error_with_its_reason(
            self):
        self.flags(event_max_attempts=2, event_retry_backoff=0,
                   group='reservation')
        self.set_quota(instances=1)
        server = self.reserve(name='a')
        # A server booked outside leases meanwhile takes the last instance.
        self.boot()
        self.run_engine(at=self.start + SECOND)
        [lease] = self.leases()
        self.assertEqual('ERROR', lease['status'])
        self.assertIn('Quota exceeded for instances: Requested 1, but '
                      'already used 1 of 1 instances', lease['status_reason'])
        self.assertEqual('ERROR', self.api_user.get_server(
            server['id'])['status'])


class UnifiedLimitsWindowQuotasTest(NovaWindowQuotasTest):
    """The same with Nova's quotas in Keystone's unified limits.

    Nova's own fixture stands in for Keystone; the limits are registered
    limits of every project, as ``openstack registered limit create
    --service nova`` makes them. Nova counts the instances from its
    instance mappings (a waiting server has one) and cores and RAM from
    Placement. (Nova's own check of an unleased boot counts the waiting
    servers too, so a start is refused here on a quota lowered since.)
    """

    def setUp(self):
        self.flags(driver='nova.quota.UnifiedLimitsDriver', group='quota')
        super().setUp()
        self.limits = self.useFixture(nova_fixtures.UnifiedLimitsFixture())
        self.set_quota()

    def set_quota(self, instances=10, cores=20, ram=51200):
        self.limits.registered_limits_list.clear()
        for name, value in (('servers', instances), ('class:VCPU', cores),
                            ('class:MEMORY_MB', ram),
                            ('class:DISK_GB', 1000)):
            self.limits.create_registered_limit(resource_name=name,
                                                default_limit=value)

    def test_a_start_nova_refuses_over_quota_ends_in_error_with_its_reason(
            self):
        self.flags(event_max_attempts=2, event_retry_backoff=0,
                   group='reservation')
        server = self.reserve(name='a')
        self.set_quota(instances=0)
        self.run_engine(at=self.start + SECOND)
        [lease] = self.leases()
        self.assertEqual('ERROR', lease['status'])
        self.assertIn('Resource servers is over limit of 0',
                      lease['status_reason'])
        self.assertEqual('ERROR', self.api_user.get_server(
            server['id'])['status'])
