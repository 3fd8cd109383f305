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

"""Volume reservation with the unmodified cinder client against the sandbox.

``cinder create --hint reserved=True --hint lease_params=...`` goes to the
sandbox's cinder-api with the reservation extension; the sandbox's engine
starts and ends the lease through Cinder's API.
"""

import datetime
import json

from reservation_ext.sandbox import config
from tests.e2e import base


def _date(moment):
    return moment.strftime('%Y-%m-%d %H:%M:%S')


def _lease_params(start, end, **params):
    return 'lease_params=' + json.dumps(dict(params, start=_date(start),
                                             end=_date(end)))


class TestVolumeReservation(base.SandboxTestCase):

    HOSTS = 1

    def cinder(self, *argv, **kwargs):
        return self.run_cli(['cinder'] + list(argv), **kwargs)

    def volumes(self):
        """``{name: status}`` of the demo project's volumes."""
        rows = [line.split('|') for line in self.cinder(
            'list', user='demo').splitlines() if line.startswith('| ')]
        return {row[3].strip(): row[2].strip() for row in rows[1:]}

    def test_reserved_volume_lives_in_its_lease_window(self):
        now = datetime.datetime.utcnow()
        out = self.cinder(
            'create', '--hint', 'reserved=True', '--hint',
            _lease_params(now + datetime.timedelta(seconds=8),
                          now + datetime.timedelta(seconds=20)),
            '--name', 'scratch', '1', user='demo')
        self.assertRegex(out, r'\| status +\| reserved +\|')
        # The lease is in the volume's metadata, never beside it.
        self.assertRegex(out, r"\| metadata +\| \{'reservation:lease_id': "
                         r"'[0-9a-f-]{36}', 'reservation:end': "
                         r"'[0-9-]+T[0-9:]+Z'\} ")
        self.assertNotRegex(out, r'\| reservation:lease_id ')
        self.assertEqual({'scratch': 'reserved'}, self.volumes())
        self.wait_for(lambda: self.volumes() == {'scratch': 'available'},
                      timeout=60, interval=0.5)
        self.wait_for(lambda: self.volumes() == {}, timeout=60,
                      interval=0.5)

    def test_snapshot_delete_leaves_an_image_of_the_volume(self):
        now = datetime.datetime.utcnow()
        self.cinder(
            'create', '--hint', 'reserved=True', '--hint',
            _lease_params(now, now + datetime.timedelta(seconds=10),
                          on_end='snapshot_delete'),
            '--name', 'results', '1', user='demo')
        self.wait_for(lambda: self.volumes() == {'results': 'available'},
                      timeout=60, interval=0.5)
        self.wait_for(lambda: self.volumes() == {}, timeout=120,
                      interval=0.5)
        image = self.run_json(['openstack', 'image', 'show',
                               'results-snapshot'], user='demo')
        project = self.run_json(['openstack', 'project', 'show', 'demo'])
        self.assertEqual(('active', 'raw', project['id']),
                         (image['status'], image['disk_format'],
                          image['owner']))
        self.assertEqual(1024 ** 3, image['size'])

    def test_over_capacity_is_409_and_creates_nothing(self):
        start = datetime.datetime.utcnow() + datetime.timedelta(days=30)
        err = self.cinder(
            'create', '--hint', 'reserved=True', '--hint',
            _lease_params(start, start + datetime.timedelta(days=1)),
            '--name', 'big', str(config.VOLUME_RESERVABLE_GB + 1),
            user='demo', expect_failure=True)
        self.assertIn('Not enough volume capacity', err)
        self.assertIn('HTTP 409', err)
        self.assertNotIn('big', self.volumes())

    def test_bad_hints_are_400_and_create_nothing(self):
        start = datetime.datetime.utcnow() + datetime.timedelta(days=30)
        for hints, field in (
                (['reserved=maybe'], 'reserved'),
                (['reserved=True', 'lease_params={"start": "soon"}'],
                 'lease_params.start'),
                (['reserved=True', _lease_params(
                    start, start - datetime.timedelta(days=1))],
                 'lease_params.end')):
            argv = ['create', '--name', 'bad']
            for hint in hints:
                argv += ['--hint', hint]
            err = self.cinder(*(argv + ['1']), user='demo',
                              expect_failure=True)
            self.assertIn(field + ':', err)
            self.assertIn('HTTP 400', err)
        self.assertNotIn('bad', self.volumes())
        leases = self.run_json(['openstack', 'reservation', 'lease', 'list'],
                               user='demo')
        self.assertEqual([], [lease for lease in leases
                              if lease['name'].startswith('bad-')])
