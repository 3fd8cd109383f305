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

"""Lease requests from server/volume create hints."""

import datetime

from oslo_config import cfg

from reservation_ext import clock
from reservation_ext import exceptions
from reservation_ext.leases import hints as lease_hints
from reservation_ext.leases import parsing
from reservation_ext.plugins import virtual_volume
from tests import base

NOW = datetime.datetime(2027, 1, 1, 12, 0)
DAY = datetime.timedelta(days=1)
ON_END = ('snapshot_delete', 'delete', 'shelve')
VOLUME = '6f3c5b1e-2a4d-4c8e-9b7a-1d2e3f405162'


def parse(hints, **kwargs):
    return lease_hints.parse(hints, NOW, 'vm1', 30 * DAY, ON_END,
                             'snapshot_delete', **kwargs)


class ParseTest(base.TestCase):

    def assertInvalid(self, field, hints):
        error = self.assertRaises(exceptions.InvalidInput, parse, hints)
        self.assertEqual(field, error.field)
        self.assertEqual(400, error.code)

    def test_the_seed_line(self):
        lease = parse({'reserved': ['True'], 'lease_params': [
            '{"name": "lease1", "start": "now", "end": "2027-12-1 16:07"}']})
        self.assertEqual({'name': 'lease1', 'start_date': NOW,
                          'end_date': datetime.datetime(2027, 12, 1, 16, 7),
                          'before_end_date': None, 'starts_later': False,
                          'reservations': [], 'projects': [],
                          'trust_id': None,
                          'on_end': 'snapshot_delete'}, lease)

    def test_a_later_start_is_decided_when_parsed(self):
        lease = parse({'lease_params': {'start': '2027-01-01 12:01'}})
        self.assertTrue(lease['starts_later'])

    def test_no_hints_no_lease(self):
        self.assertIsNone(parse({}))
        self.assertIsNone(parse({'reserved': 'false'}))
        self.assertIsNone(parse({'group': ['g1']}))

    def test_defaults(self):
        for reserved in (True, 'true', '1', 'yes', ['True']):
            lease = parse({'reserved': reserved})
            self.assertEqual(('vm1', NOW, NOW + 30 * DAY),
                             (lease['name'], lease['start_date'],
                              lease['end_date']))

    def test_reserve_all_gives_hintless_requests_the_default_lease(self):
        lease = parse({}, reserve_all=True)
        self.assertEqual(NOW + 30 * DAY, lease['end_date'])

    def test_duration_before_end_and_on_end(self):
        lease = parse({'lease_params': {
            'start': '2027-01-02 00:00', 'duration': '12h',
            'before_end': '2027-01-02 11:00', 'on_end': 'shelve'}})
        self.assertEqual(datetime.datetime(2027, 1, 2, 12), lease['end_date'])
        self.assertEqual(datetime.datetime(2027, 1, 2, 11),
                         lease['before_end_date'])
        self.assertEqual('shelve', lease['on_end'])

    def test_bad_input_names_the_field(self):
        cases = [
            ('reserved', {'reserved': 'maybe'}),
            ('lease_params', {'reserved': 'True', 'lease_params': '{nope'}),
            ('lease_params', {'lease_params': '[1]'}),
            ('lease_params', {'reserved': 'false', 'lease_params': '{}'}),
            ('lease_params.colour', {'lease_params': {'colour': 'red'}}),
            ('lease_params.start', {'lease_params': {'start': 'soon'}}),
            ('lease_params.start',
             {'lease_params': {'start': '2026-12-31 11:00'}}),
            ('lease_params.end', {'lease_params': {'end': '2027-13-01'}}),
            ('lease_params.end',
             {'lease_params': {'start': '2027-02-01 00:00',
                               'end': '2027-01-15 00:00'}}),
            ('lease_params.duration', {'lease_params': {'duration': '0'}}),
            ('lease_params.duration', {'lease_params': {'duration': '-5m'}}),
            ('lease_params.duration',
             {'lease_params': {'end': '2027-02-01 00:00', 'duration': '1d'}}),
            ('lease_params.name', {'lease_params': {'name': 'x' * 81}}),
            ('lease_params.before_end',
             {'lease_params': {'duration': '1d',
                               'before_end': '2027-03-01 00:00'}}),
            ('lease_params.on_end', {'lease_params': {'on_end': 'explode'}}),
        ]
        for field, hints in cases:
            self.assertInvalid(field, hints)

    def test_the_request_gets_its_reservation_checked_by_the_plugin(self):
        lease = parse({'lease_params': {'duration': '1d'}})
        plugins = {'virtual:volume': virtual_volume.VirtualVolumePlugin(
            cfg.CONF, clock.SYSTEM)}
        request = parsing.with_reservation(
            lease, plugins, 'virtual:volume',
            {'size_gb': '2', 'volume_id': VOLUME.upper(), 'on_end': 'delete'})
        self.assertEqual([('virtual:volume', {
            'size_gb': 2, 'volume_id': VOLUME, 'volume_type': None,
            'availability_zone': None, 'on_end': 'delete'})],
            request['reservations'])
        self.assertEqual(NOW + DAY, request['end_date'])

    def test_a_bad_reservation_names_its_field(self):
        plugins = {'virtual:volume': virtual_volume.VirtualVolumePlugin(
            cfg.CONF, clock.SYSTEM)}
        error = self.assertRaises(
            exceptions.InvalidInput, parsing.with_reservation,
            parse({'reserved': True}), plugins, 'virtual:volume',
            {'size_gb': 0, 'volume_id': VOLUME})
        self.assertEqual('reservations[0].size_gb', error.field)
