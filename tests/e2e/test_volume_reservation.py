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
starts and ends the lease through Cinder's API. Storage pool leases share
the sandbox: the admin registers two of its three pools, the demo user
leases one, and the unmodified ``openstack volume create --hint
reservation=<id>`` lands on it while other volumes keep off the
registered pools (the sandbox's Cinder runs ``ReservationFilter``).
"""

import datetime
import json

from reservation_ext.sandbox import config
from tests.e2e import base


def _date(moment):
    return moment.strftime('%Y-%m-%d %H:%M:%S')


# The sandbox's pools (reservation_ext.sandbox.config).
GOLD, SILVER, BRONZE = ('sandbox@ssd#gold', 'sandbox@ssd#silver',
                        'sandbox@hdd#bronze')
HOST = 'os-vol-host-attr:host'


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

    def register_pools(self):
        """Register gold and silver, each with its tier; removed after."""
        for pool in (GOLD, SILVER):
            self.run_json(['openstack', 'reservation', 'storage', 'pool',
                           'create', pool, '--extra',
                           'tier=' + pool.rpartition('#')[2]])
            self.addCleanup(self.run_cli, [
                'openstack', 'reservation', 'storage', 'pool', 'delete',
                pool])

    def new_volume(self, name, *hints, user='demo'):
        """Create a 1 GB volume; return the admin's view once it settled."""
        argv = ['openstack', 'volume', 'create', '--size', '1', name]
        for hint in hints:
            argv[3:3] = ['--hint', hint]
        volume_id = self.run_json(argv, user)['id']
        self.addCleanup(self.forget, volume_id)
        return self.wait_for(lambda: self.settled(volume_id), interval=0.5)

    def all_volumes(self):
        return {volume['ID'] for volume in self.run_json(
            ['openstack', 'volume', 'list', '--all-projects'])}

    def forget(self, volume_id):
        """Delete a volume if it is there; wait until it is gone."""
        if volume_id in self.all_volumes():
            self.run_cli(['openstack', 'volume', 'delete', volume_id])
        self.wait_for(lambda: volume_id not in self.all_volumes(),
                      interval=0.5)

    def end_lease(self, lease_id):
        """Delete a lease if it is there; wait until it is gone."""
        def ids():
            return {lease['id'] for lease in self.run_json(
                ['openstack', 'reservation', 'lease', 'list'], user='demo')}
        if lease_id in ids():
            self.run_cli(['openstack', 'reservation', 'lease', 'delete',
                          lease_id], user='demo')
        self.wait_for(lambda: lease_id not in ids(), interval=0.5)

    def settled(self, volume_id):
        """The admin's view of a volume no longer being created, or None."""
        volume = self.run_json(['openstack', 'volume', 'show', volume_id])
        return None if volume['status'] == 'creating' else volume

    def test_a_storage_pool_lease_takes_the_volumes_of_its_hint_only(self):
        self.register_pools()
        end = datetime.datetime.utcnow() + datetime.timedelta(hours=1)
        lease = self.run_json([
            'openstack', 'reservation', 'storage', 'lease', 'create',
            '--resource-properties', '["=", "$tier", "gold"]',
            '--on-end', 'delete_volumes', '--end-date',
            end.strftime('%Y-%m-%d %H:%M'), 'pool-lease'], user='demo')
        self.addCleanup(self.end_lease, lease['id'])
        # Its lists are JSON text, as python-blazarclient shows a lease.
        [reservation] = json.loads(lease['reservations'])
        self.assertEqual([GOLD], reservation['pools'])
        self.wait_for(lambda: self.run_json([
            'openstack', 'reservation', 'lease', 'show', lease['id']],
            user='demo')['status'] == 'ACTIVE', interval=0.5)

        hint = 'reservation=' + reservation['id']
        leased = self.new_volume('on-pool', hint)
        self.assertEqual(('available', GOLD), (leased['status'],
                                               leased[HOST]))
        other = self.new_volume('elsewhere')
        self.assertEqual(('available', BRONZE), (other['status'],
                                                 other[HOST]))
        # A project outside the lease finds no pool for the hint.
        self.assertEqual('error', self.new_volume(
            'not-mine', hint, user='admin')['status'])

        self.end_lease(lease['id'])
        # on_end delete_volumes: the lease's volumes on its pool go.
        self.wait_for(lambda: 'on-pool' not in self.volumes(), interval=0.5)
        self.assertEqual('available', self.volumes()['elsewhere'])
