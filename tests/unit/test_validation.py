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

"""Validation of dates, durations, names, keys and lease windows."""

import datetime

from reservation_ext import dates
from reservation_ext import exceptions
from reservation_ext.hosts import schemas as host_schemas
from reservation_ext import validation
from tests import base

NOW = datetime.datetime(2027, 1, 10, 9, 0, 30)
D = datetime.datetime


class _Assertions:

    def assertInvalid(self, expected_field, func, /, *args, **kwargs):
        exc = self.assertRaises(exceptions.InvalidInput, func, *args,
                                **kwargs)
        self.assertEqual(expected_field, exc.field)
        return exc


class ParseDateTest(_Assertions, base.TestCase):

    def test_accepted_forms(self):
        for value, expected in [
                ('now', NOW),
                (' NOW ', NOW),
                ('2013-12-01 16:07', D(2013, 12, 1, 16, 7)),
                ('2013-12-1 16:07', D(2013, 12, 1, 16, 7)),
                ('2013-1-1 6:07', D(2013, 1, 1, 6, 7)),
                ('2013-12-01 16:07:09', D(2013, 12, 1, 16, 7, 9)),
                ('2017-12-26T12:00:00.000000', D(2017, 12, 26, 12)),
                ('2017-12-26T12:00:00.5', D(2017, 12, 26, 12, 0, 0, 500000)),
                ('2027-01-10T09:00:00+02:00', D(2027, 1, 10, 7)),
                ('2027-01-10T09:00:00-0130', D(2027, 1, 10, 10, 30)),
                ('2027-01-10T09:00:00Z', D(2027, 1, 10, 9)),
                ('2027-01-10 00:30+01:00', D(2027, 1, 9, 23, 30)),
        ]:
            self.assertEqual(expected,
                             dates.parse_date(value, 'end', NOW), value)

    def test_rejected_forms(self):
        for value in ['', 'tomorrow', '2027-01-10', '27-01-10 09:00',
                      '2027-13-01 09:00', '2027-02-30 09:00',
                      '2027-01-10 24:00', '2027-01-10 09:60',
                      '2027-01-10 9:0', '2027/01/10 09:00',
                      '2027-01-10T09:00:00+25:00', '2027-01-10 09:00 UTC',
                      None, 20270110, ['now']]:
            self.assertInvalid('start_date', dates.parse_date, value,
                               'start_date', NOW)

    def test_message_is_blazars_after_the_field(self):
        exc = self.assertInvalid('end', dates.parse_date, 'soon',
                                 'end', NOW)
        self.assertTrue(str(exc).startswith(
            'end: soon is an invalid date. Required format: '
            '%Y-%m-%d %H:%M'), str(exc))
        exc = self.assertInvalid('end_date', dates.parse_date,
                                 '2027-13-01 10:00', 'end_date', NOW)
        self.assertTrue(str(exc).startswith(
            'end_date: 2027-13-01 10:00 is an invalid date. Required '
            'format: %Y-%m-%d %H:%M ('), str(exc))


class ParseDurationTest(_Assertions, base.TestCase):

    def test_accepted_forms(self):
        td = datetime.timedelta
        for value, expected in [
                ('5d', td(days=5)), ('12h', td(hours=12)),
                ('30m', td(minutes=30)), ('45s', td(seconds=45)),
                ('1d12h', td(days=1, hours=12)),
                ('1d2h3m4s', td(days=1, hours=2, minutes=3, seconds=4)),
                ('90', td(seconds=90)), (' 90 ', td(seconds=90)),
                (3600, td(hours=1)),
        ]:
            self.assertEqual(expected,
                             dates.parse_duration(value, 'duration'),
                             value)

    def test_rejected_forms(self):
        for value in ['', 'd', '5x', '12h5d', '1.5h', '-5', '5 d',
                      None, True, 1.5, [], '0', 0, -1, '0d0h',
                      10 ** 20, '9' * 30, '9' * 5000]:
            self.assertInvalid('duration', dates.parse_duration,
                               value, 'duration')

    def test_zero_is_rejected_as_too_short(self):
        exc = self.assertInvalid('duration', dates.parse_duration,
                                 '0m', 'duration')
        self.assertIn('longer than 0', exc.reason)


class ValidateNameTest(_Assertions, base.TestCase):

    def test_accepted(self):
        self.assertEqual('lease1', validation.validate_name('lease1', 'n'))
        self.assertEqual('a b', validation.validate_name('  a b \t', 'n'))
        self.assertEqual('x' * 80, validation.validate_name('x' * 80, 'n'))
        self.assertEqual('caf\xe9', validation.validate_name('caf\xe9', 'n'))

    def test_rejected(self):
        for value in ['', '   ', 'x' * 81, 'a\nb', 'a\x00b', 'a\x7fb',
                      'a\x85b', None, 42, ['a']]:
            self.assertInvalid('name', validation.validate_name, value,
                               'name')


