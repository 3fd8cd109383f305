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

"""Schedule proposals and availability with the real ``openstack`` CLI.

``openstack reservation lease propose``, ``lease create-from-proposal``
and ``availability show`` (this package's OpenStackClient plugin, beside
python-blazarclient's commands) against the sandbox, whose proposals
expire after :data:`TTL` seconds.
"""

import datetime
import json
import time

from tests.e2e import base

TTL = 20
GPU = '["=", "$gpu", "true"]'
GPU_HOSTS = ['compute-%d' % index for index in range(1, 6)]
FOUR_GPU_HOSTS = ('resource_type=physical:host,min=4,max=4,'
                  'resource_properties=' + GPU)


def _date(moment):
    return moment.strftime('%Y-%m-%d %H:%M')


def _parsed(text):
    return datetime.datetime.strptime(text, '%Y-%m-%dT%H:%M:%S.%f')


class TestProposals(base.SandboxTestCase):

    HOSTS = 6
    OPTIONS = ('--proposal-ttl', str(TTL))

    def setUp(self):
        super().setUp()
        existing = {host['hypervisor_hostname'] for host in self.run_json(
            ['openstack', 'reservation', 'host', 'list'])}
        for index in range(1, self.HOSTS + 1):
            name = 'compute-%d' % index
            if name not in existing:
                gpu = 'true' if name in GPU_HOSTS else 'false'
                self.run_cli(['openstack', 'reservation', 'host', 'create',
                              '--extra', 'gpu=' + gpu, name])

    def propose(self, user, *options):
        return self.run_json(['openstack', 'reservation', 'lease', 'propose',
                              '--reservation', FOUR_GPU_HOSTS,
                              '--duration', '1h'] + list(options), user=user)

    def free_gpu_hosts(self, start, end):
        return self.run_json([
            'openstack', 'reservation', 'availability', 'show',
            '--resource-type', 'physical:host', '--start', start, '--end',
            end, '--resource-properties', GPU])

    def test_create_a_lease_from_the_third_of_five_proposals(self):
        tomorrow = datetime.datetime.now(
            datetime.timezone.utc) + datetime.timedelta(days=1)
        proposals = self.propose('admin', '--not-after', _date(tomorrow))
        self.assertEqual(5, len(proposals))
        starts = [_parsed(p['start_date']) for p in proposals]
        self.assertEqual(sorted(set(starts)), starts)
        for proposal in proposals:
            self.assertEqual(datetime.timedelta(hours=1),
                             _parsed(proposal['end_date']) -
                             _parsed(proposal['start_date']))
            self.assertEqual(4, len(json.loads(proposal['hosts'])))
        third = proposals[2]

        lease = self.run_json(['openstack', 'reservation', 'lease',
                               'create-from-proposal', third['id'],
                               'from-third'])
        self.assertEqual((third['start_date'], third['end_date']),
                         (lease['start_date'], lease['end_date']))
        (reservation,) = json.loads(lease['reservations'])
        self.assertEqual({'reservation': reservation['id']},
                         reservation['scheduler_hints'])
        allocations = self.run_json(['openstack', 'reservation',
                                     'allocation', 'list', 'host'])
        booked = sorted(
            self.run_json(['openstack', 'reservation', 'host', 'show',
                           str(allocation['resource_id'])])[
                'hypervisor_hostname']
            for allocation in allocations
            if any(r['id'] == reservation['id']
                   for r in allocation['reservations']))
        self.assertEqual(sorted(json.loads(third['hosts'])), booked)
        # The other proposals of the request went with it.
        error = self.run_cli(['openstack', 'reservation', 'lease',
                              'create-from-proposal', proposals[0]['id'],
                              'from-first'], expect_failure=True)
        self.assertIn('Proposal %s could not be found' % proposals[0]['id'],
                      error)
        self.run_cli(['openstack', 'reservation', 'lease', 'delete',
                      'from-third'])

    def test_a_held_window_is_refused_to_others_until_it_expires(self):
        start, end = '2031-03-01 09:00', '2031-03-01 10:00'
        (proposal,) = self.propose('admin', '--not-before', start,
                                   '--count', '1')
        self.assertEqual('2031-03-01T09:00:00.000000',
                         proposal['start_date'])
        create = ['openstack', 'reservation', 'lease', 'create',
                  '--reservation', 'resource_type=physical:host,min=2,'
                  'max=2,resource_properties=' + GPU,
                  '--start-date', start, '--end-date', end, 'other-user']
        error = self.run_cli(create, user='demo', expect_failure=True)
        self.assertIn('Not enough hosts available', error)
        self.assertEqual([1], [step['free (hosts)'] for step in
                               self.free_gpu_hosts(start, end)])

        time.sleep(max(0, (_parsed(proposal['expires_at']) -
                           datetime.datetime.utcnow()).total_seconds()) + 1)
        self.assertEqual([5], [step['free (hosts)'] for step in
                               self.free_gpu_hosts(start, end)])
        out = self.run_cli(create, user='demo')
        self.assertIn('Created a new lease', out)
        error = self.run_cli(['openstack', 'reservation', 'lease',
                              'create-from-proposal', proposal['id'],
                              'too-late'], expect_failure=True)
        self.assertIn('expired', error)
        self.run_cli(['openstack', 'reservation', 'lease', 'delete',
                      'other-user'], user='demo')

    def test_bad_requests_name_the_field_and_hold_nothing(self):
        start = '2031-04-01 09:00'
        cases = [
            (['--reservation', FOUR_GPU_HOSTS, '--duration', '0'],
             'duration: must be longer than 0'),
            (['--reservation', FOUR_GPU_HOSTS, '--duration', '1h',
              '--not-after', '2031-03-31 09:00'],
             'not_after: must not be before not_before'),
            (['--reservation', FOUR_GPU_HOSTS, '--duration', '1h',
              '--count', '0'], 'count: must be an integer of at least 1'),
            (['--reservation', FOUR_GPU_HOSTS, '--duration', '1h',
              '--count', '1000'], 'count: must be at most 20'),
            (['--reservation', FOUR_GPU_HOSTS + ',colour=red',
              '--duration', '1h'], 'reservations[0].colour: unknown key'),
            (['--reservation', 'resource_type=physical:host,min=6,max=6,'
              'resource_properties=' + GPU, '--duration', '1h'],
             'reservations[0].resource_properties: 5 reservable host(s) '
             'match the request, 6 wanted'),
        ]
        for options, message in cases:
            with self.subTest(options=options):
                error = self.run_cli(
                    ['openstack', 'reservation', 'lease', 'propose',
                     '--not-before', start] + options, user='demo',
                    expect_failure=True)
                self.assertIn('ERROR: ' + message, error)
        self.assertEqual([5], [step['free (hosts)'] for step in
                               self.free_gpu_hosts(start,
                                                   '2031-04-01 12:00')])

    def test_lease_wait_follows_a_lease_and_the_chart_draws_its_hosts(self):
        now = datetime.datetime.now(datetime.timezone.utc)
        end = _date(now + datetime.timedelta(hours=2))
        self.run_cli(['openstack', 'reservation', 'lease', 'create',
                      '--reservation', 'resource_type=physical:host,min=2,'
                      'max=2,resource_properties=' + GPU,
                      '--start-date', 'now', '--end-date', end, 'waited'],
                     user='demo')
        self.run_cli(['openstack', 'reservation', 'lease', 'wait', 'waited',
                      '--interval', '0.5', '--timeout', '60'], user='demo')
        self.assertEqual('ACTIVE', self.run_json(
            ['openstack', 'reservation', 'lease', 'show', 'waited'],
            user='demo')['status'])
        error = self.run_cli(['openstack', 'reservation', 'lease', 'wait',
                              'waited', '--for', 'pending'], user='demo',
                             expect_failure=True)
        self.assertIn('Lease waited: the lease is ACTIVE and will not be '
                      'PENDING', error)

        chart = self.run_cli([
            'openstack', 'reservation', 'availability', 'chart',
            '--resource-type', 'physical:host', '--end', end,
            '--resource-properties', GPU, '--width', '20'], user='demo')
        lines = chart.splitlines()
        self.assertTrue(lines[0].startswith('free hosts (physical:host), '),
                        chart)
        self.assertTrue(lines[0].endswith('UTC, at most 3'), chart)
        # Three of five free all along: the strip is level, 20 wide.
        self.assertEqual(' ' * 16 + ' ▕' + '█' * 20 + '▏', lines[1])
        self.assertTrue(lines[3].endswith('█' * 30 + ' 3'), chart)

        lease_id = self.run_json(['openstack', 'reservation', 'lease',
                                  'show', 'waited'], user='demo')['id']
        self.run_cli(['openstack', 'reservation', 'lease', 'delete',
                      'waited'], user='demo')
        self.run_cli(['openstack', 'reservation', 'lease', 'wait', 'waited',
                      '--for', 'deleted', '--interval', '0.5'], user='demo')
        # By id too, once the lease is gone.
        self.run_cli(['openstack', 'reservation', 'lease', 'wait', lease_id,
                      '--for', 'deleted'], user='demo')
        error = self.run_cli(['openstack', 'reservation', 'lease', 'wait',
                              lease_id], user='demo', expect_failure=True)
        self.assertIn('Lease %s could not be found.' % lease_id, error)
        error = self.run_cli(['openstack', 'reservation', 'lease', 'wait',
                              'waited'], user='demo', expect_failure=True)
        self.assertIn("Unable to find resource with name 'waited'", error)

    def test_lease_wait_gives_up_at_its_timeout_with_the_status(self):
        start = datetime.datetime.now(
            datetime.timezone.utc) + datetime.timedelta(hours=3)
        self.run_cli(['openstack', 'reservation', 'lease', 'create',
                      '--reservation', 'resource_type=physical:host,min=1,'
                      'max=1,resource_properties=' + GPU, '--start-date',
                      _date(start), '--end-date',
                      _date(start + datetime.timedelta(hours=1)), 'later'],
                     user='demo')
        # Where a later lease goes next: PENDING, its hosts booked.
        self.run_cli(['openstack', 'reservation', 'lease', 'wait', 'later'],
                     user='demo')
        error = self.run_cli(['openstack', 'reservation', 'lease', 'wait',
                              'later', '--for', 'active', '--timeout', '2',
                              '--interval', '1'], user='demo',
                             expect_failure=True)
        self.assertIn('later: PENDING, waiting for active', error)
        self.assertIn('Lease later is still PENDING after 2s of waiting for '
                      'active', error)
        self.run_cli(['openstack', 'reservation', 'lease', 'delete',
                      'later'], user='demo')
