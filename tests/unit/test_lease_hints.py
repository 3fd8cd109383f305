"""Lease requests from server/volume create hints."""

import datetime

from reservation_ext import exceptions
from reservation_ext.leases import hints as lease_hints
from tests import base

NOW = datetime.datetime(2027, 1, 1, 12, 0)
DAY = datetime.timedelta(days=1)
ON_END = ('snapshot_delete', 'delete', 'shelve')


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
                          'before_end_date': None,
                          'on_end': 'snapshot_delete'}, lease)

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

    def test_lease_body(self):
        lease = parse({'lease_params': {'duration': '1d',
                                        'before_end': '2027-01-02 11:00'}})
        body = lease_hints.lease_body(lease, {'resource_type': 'x:y',
                                              'size_gb': 1})
        self.assertEqual({
            'name': 'vm1', 'start_date': '2027-01-01T12:00:00.000000',
            'end_date': '2027-01-02T12:00:00.000000',
            'before_end_date': '2027-01-02T11:00:00.000000',
            'reservations': [{'resource_type': 'x:y', 'size_gb': 1,
                              'on_end': 'snapshot_delete'}]}, body)
