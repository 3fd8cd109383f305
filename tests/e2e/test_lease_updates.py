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

"""Lease updates with the unmodified ``openstack reservation lease set``.

python-blazarclient 4.6 turns ``--prolong-for``, ``--reduce-by``,
``--defer-by`` and ``--advance-by`` into dates itself, from the lease it
reads first, and sends Blazar's update body; ``--reservation`` sends the
changed fields of one reservation.
"""

from tests.e2e import base

# compute-3 and compute-4 have a gpu.
RESERVABLE = {'compute-2': 'false', 'compute-3': 'true', 'compute-4': 'true'}
GPU_HOST = 'resource_type=physical:host,min=1,max=1,' \
           'resource_properties=["=", "$gpu", "true"]'


def _reservation_of(lease):
    [reservation] = base.listed_objects(lease['reservations'])
    return reservation


def _events_of(lease):
    return {event['event_type']: event['time'][:16]
            for event in base.listed_objects(lease['events'])}


class TestLeaseUpdates(base.SandboxTestCase):

    def setUp(self):
        super().setUp()
        self.add_reservable_hosts(RESERVABLE)

    def create(self, name, start, end, *options):
        self.run_cli(['openstack', 'reservation', 'lease', 'create',
                      '--reservation', GPU_HOST, '--start-date', start,
                      '--end-date', end] + list(options) + [name],
                     user='demo')
        self.addCleanup(self.run_cli, ['openstack', 'reservation', 'lease',
                                       'delete', name], user='demo')
        return self.show(name)

    def show(self, name):
        return self.run_json(['openstack', 'reservation', 'lease', 'show',
                              name], user='demo')

    def set(self, name, *options, expect_failure=False):
        return self.run_cli(['openstack', 'reservation', 'lease', 'set'] +
                            list(options) + [name], user='demo',
                            expect_failure=expect_failure)

    def window(self, name):
        lease = self.show(name)
        return lease['start_date'][:16], lease['end_date'][:16]

    def test_every_lease_set_option_changes_a_pending_lease(self):
        lease = self.create('upd', '2031-03-10 09:00', '2031-03-12 09:00',
                            '--before-end-date', '2031-03-11 09:00')
        self.assertEqual('2031-03-11T09:00',
                         _events_of(lease)['before_end_lease'])
        self.assertIn('Updated lease: upd', self.set(
            'upd', '--name', 'upd2'))
        self.set('upd2', '--start-date', '2031-03-10 10:00')
        self.set('upd2', '--end-date', '2031-03-12 10:00')
        self.assertEqual(('2031-03-10T10:00', '2031-03-12T10:00'),
                         self.window('upd2'))
        self.set('upd2', '--prolong-for', '1d')
        self.assertEqual('2031-03-13T10:00', self.window('upd2')[1])
        self.set('upd2', '--reduce-by', '12h')
        self.assertEqual('2031-03-12T22:00', self.window('upd2')[1])
        self.set('upd2', '--defer-by', '2h')
        self.assertEqual('2031-03-10T12:00', self.window('upd2')[0])
        self.set('upd2', '--advance-by', '30m')
        lease = self.show('upd2')
        self.assertEqual('2031-03-10T11:30', lease['start_date'][:16])
        # Moving the end put the before-end event back to its default.
        self.assertEqual({'start_lease': '2031-03-10T11:30',
                          'before_end_lease': '2031-03-12T21:00',
                          'end_lease': '2031-03-12T22:00'},
                         _events_of(lease))
        reservation_id = _reservation_of(lease)['id']
        self.set('upd2', '--reservation',
                 'id=%s,min=2,max=2' % reservation_id)
        reservation = _reservation_of(self.show('upd2'))
        self.assertEqual((2, 2), (reservation['min'], reservation['max']))
        self.assertEqual('PENDING', self.show('upd2')['status'])
        self.run_cli(['openstack', 'reservation', 'lease', 'set', '--name',
                      'upd', 'upd2'], user='demo')

    def test_a_refused_update_names_the_field_and_changes_nothing(self):
        before = self.create('steady', '2031-04-10 09:00',
                             '2031-04-12 09:00')
        error = self.set('steady', '--end-date', '2031-04-09 09:00',
                         expect_failure=True)
        self.assertIn('end_date', error)
        error = self.set('steady', '--reservation',
                         'id=%s,min=4,max=4' % _reservation_of(before)['id'],
                         expect_failure=True)
        self.assertIn('Not enough hosts', error)
        self.assertEqual(before, self.show('steady'))

    def test_an_extension_a_later_lease_blocks_says_until_when(self):
        before = self.create('first', '2031-05-10 09:00',
                             '2031-05-12 09:00')
        # Both gpu hosts are taken from 12:00.
        self.create('second', '2031-05-12 12:00', '2031-05-14 09:00')
        self.create('third', '2031-05-12 12:00', '2031-05-14 09:00')
        error = self.set('first', '--prolong-for', '1d',
                         expect_failure=True)
        self.assertIn('The lease can be extended until 2031-05-12 12:00 at '
                      'the latest.', error)
        self.assertEqual(before, self.show('first'))
        self.set('first', '--end-date', '2031-05-12 12:00')
        self.assertEqual('2031-05-12T12:00', self.window('first')[1])