SCHEMA = {
    'type': 'object',
    'properties': {
        'name': {'type': 'string'},
        'reservations': {'type': 'array', 'items': {
            'type': 'object',
            'properties': {'min': validation.INTEGER,
                           'on_end': {'enum': ['delete', 'shelve']}},
            'additionalProperties': False,
            'required': ['min'],
        }},
        'projects': {'type': 'array', 'items': {
            'type': 'string', 'minLength': 1, 'maxLength': 4}},
        'zone': validation.nullable(validation.TEXT),
    },
    'additionalProperties': False,
}


class CheckSchemaTest(_Assertions, base.TestCase):

    def check(self, body, field=''):
        validation.check_schema(body, SCHEMA, field)

    def test_a_matching_body_passes(self):
        self.check({})
        self.check({'name': 'n', 'reservations': [{'min': '2'}],
                    'projects': ['p1'], 'zone': None})

    def test_first_unknown_key_is_named(self):
        exc = self.assertInvalid('reservations[1].zz', self.check, {
            'reservations': [{'min': 1}, {'min': 1, 'zzz': 2, 'zz': 3}]})
        self.assertEqual('unknown key', exc.reason)

    def test_unknown_keys_come_before_bad_values(self):
        self.assertInvalid('colour', self.check,
                           {'name': 5, 'colour': 'red'})

    def test_a_missing_key_is_named(self):
        exc = self.assertInvalid('reservations[0].min', self.check,
                                 {'reservations': [{}]})
        # Blazar's message (MissingParameter).
        self.assertEqual('Missing parameter min', exc.reason)

    def test_body_must_be_an_object(self):
        exc = self.assertInvalid('body', self.check, [])
        self.assertEqual('must be an object', exc.reason)
        self.assertInvalid('lease_params', self.check, 'x', 'lease_params')

    def test_fields_below_a_named_field(self):
        self.assertInvalid('lease_params.name', self.check, {'name': 1},
                           'lease_params')

    def test_reasons_read_as_sentences(self):
        for body, field, reason in [
                ({'name': 1}, 'name', 'must be a string'),
                ({'zone': 1}, 'zone', 'must be a non-empty string'),
                ({'zone': ''}, 'zone', 'must be a non-empty string'),
                ({'reservations': [{'min': 1.5}]}, 'reservations[0].min',
                 'must be an integer'),
                ({'reservations': [{'min': 1, 'on_end': 'x'}]},
                 'reservations[0].on_end',
                 "must be one of: 'delete', 'shelve'"),
                ({'projects': ['p1', '']}, 'projects[1]',
                 'must be at least 1 characters'),
                ({'projects': ['p12345']}, 'projects[0]',
                 'must be at most 4 characters'),
        ]:
            exc = self.assertInvalid(field, self.check, body)
            self.assertEqual(reason, exc.reason)


class FieldNameTest(base.TestCase):

    def test_paths_read_as_the_user_wrote_them(self):
        self.assertEqual('reservations[0].min', validation.field_name(
            ['reservations', 0, 'min']))
        self.assertEqual('lease_params.start', validation.field_name(
            ['start'], 'lease_params'))
        self.assertEqual('hosts[1]', validation.field_name(['hosts', 1]))
        self.assertEqual('body', validation.field_name([]))


class ParseIntegerTest(_Assertions, base.TestCase):

    def test_numbers_and_text_from_python_blazarclient(self):
        self.assertEqual(2, validation.parse_integer(2, 'min'))
        self.assertEqual(2, validation.parse_integer('2', 'min'))
        self.assertEqual(0, validation.parse_integer('0', 'min'))

    def test_rejected(self):
        for value in ['two', '', '1.5', 1.5, True, None, [1]]:
            self.assertInvalid('min', validation.parse_integer, value, 'min')

    def test_minimum(self):
        exc = self.assertInvalid('min', validation.parse_integer, '0', 'min',
                                 minimum=1)
        self.assertEqual('must be at least 1', exc.reason)


class PrefixedTest(_Assertions, base.TestCase):

    def test_the_prefix_names_the_reservation(self):
        def fail():
            with validation.prefixed('reservations[1].'):
                raise exceptions.InvalidInput('min', 'is required')
        self.assertInvalid('reservations[1].min', fail)


