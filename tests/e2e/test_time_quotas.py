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

"""Time quotas: Keystone unified limits set with the real ``openstack`` CLI.

The sandbox enforces the ``reservation`` service's limits
(``[enforcement] time_quotas``); the admin sets them with ``openstack
registered limit create`` / ``openstack limit create`` and the demo user
creates host leases with python-blazarclient's ``openstack reservation
lease create``. The limits name the region: oslo.limit reads those of the
region of the service's endpoint.
"""

import datetime

from tests.e2e import base

START = datetime.datetime(2031, 6, 1, 9, 0)


def _date(moment):
    return moment.strftime('%Y-%m-%d %H:%M')


class TestTimeQuotas(base.SandboxTestCase):

    HOSTS = 3

    def setUp(self):
        super().setUp()
        existing = {host['hypervisor_hostname'] for host in self.run_json(
            ['openstack', 'reservation', 'host', 'list'])}
        for index in range(1, self.HOSTS + 1):
            if 'compute-%d' % index not in existing:
                self.run_cli(['openstack', 'reservation', 'host', 'create',
                              'compute-%d' % index])

    def create_lease(self, name, hosts, hours, expect_failure=False):
        # --debug: the refusal's HTTP status is in the log on stderr.
        return self.run_cli([
            'openstack', '--debug', 'reservation', 'lease', 'create',
            '--reservation',
            'resource_type=physical:host,min=%d,max=%d' % (hosts, hosts),
            '--start-date', _date(START),
            '--end-date', _date(START + datetime.timedelta(hours=hours)),
            name], user='demo', expect_failure=expect_failure)

    def demo_leases(self):
        return sorted(lease['name'] for lease in self.run_json(
            ['openstack', 'reservation', 'lease', 'list'], user='demo'))

    def test_the_demo_projects_host_hours_limit_is_enforced(self):
        registered = self.run_json([
            'openstack', 'registered', 'limit', 'create', '--service',
            'reservation', '--region', 'RegionOne', '--default-limit',
            '1000', 'host_hours'])
        self.assertEqual(('host_hours', 1000),
                         (registered['resource_name'],
                          registered['default_limit']))
        limit = self.run_json([
            'openstack', 'limit', 'create', '--service', 'reservation',
            '--region', 'RegionOne', '--project', 'demo',
            '--resource-limit', '30', 'host_hours'])
        self.assertEqual(30, limit['resource_limit'])

        error = self.create_lease('two-days', hosts=2, hours=24,
                                  expect_failure=True)
        self.assertIn(
            "Quota exceeded for host_hours: the project's leases would "
            "reserve 48 host_hours in the quota window (this lease 48), "
            "over the limit of 30.", error)
        self.assertIn('"POST /reservation/v1/leases HTTP/1.1" 403', error)
        self.assertEqual([], self.demo_leases())

        self.create_lease('one-day', hosts=1, hours=24)
        error = self.create_lease('half-a-day', hosts=1, hours=12,
                                  expect_failure=True)
        self.assertIn('reserve 36 host_hours in the quota window (this '
                      'lease 12), over the limit of 30.', error)
        self.assertEqual(['one-day'], self.demo_leases())

        # The admin project has only the registered default of 1000.
        self.run_cli(['openstack', 'reservation', 'lease', 'create',
                      '--reservation',
                      'resource_type=physical:host,min=2,max=2',
                      '--start-date', _date(START + datetime.timedelta(
                          days=2)),
                      '--end-date', _date(START + datetime.timedelta(
                          days=3)), 'admin-lease'])

    def test_the_gb_hours_default_limit_holds_reserved_volumes(self):
        self.run_json([
            'openstack', 'registered', 'limit', 'create', '--service',
            'reservation', '--region', 'RegionOne', '--default-limit',
            '100', 'gb_hours'])
        params = 'lease_params={"start": "%s", "end": "%s"}' % (
            _date(START), _date(START + datetime.timedelta(hours=24)))
        error = self.run_cli(['cinder', 'create', '--hint', 'reserved=True',
                              '--hint', params, '--name', 'big', '10'],
                             user='demo', expect_failure=True)
        self.assertIn(
            "Quota exceeded for gb_hours: the project's leases would "
            "reserve 240 gb_hours in the quota window (this lease 240), "
            "over the limit of 100.", error)
        self.assertIn('HTTP 403', error)
        self.assertNotIn('big', self.run_cli(['cinder', 'list'],
                                             user='demo'))
        out = self.run_cli(['cinder', 'create', '--hint', 'reserved=True',
                            '--hint', params, '--name', 'small', '4'],
                           user='demo')
        self.assertRegex(out, r'\| status +\| reserved +\|')
