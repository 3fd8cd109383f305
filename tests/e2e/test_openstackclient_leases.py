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

"""Leases where OpenStackClient users look, against the sandbox.

The unmodified ``openstack server show``, ``server list --long`` and
``volume show`` print a leased server's or volume's lease in its
``properties`` (its metadata): ``reservation:lease_id`` and
``reservation:end``, which ``openstack server set`` / ``volume set``
cannot change.
"""

from tests.e2e import base

PARAMS = 'lease_params={"start": "now", "end": "2027-12-1 16:07"}'
END = '2027-12-01T16:07:00Z'


class TestLeasesInOpenStackClient(base.SandboxTestCase):

    HOSTS = 1

    def demo_json(self, *argv):
        return self.run_json(['openstack'] + list(argv), user='demo')

    def lease_properties(self, name, properties):
        lease = self.demo_json('reservation', 'lease', 'show', name)
        self.assertEqual('2027-12-01T16:07:00.000000', lease['end_date'])
        return dict(properties, **{'reservation:lease_id': lease['id'],
                                   'reservation:end': END})

    def refused(self, argv, key):
        error = self.run_cli(['openstack'] + argv, user='demo',
                             expect_failure=True)
        self.assertIn('metadata.%s: is shown from the lease' % key, error)

    def test_server_show_and_list_long_show_the_lease(self):
        image = self.sandbox.env['demo']['SANDBOX_IMAGE']
        self.demo_json(
            'server', 'create', '--flavor', '1', '--image', image,
            '--nic', 'none', '--property', 'role=web', '--hint',
            'reserved=True', '--hint',
            PARAMS.replace('{"', '{"name": "vm-lease", "'), '--wait', 'vm1')
        expected = self.lease_properties('vm-lease', {'role': 'web'})
        shown = self.demo_json('server', 'show', 'vm1')
        self.assertEqual(('ACTIVE', expected),
                         (shown['status'], shown['properties']))
        [listed] = self.demo_json('server', 'list', '--long')
        self.assertEqual(expected, listed['Properties'])
        self.assertEqual(expected, self.run_json(
            ['openstack', 'server', 'show', shown['id']])['properties'])
        self.refused(['server', 'set', '--property',
                      'reservation:end=2030-01-01T00:00:00Z', 'vm1'],
                     'reservation:end')
        self.refused(['server', 'unset', '--property',
                      'reservation:lease_id', 'vm1'], 'reservation:lease_id')
        self.run_cli(['openstack', 'server', 'unset', '--property', 'role',
                      'vm1'], user='demo')
        self.assertEqual(
            self.lease_properties('vm-lease', {}),
            self.demo_json('server', 'show', 'vm1')['properties'])

    def test_volume_show_shows_the_lease(self):
        self.demo_json(
            'volume', 'create', '--size', '1', '--property', 'tier=scratch',
            '--hint', 'reserved=True', '--hint',
            PARAMS.replace('{"', '{"name": "scratch-lease", "'), 'scratch')
        expected = self.lease_properties('scratch-lease',
                                         {'tier': 'scratch'})
        shown = self.demo_json('volume', 'show', 'scratch')
        self.assertEqual(expected, shown['properties'])
        [listed] = self.demo_json('volume', 'list', '--long')
        self.assertEqual(expected, listed['Properties'])
        self.refused(['volume', 'set', '--property',
                      'reservation:end=2030-01-01T00:00:00Z', 'scratch'],
                     'reservation:end')
        self.refused(['volume', 'unset', '--property',
                      'reservation:lease_id', 'scratch'],
                     'reservation:lease_id')
        self.assertEqual(expected, self.demo_json(
            'volume', 'show', 'scratch')['properties'])
