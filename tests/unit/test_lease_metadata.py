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

"""The lease's keys in server and volume metadata."""

import datetime

from reservation_ext import exceptions
from reservation_ext.leases import metadata
from tests import base

LEASE = metadata.Lease('lease-1', 'project-1',
                       datetime.datetime(2027, 12, 1, 16, 7, 30, 999))


class ShownTest(base.TestCase):

    def test_the_lease_is_shown_beside_the_users_keys(self):
        self.assertEqual(
            {'role': 'web', 'reservation:lease_id': 'lease-1',
             'reservation:end': '2027-12-01T16:07:30Z'},
            metadata.shown({'role': 'web'}, LEASE))

    def test_stored_lease_keys_are_never_shown(self):
        stored = {'role': 'web', 'reservation:lease_id': 'forged',
                  'reservation:end': '2000-01-01T00:00:00Z'}
        self.assertEqual({'role': 'web'}, metadata.shown(stored, None))
        self.assertEqual('lease-1', metadata.shown(stored, LEASE)[
            'reservation:lease_id'])
        self.assertEqual({}, metadata.shown(None, None))

    def test_a_preemptible_servers_reclaim_time_is_shown_beside_them(self):
        self.assertEqual(
            {'role': 'web', 'reservation:reclaim_after':
             '2027-12-01T15:57:00Z'},
            metadata.shown({'role': 'web'}, None,
                           datetime.datetime(2027, 12, 1, 15, 57, 0, 5),
                           metadata.SERVER_KEYS))

    def test_a_stored_reclaim_time_is_never_shown_on_a_server(self):
        stored = {'role': 'web', 'reservation:reclaim_after': 'forged'}
        self.assertEqual({'role': 'web'}, metadata.shown(
            stored, None, None, metadata.SERVER_KEYS))
        # A volume has no reclaim time: the key is the user's there.
        self.assertEqual(stored, metadata.shown(stored, None))


class CheckNotSetTest(base.TestCase):

    def test_the_reclaim_key_of_a_server_is_400_naming_it(self):
        error = self.assertRaises(
            exceptions.InvalidInput, metadata.check_not_set,
            {'reservation:reclaim_after': 'x'}, 'server.metadata',
            metadata.SERVER_KEYS)
        self.assertEqual('server.metadata.reservation:reclaim_after',
                         error.field)
        self.assertIn('is shown from the bookings', error.message)
        # Of a volume, it is the user's.
        metadata.check_not_set({'reservation:reclaim_after': 'x'})

    def test_a_lease_key_is_400_naming_it(self):
        for keys, field, named in (
                ({'a': 'b', 'reservation:end': 'x'}, 'metadata',
                 'metadata.reservation:end'),
                ('reservation:lease_id', 'metadata',
                 'metadata.reservation:lease_id'),
                ({'reservation:lease_id': 'x'}, 'server.metadata',
                 'server.metadata.reservation:lease_id')):
            error = self.assertRaises(exceptions.InvalidInput,
                                      metadata.check_not_set, keys, field)
            self.assertEqual(named, error.field)
            self.assertIn('is shown from the lease', error.message)

    def test_other_keys_and_unreadable_bodies_are_left_to_the_service(self):
        for keys in ({'role': 'web'}, 'role', None, 7, ['reservation'],
                     {'reservation:other': 'x'}):
            metadata.check_not_set(keys)