class WindowTest(_Assertions, base.TestCase):

    def test_the_current_minute_is_blazars_now(self):
        self.assertEqual(D(2027, 1, 10, 9, 0),
                         dates.current_minute(NOW))
        self.assertEqual(D(2027, 1, 10, 9, 0), dates.current_minute(
            D(2027, 1, 10, 9, 0, 59, 999999)))

    def test_a_start_in_the_current_minute_counts_as_now(self):
        dates.check_start(NOW, NOW)
        # "09:00" typed at 09:00:30 is meant as now.
        dates.check_start(D(2027, 1, 10, 9, 0), NOW)
        dates.check_start(D(2027, 1, 10, 9, 0),
                          D(2027, 1, 10, 9, 0, 59, 999999))

    def test_a_start_before_the_current_minute_is_in_the_past(self):
        exc = self.assertInvalid('start_date', dates.check_start,
                                 D(2027, 1, 10, 8, 59, 59), NOW)
        self.assertEqual('Start date must be later than current date',
                         exc.reason)
        self.assertInvalid('start', dates.check_start,
                           D(2020, 1, 1), NOW, field='start')

    def test_an_end_in_the_current_minute_counts_as_now(self):
        dates.check_end(NOW + datetime.timedelta(seconds=1), NOW)
        dates.check_end(NOW, NOW)
        # An update to "09:00" at 09:00:30 ends the lease now.
        dates.check_end(D(2027, 1, 10, 9, 0), NOW)

    def test_an_end_before_the_current_minute_is_refused(self):
        exc = self.assertInvalid('end_date', dates.check_end,
                                 D(2027, 1, 10, 8, 59, 59), NOW)
        self.assertEqual('End date must be later than current and start '
                         'date', exc.reason)
        self.assertInvalid('reduce_by', dates.check_end,
                           D(2020, 1, 1), NOW, field='reduce_by')

    def test_good_windows(self):
        start, end = D(2027, 1, 10, 9), D(2027, 1, 12, 9)
        dates.check_window(start, end)
        dates.check_window(start, end, start)
        dates.check_window(start, end, end)
        dates.check_window(start, end, D(2027, 1, 11))

    def test_end_not_after_start(self):
        start = D(2027, 1, 10, 9)
        self.assertInvalid('end_date', dates.check_window, start, start)
        self.assertInvalid('end_date', dates.check_window, start,
                           D(2027, 1, 9))

    def test_before_end_outside_the_window(self):
        start, end = D(2027, 1, 10, 9), D(2027, 1, 12, 9)
        for before_end in [D(2027, 1, 10, 8, 59), D(2027, 1, 12, 9, 1)]:
            self.assertInvalid('before_end_date', dates.check_window,
                               start, end, before_end)

    def test_field_names_of_server_hints(self):
        fields = ('start', 'end', 'before_end')
        start, end = D(2027, 1, 10, 9), D(2027, 1, 12, 9)
        exc = self.assertInvalid('end', dates.check_window, start,
                                 start, fields=fields)
        self.assertEqual('End date must be later than start date.',
                         exc.reason)
        self.assertInvalid('before_end', dates.check_window, start,
                           end, D(2028, 1, 1), fields=fields)

    def test_add_beyond_the_calendar(self):
        self.assertEqual(D(2027, 1, 11, 9, 0, 30),
                         dates.add(NOW, datetime.timedelta(days=1),
                                   'duration'))
        self.assertInvalid('duration', dates.add, NOW,
                           datetime.timedelta(days=999999999), 'duration')


class FormatDateTest(base.TestCase):

    def test_format(self):
        self.assertEqual('2017-12-26T12:00:00.000000',
                         dates.format_date(D(2017, 12, 26, 12)))
        self.assertIsNone(dates.format_date(None))

    def test_round_trip(self):
        value = D(2017, 12, 26, 12, 0, 0, 123456)
        self.assertEqual(value, dates.parse_date(
            dates.format_date(value), 'end_date', NOW))


class LoadJSONTest(_Assertions, base.TestCase):
    """JSON a user sent: read once, no deeper than anyone can walk."""

    def test_a_body_at_the_depth_limit_is_read(self):
        depth = validation.MAX_DEPTH
        text = '[' * depth + ']' * depth
        self.assertEqual(depth, text.count('['))
        value = validation.load_json(text)
        for _ in range(depth - 1):
            value = value[0]
        self.assertEqual([], value)

    def test_a_body_one_level_too_deep_names_where(self):
        depth = validation.MAX_DEPTH + 1
        exc = self.assertInvalid(
            'a' + '.a' * (validation.MAX_DEPTH - 1), validation.load_json,
            '{"a": ' * depth + '1' + '}' * depth)
        self.assertIn('nested too deeply', exc.reason)

    def test_thousands_of_levels_are_a_bad_request(self):
        for text in ('[' * 50000 + ']' * 50000,
                     '{"a": ' * 50000 + '1' + '}' * 50000):
            self.assertInvalid('body', validation.load_json, text)

    def test_the_field_of_a_nested_json_text(self):
        self.assertInvalid('lease_params', validation.load_json,
                           '[' * 5000 + ']' * 5000, 'lease_params')
        self.assertInvalid('lease_params', validation.load_json, '{',
                           'lease_params')

    def test_nan_and_infinity_are_not_json(self):
        for text in ('NaN', '[Infinity]', '{"a": -Infinity}'):
            exc = self.assertInvalid('body', validation.load_json, text)
            self.assertIn('not valid JSON', exc.reason)

    def test_lone_surrogates_are_not_text(self):
        self.assertInvalid('body', validation.load_json, '"\\ud800"')
        self.assertInvalid('name', validation.load_json,
                           '{"name": "a\\udfffb"}')
        self.assertInvalid('reservations[0]', validation.load_json,
                           '{"reservations": [{"\\ud800": 1}]}')
        self.assertEqual({'name': '\U0001f642'}, validation.load_json(
            '{"name": "\\ud83d\\ude42"}'))

    def test_bytes_that_are_not_utf8(self):
        self.assertInvalid('body', validation.load_json, b'{"a": "\xc3"}')


