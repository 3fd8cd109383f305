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

"""Nova's and Cinder's quotas over a lease's window, as an operator sets them.

The admin sets the demo project's quotas with ``openstack quota set``;
the demo user books servers with the unmodified ``nova boot`` and its
hints, capacity with ``openstack reservation lease create`` and volumes
with ``cinder create``.
"""

import datetime
import json

from tests.e2e import base

WINDOW = '{"start": "2031-06-01 09:00", "end": "2031-06-01 10:00"}'
LATER = '{"start": "2031-06-01 10:00", "end": "2031-06-01 11:00"}'


class TestWindowQuotas(base.SandboxTestCase):

    HOSTS = 2

    @classmethod
    def setUpClass(cls):
        super().setUpClass()
        cls.image = cls.sandbox.env['admin']['SANDBOX_IMAGE']

    def setUp(self):
        super().setUp()
        hosts = {host['hypervisor_hostname'] for host in self.run_json(
            ['openstack', 'reservation', 'host', 'list'])}
        if 'compute-2' not in hosts:
            self.run_cli(['openstack', 'reservation', 'host', 'create',
                          'compute-2'])
        # The tests share the sandbox: each leaves none of its leases,
        # servers, volumes or quotas to the next.
        self.addCleanup(self.reset)

    def reset(self):
        """Delete demo's leases, servers and volumes; reset its quotas."""
        for kind in (('reservation', 'lease'), ('server',), ('volume',)):
            # python-blazarclient deletes one lease a call.
            for item in self.run_json(['openstack', *kind, 'list'],
                                      user='demo'):
                self.run_cli(['openstack', *kind, 'delete',
                              item.get('id') or item['ID']], user='demo')
        self.quota('--instances', '10', '--cores', '20', '--ram', '51200',
                   '--volumes', '10', '--gigabytes', '1000')

    def quota(self, *options):
        self.run_cli(['openstack', 'quota', 'set'] + list(options) +
                     ['demo'])

    def boot(self, name, lease_params, **kwargs):
        return self.run_cli(
            ['nova', 'boot', '--flavor', '1', '--image', self.image,
             '--hint', 'reserved=True', '--hint',
             'lease_params=' + lease_params, name], user='demo', **kwargs)

    def names(self, *argv):
        return sorted(item['Name'] for item in self.run_json(
            list(argv), user='demo'))

    def test_the_boot_over_the_instances_quota_gets_novas_403(self):
        self.quota('--instances', '2')
        self.boot('vm-a', WINDOW)
        self.boot('vm-b', WINDOW)
        error = self.boot('vm-c', WINDOW, expect_failure=True)
        self.assertIn('ERROR (Forbidden): Quota exceeded for instances: '
                      'Requested 1, but already used 2 of 2 instances '
                      '(HTTP 403)', error)
        self.boot('vm-d', LATER)
        self.assertEqual(['vm-a', 'vm-b', 'vm-d'],
                         self.names('openstack', 'server', 'list'))

    def test_a_capacity_reservation_over_cores_gets_403_naming_it(self):
        self.quota('--cores', '4')
        error = self.run_cli([
            'openstack', 'reservation', 'lease', 'create', '--reservation',
            'resource_type=virtual:instance,amount=3,vcpus=2,memory_mb=512,'
            'disk_gb=1,affinity=True', '--start-date', '2031-07-01 09:00',
            '--end-date', '2031-07-01 10:00', 'capacity'], user='demo',
            expect_failure=True)
        self.assertIn('ERROR: Quota exceeded for cores: Requested 6, but '
                      'already used 0 of 4 cores', error)

    def test_the_volume_over_the_volumes_quota_gets_cinders_413(self):
        self.quota('--volumes', '1')
        params = ['--hint', 'reserved=True', '--hint',
                  'lease_params=' + WINDOW]
        self.run_cli(['cinder', 'create', '--name', 'vol-a'] + params +
                     ['1'], user='demo')
        error = self.run_cli(['cinder', 'create', '--name', 'vol-b'] +
                             params + ['1'], user='demo',
                             expect_failure=True)
        self.assertIn("ERROR: Maximum number of volumes allowed (1) "
                      "exceeded for quota 'volumes'. (HTTP 413)", error)
        self.assertEqual(['vol-a'], sorted(
            volume['Name'] for volume in json.loads(self.run_cli(
                ['openstack', 'volume', 'list', '-f', 'json'],
                user='demo'))))

    def test_prolonging_a_volume_lease_over_cinders_quota_gets_403(self):
        self.quota('--volumes', '1')
        for name, window in (('vol-a', WINDOW), ('vol-b', LATER)):
            self.run_cli(['cinder', 'create', '--name', name, '--hint',
                          'reserved=True', '--hint', 'lease_params=' + window,
                          '1'], user='demo')
        [lease] = [lease for lease in self.run_json(
            ['openstack', 'reservation', 'lease', 'list'], user='demo')
            if lease['name'].startswith('vol-a-')]
        # Through the lease API (nova-api): vol-b's window would overlap.
        error = self.run_cli(['openstack', 'reservation', 'lease', 'set',
                              '--prolong-for', '1h', lease['id']],
                             user='demo', expect_failure=True)
        self.assertIn("ERROR: Maximum number of volumes allowed (1) "
                      "exceeded for quota 'volumes'.", error)
        self.assertEqual('2031-06-01T10:00:00.000000', self.run_json(
            ['openstack', 'reservation', 'lease', 'show', lease['id']],
            user='demo')['end_date'])

    def test_a_start_over_a_quota_lowered_since_ends_in_error(self):
        self.quota('--instances', '10')
        start = (datetime.datetime.utcnow() + datetime.timedelta(
            minutes=2)).replace(second=0, microsecond=0)
        self.boot('vm-late', json.dumps({
            'name': 'late', 'start': start.strftime('%Y-%m-%d %H:%M'),
            'duration': '1h'}))
        # The operator lowers the quota before the lease starts.
        self.quota('--instances', '0')
        lease = self.wait_for(
            lambda: self.ended_lease('late'), timeout=420, interval=5)
        self.assertEqual('ERROR', lease['status'])
        self.assertIn('Quota exceeded for instances', lease['status_reason'])

    def ended_lease(self, name):
        """The demo lease ``name`` once it left PENDING and STARTING."""
        lease = self.run_json(['openstack', 'reservation', 'lease', 'show',
                               name], user='demo')
        return lease if lease['status'] not in ('PENDING',
                                                'STARTING') else None
