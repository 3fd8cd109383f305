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

"""Preemptible servers that declare how long their work runs, in Nova.

Real nova-api (with the server middleware), conductor and scheduler with
ReservationFilter and Nova's own weighers, Placement and fake computes.
compute-1 (2 vCPUs) is an ordinary host, too small for the 4-vCPU
flavors of these tests; compute-2, compute-3 and compute-4 (the largest,
where Nova's RAM weigher puts a server that may go anywhere) are
reservable. The lead time is 600 s: a lease that starts in an hour
reclaims its host in 50 minutes.
"""

import datetime

from nova.tests.functional.api import client

from reservation_ext import clock as clock_mod
from tests.functional import nova_base

HOUR = datetime.timedelta(hours=1)
HOST_KEY = 'OS-EXT-SRV-ATTR:hypervisor_hostname'
RESERVABLE = ('compute-2', 'compute-3', 'compute-4')
PREEMPTIBLE = {'reservation:preemptible': 'true'}
RUNTIME = 'reservation:preemptible_runtime'


class PreemptibleRuntimeTest(nova_base.NovaTestCase):

    def setUp(self):
        super().setUp()
        self.flags(preemption_lead_time=600, group='reservation')
        for name in RESERVABLE:
            self.add_reservable_host(name)
        self.now = clock_mod.SYSTEM.now().replace(second=0, microsecond=0)
        self.large = self.flavor(PREEMPTIBLE)

    def flavor(self, extra_spec):
        return self._create_flavor(memory_mb=1024, vcpu=4, disk=1,
                                   ephemeral=0, extra_spec=extra_spec)

    def lease_host(self, host, starts_in):
        """A lease of ``host`` that starts ``starts_in`` from now."""
        start = self.now + starts_in
        self.lease_one_host('on-' + host, host, nova_base.lease_date(start),
                            nova_base.lease_date(start + HOUR))

    def boot(self, flavor=None, expect_state='ACTIVE', **hints):
        request = {'server': self._build_server(
            flavor_id=flavor or self.large, networks='none')}
        if hints:
            request['os:scheduler_hints'] = hints
        server = self.user_api(nova_base.OTHER).post_server(request)
        return self._wait_for_state_change(server, expect_state)

    def lease_three_hosts(self):
        """Reclaims in 50 minutes (compute-4), 2 h 50 and 4 h 50."""
        self.lease_host('compute-4', HOUR)
        self.lease_host('compute-3', 3 * HOUR)
        self.lease_host('compute-2', 5 * HOUR)

    def leases_of_other(self):
        return self.lease_api('GET', '/leases',
                              project=nova_base.OTHER)['leases']

    def test_without_a_runtime_a_preemptible_goes_where_it_went(self):
        self.lease_three_hosts()
        self.assertEqual('compute-4', self.boot()[HOST_KEY])

    def test_a_preemptible_lands_only_where_its_reclaim_comes_after_it(
            self):
        self.lease_three_hosts()
        self.assertEqual('compute-2', self.boot(
            preemptible_runtime=str(4 * 3600))[HOST_KEY])
        self.assertIn(self.boot(preemptible_runtime='7200')[HOST_KEY],
                      ('compute-2', 'compute-3'))

    def test_the_preemptible_hint_with_a_runtime_does_as_the_flavor(self):
        self.lease_three_hosts()
        ordinary = self.flavor(None)
        self.assertEqual('compute-2', self.boot(
            ordinary, preemptible='true',
            preemptible_runtime=str(4 * 3600))[HOST_KEY])

    def test_with_no_host_that_lasts_the_boot_is_no_valid_host(self):
        for host in RESERVABLE:
            self.lease_host(host, HOUR)
        server = self.boot(expect_state='ERROR', preemptible_runtime='3600')
        self.assertIn('No valid host', server['fault']['message'])
        self.assertEqual([], self.leases_of_other())
        [shown] = self.user_api(nova_base.OTHER).get_servers()
        self.assertEqual(server['id'], shown['id'])

    def test_the_flavor_s_runtime_counts_and_the_hint_wins_over_it(self):
        self.lease_three_hosts()
        declaring = self.flavor(dict(PREEMPTIBLE, **{RUNTIME: '14400'}))
        self.assertEqual('compute-2', self.boot(declaring)[HOST_KEY])
        self.assertEqual('compute-4', self.boot(
            declaring, preemptible_runtime='1800')[HOST_KEY])

    def test_a_bad_runtime_hint_is_400_naming_it_and_creates_nothing(self):
        api = self.user_api(nova_base.OTHER)
        ordinary = self.flavor(None)
        not_a_runtime = 'preemptible_runtime: must be a whole number'
        not_preemptible = ('preemptible_runtime: only a preemptible server '
                           'declares a runtime')
        for flavor, hints, message in (
                (self.large, {'preemptible_runtime': 'an hour'},
                 not_a_runtime),
                (self.large, {'preemptible_runtime': '0'}, not_a_runtime),
                (self.large, {'preemptible_runtime': '-60'}, not_a_runtime),
                (self.large, {'preemptible_runtime': '31536001'},
                 not_a_runtime),
                (ordinary, {'preemptible_runtime': '3600'},
                 not_preemptible),
                (ordinary, {'preemptible': 'false',
                            'preemptible_runtime': '3600'},
                 not_preemptible),
                (self.large, {'reserved': 'True',
                              'preemptible_runtime': '3600'},
                 not_preemptible)):
            error = self.assertRaises(
                client.OpenStackApiException, api.post_server, {
                    'server': self._build_server(flavor_id=flavor,
                                                 networks='none'),
                    'os:scheduler_hints': hints})
            self.assertEqual(400, error.response.status_code, hints)
            self.assertIn(message, error.response.text)
        self.assertEqual([], api.get_servers())
        self.assertEqual([], self.leases_of_other())

    def test_a_bad_runtime_extra_spec_is_400_naming_it(self):
        admin = client.TestOpenStackClient(
            'admin', self.api_fixture.base_url,
            project_id=self.api_fixture.project_id,
            roles=['reader', 'member', 'admin'])
        admin.microversion = '2.86'
        for value in ('an hour', '0', '31536001'):
            error = self.assertRaises(
                client.OpenStackApiException, admin.post_extra_spec,
                self.large, {'extra_specs': {RUNTIME: value}})
            self.assertEqual(400, error.response.status_code)
            self.assertIn(RUNTIME + ': must be a whole number',
                          error.response.text)
        admin.post_extra_spec(self.large, {'extra_specs': {RUNTIME: '60'}})
        self.assertEqual('60', admin.api_get(
            '/flavors/%s/os-extra_specs' % self.large).body[
                'extra_specs'][RUNTIME])
