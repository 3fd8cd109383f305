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

"""Lease-API bodies parsed into requests (no DB)."""

import datetime

from oslo_config import cfg

from reservation_ext import clock
from reservation_ext import exceptions
from reservation_ext.leases import parsing
from reservation_ext.plugins import physical_host
from tests import base

NOW = datetime.datetime(2027, 1, 10, 9, 0)
HOSTS = {'physical:host': physical_host.PhysicalHostPlugin(cfg.CONF,
                                                           clock.SYSTEM)}


def body(**changes):
    return dict({'name': 'lease1', 'start_date': '2027-01-10 10:00',
                 'end_date': '2027-01-12 10:00', 'events': [],
                 'reservations': [{'resource_type': 'physical:host',
                                   'min': '2', 'max': '3'}]}, **changes)


class ParseCreateTest(base.TestCase):

    def assertInvalid(self, field, body):
        error = self.assertRaises(exceptions.InvalidInput,
                                  parsing.parse_create, body, HOSTS, NOW)
        self.assertEqual(field, error.field)

    def test_python_blazarclients_numbers_as_text_work(self):
        request = parsing.parse_create(body(), HOSTS, NOW)
        [(resource_type, values)] = request['reservations']
        self.assertEqual(('physical:host', 2, 3),
                         (resource_type, values['min'], values['max']))

    def test_whether_it_starts_later_is_decided_once(self):
        self.assertTrue(parsing.parse_create(body(), HOSTS, NOW)[
            'starts_later'])
        self.assertFalse(parsing.parse_create(body(start_date='now'), HOSTS,
                                              NOW)['starts_later'])

    def test_each_project_once_in_the_order_given(self):
        request = parsing.parse_create(body(projects=['p2', 'p1', 'p2']),
                                       HOSTS, NOW)
        self.assertEqual(['p2', 'p1'], request['projects'])

    def test_plugin_fields_are_named_inside_their_reservation(self):
        self.assertInvalid('reservations[0].min', body(reservations=[
            {'resource_type': 'physical:host', 'min': '0'}]))
        self.assertInvalid('reservations[1].on_end', body(reservations=[
            {'resource_type': 'physical:host', 'min': 1, 'max': 1},
            {'resource_type': 'physical:host', 'min': 1, 'max': 1,
             'on_end': 'x'}]))

    def test_shapes_are_checked_before_dates(self):
        self.assertInvalid('trust_id', body(start_date='soon', trust_id=5))


class ParseUpdateTest(base.TestCase):

    def test_null_dates_change_nothing(self):
        self.assertEqual({'reservations': {}}, parsing.parse_update(
            {'start_date': None, 'end_date': None, 'prolong_for': None},
            NOW))

    def test_a_reservation_named_twice_is_refused(self):
        error = self.assertRaises(
            exceptions.InvalidInput, parsing.parse_update,
            {'reservations': [{'id': 'r1'}, {'id': 'r1'}]}, NOW)
        self.assertEqual('reservations[1].id', error.field)

    def test_prolong_for_is_a_shift_of_the_end(self):
        request = parsing.parse_update({'prolong_for': '1d'}, NOW)
        self.assertEqual((datetime.timedelta(days=1), 'prolong_for'),
                         (request['shift'], request['end_field']))
