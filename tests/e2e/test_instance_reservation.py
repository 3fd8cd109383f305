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

"""Server reservation with the unmodified nova client against the sandbox.

``nova boot --hint reserved=True --hint lease_params=...`` goes to the
sandbox's nova-api with the server middleware; the sandbox's engine starts
and ends the leases through Nova's API.
"""

import datetime
import json

from tests.e2e import base

RESERVABLE = 'compute-4'
SEED_PARAMS = ('{"name": "lease1", "start": "now", '
               '"end": "2027-12-1 16:07"}')


def _date(moment):
    return moment.strftime('%Y-%m-%d %H:%M:%S')


class TestInstanceReservation(base.SandboxTestCase):

    @classmethod
    def setUpClass(cls):
        super().setUpClass()
        env = cls.sandbox.env['admin']
        cls.image = env['SANDBOX_IMAGE']

    def setUp(self):
        super().setUp()
        hosts = {host['hypervisor_hostname'] for host in self.run_json(
            ['openstack', 'reservation', 'host', 'list'])}
        if RESERVABLE not in hosts:
            self.run_cli(['openstack', 'reservation', 'host', 'create',
                          RESERVABLE])

    def nova(self, *argv, **kwargs):
        return self.run_cli(['nova'] + list(argv), user='demo', **kwargs)

    def boot(self, name, lease_params, *options, **kwargs):
        """``nova boot`` with the hints (flavor 1 unless options say)."""
        if '--flavor' not in options:
            options += ('--flavor', '1')
        return self.nova('boot', '--image', self.image, *options, '--hint',
                         'reserved=True', '--hint',
                         'lease_params=' + lease_params, name, **kwargs)

    def statuses(self):
        """``{name: status}`` of the demo project's servers (nova list)."""
        rows = [line.split('|') for line in self.nova('list').splitlines()
                if line.startswith('| ')]
        return {row[2].strip(): row[3].strip() for row in rows[1:]}

    def show(self, name):
        return self.run_json(['openstack', 'server', 'show', name],
                             user='demo')

    def test_seed_line(self):
        out = self.nova('boot', '--flavor', '1', '--image', self.image,
                        '--hint', 'reserved=True', '--hint',
                        'lease_params=' + SEED_PARAMS, 'vm1')
        # The lease is in the server's metadata, never beside it.
        self.assertRegex(out, r'\| metadata +\| \{"reservation:lease_id": '
                         r'"[0-9a-f-]{36}", "reservation:end": '
                         r'"2027-12-01T16:07:00Z"\} ')
        self.assertNotRegex(out, r'\| reservation:lease_id ')
        self.wait_for(lambda: self.statuses().get('vm1') == 'ACTIVE')
        lease = self.run_json(['openstack', 'reservation', 'lease', 'show',
                               'lease1'], user='demo')
        self.assertEqual('2027-12-01T16:07:00.000000', lease['end_date'])
        self.assertIn(self.show('vm1')['id'], lease['reservations'])
        self.nova('delete', 'vm1')
        self.wait_for(lambda: 'vm1' not in self.statuses())
        self.assertNotIn('lease1', self.nova_leases())

    def test_future_start_is_reserved_then_active(self):
        now = datetime.datetime.utcnow()
        params = json.dumps({
            # Room for a slow boot on a busy machine before the start.
            'name': 'later', 'start': _date(now + datetime.timedelta(
                seconds=30)),
            'end': _date(now + datetime.timedelta(seconds=60)),
            'on_end': 'snapshot_delete'})
        self.boot('vm2', params, '--nic', 'none')
        self.assertEqual('RESERVED', self.statuses()['vm2'])
        error = self.nova('pause', 'vm2', expect_failure=True)
        self.assertIn('is reserved', error)
        self.assertIn('HTTP 409', error)
        self.wait_for(lambda: self.statuses()['vm2'] == 'ACTIVE',
                      timeout=90, interval=0.5)
        self.assertEqual(RESERVABLE, self.run_json(
            ['openstack', 'server', 'show', self.show('vm2')['id']])[
                'OS-EXT-SRV-ATTR:hypervisor_hostname'])
        self.wait_for(lambda: 'vm2' not in self.statuses(), timeout=90)
        images = self.run_json(['openstack', 'image', 'list'], user='demo')
        self.assertIn('vm2-snapshot', [image['Name'] for image in images])

    def test_no_room_is_409_and_creates_nothing(self):
        start = datetime.datetime.utcnow() + datetime.timedelta(days=30)
        params = json.dumps({'start': _date(start), 'duration': '1d'})
        # compute-4 has 32 GiB of RAM, of which Nova keeps 512 MB for the
        # host: one m1.xlarge (16 GiB) fits, a second does not.
        self.boot('big-1', params, '--nic', 'none', '--flavor', '5')
        error = self.boot('too-big', params, '--nic', 'none', '--flavor',
                          '5', expect_failure=True)
        self.assertIn('No reservable host has 8 vCPU(s), 16384 MB of RAM '
                      'and 160 GB of disk free', error)
        self.assertIn('HTTP 409', error)
        statuses = self.statuses()
        self.assertNotIn('too-big', statuses)
        self.assertEqual('RESERVED', statuses['big-1'])

    def test_bad_hints_are_400_and_create_nothing(self):
        for params, field in (('{not json', 'lease_params'),
                              ('{"start": "soon"}', 'lease_params.start'),
                              ('{"colour": "red"}', 'lease_params.colour')):
            error = self.boot('bad', params, '--nic', 'none',
                              expect_failure=True)
            self.assertIn(field + ':', error)
            self.assertIn('HTTP 400', error)
        error = self.nova('boot', '--flavor', '1', '--image', self.image,
                          '--hint', 'reserved=maybe', 'bad',
                          expect_failure=True)
        self.assertIn('reserved: must be true or false', error)
        self.assertNotIn('bad', self.statuses())

    def nova_leases(self):
        return [lease['name'] for lease in self.run_json(
            ['openstack', 'reservation', 'lease', 'list'], user='demo')]