class IntegerRangeTest(_Assertions, base.TestCase):
    """Integers a user sends fit the DB's columns; digits are ASCII."""

    def test_check_schema_names_an_integer_too_large(self):
        exc = self.assertInvalid(
            'reservations[0].min', validation.check_schema,
            {'reservations': [{'min': 2 ** 31}]}, {'type': 'object'})
        self.assertEqual('must be at most 2147483647', exc.reason)
        self.assertInvalid('count', validation.check_schema,
                           {'count': -2 ** 31 - 1}, {'type': 'object'})
        validation.check_schema({'min': 2 ** 31 - 1, 'max': -2 ** 31,
                                 'b': True, 'f': 1e300}, {'type': 'object'})

    def test_parse_integer_takes_ascii_digits_only(self):
        for value in ('١٢', '²', '１２', '1_000', '12a', '', ' ', 1.5):
            self.assertInvalid('min', validation.parse_integer, value, 'min')
        self.assertEqual(7, validation.parse_integer(' 7 ', 'min'))
        self.assertEqual(2 ** 31 - 1,
                         validation.parse_integer(str(2 ** 31 - 1), 'min'))

    def test_parse_integer_beyond_the_db(self):
        for value in (2 ** 31, str(2 ** 31), '9' * 5000):
            exc = self.assertInvalid('max', validation.parse_integer, value,
                                     'max')
            self.assertEqual('must be at most 2147483647', exc.reason)

    def test_durations_and_dates_in_other_digits(self):
        for value in ('²', '١٢', '١h', '²d'):
            exc = self.assertInvalid('duration', dates.parse_duration,
                                     value, 'duration')
            self.assertIn('invalid duration', exc.reason)
        self.assertInvalid('start_date', dates.parse_date,
                           '٢٠٢٧-٠١-١٠ ١٠:٠٠', 'start_date', NOW)
        self.assertInvalid('start_date', dates.parse_date,
                           '2027-01-10 ١٠:00', 'start_date', NOW)

    def test_database_id(self):
        self.assertEqual(12, validation.database_id('12'))
        self.assertEqual(12, validation.database_id(12))
        for text in ('١٢', '²', str(2 ** 31), '9' * 400, '-1', ' 1', ''):
            self.assertIsNone(validation.database_id(text))


class UnreadableFieldTest(base.TestCase):

    def test_a_field_with_no_readable_name_is_quoted(self):
        for field in ('', ' ', '\n', 'a\x00b', ' 0', 'x '):
            exc = exceptions.InvalidInput(field, 'unknown key')
            self.assertEqual('%r: unknown key' % field, exc.message)
        self.assertEqual('reservations[0].min: bad',
                         exceptions.InvalidInput('reservations[0].min',
                                                 'bad').message)


class HostNameTest(_Assertions, base.TestCase):
    """Host names as Nova's hypervisor search takes them."""

    def test_names_nova_refuses_are_a_bad_request_naming_the_field(self):
        for name in ('compute 1', 'compute-1/x', 'compute-1\n', '../x',
                     'ü', 'a?b=1', 'x' * 256, ''):
            exc = self.assertInvalid('name', validation.check_schema,
                                     {'name': name}, host_schemas.CREATE)
            self.assertNotIn('os-hypervisors', exc.message)

    def test_names_nova_takes(self):
        for name in ('compute-1', 'host_2.example.org',
                     '1b4a6a28-0f8a-4b48-8c76-f2f2b0bb8ab3', '3'):
            validation.check_schema({'name': name, 'gpu': 'true'},
                                    host_schemas.CREATE)

    def test_capability_values_fit_their_column(self):
        self.assertInvalid('gpu', validation.check_schema,
                           {'name': 'compute-1', 'gpu': 'x' * 256},
                           host_schemas.CREATE)
