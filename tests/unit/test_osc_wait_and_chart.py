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

"""What ``lease wait`` waits for, and how ``availability chart`` draws."""

import datetime
import io

from reservation_ext.osc import availability_chart
from reservation_ext.osc import lease_wait
from tests import base

NOW = datetime.datetime(2030, 1, 10, 9, 0, tzinfo=datetime.timezone.utc)


def _lease(status, start='2030-01-10T09:00:00.000000', reason=None):
    return {'name': 'l1', 'status': status, 'start_date': start,
            'status_reason': reason}


class LeaseWaitTest(base.TestCase):

    def test_a_lease_that_has_started_goes_to_active(self):
        self.assertEqual('active', lease_wait.default_target(
            _lease('STARTING'), NOW))

    def test_a_lease_that_starts_later_goes_to_pending(self):
        self.assertEqual('pending', lease_wait.default_target(
            _lease('PENDING', start='2030-01-10T09:00:01.000000'), NOW))

    def test_a_lease_being_deleted_goes_away(self):
        self.assertEqual('deleted', lease_wait.default_target(
            _lease('DELETING'), NOW))

    def test_error_fails_the_wait_with_the_leases_reason(self):
        self.assertEqual(
            'the lease went to ERROR: Not enough hosts available',
            lease_wait.failed(_lease('ERROR', reason='Not enough hosts '
                                     'available'), 'active'))

    def test_a_status_past_the_one_waited_for_fails_the_wait(self):
        self.assertEqual('the lease is TERMINATED and will not be ACTIVE',
                         lease_wait.failed(_lease('TERMINATED'), 'active'))
        self.assertIsNone(lease_wait.failed(_lease('STARTING'), 'active'))

    def test_a_deleted_lease_fails_every_wait_but_deleted(self):
        gone = lease_wait._GONE
        self.assertEqual('the lease was deleted',
                         lease_wait.failed(gone, 'pending'))
        self.assertIsNone(lease_wait.failed(gone, 'deleted'))
        self.assertTrue(lease_wait.reached(gone, 'deleted'))
        self.assertFalse(lease_wait.reached(_lease('ACTIVE'), 'deleted'))

    def test_the_progress_line_is_written_once_per_status_off_a_tty(self):
        out = io.StringIO()
        progress = lease_wait.Progress('l1', 'active', out)
        seen = [progress.done(_lease(status))
                for status in ('PENDING', 'STARTING', 'STARTING', 'ACTIVE')]
        self.assertEqual([False, False, False, True], seen)
        self.assertEqual(['l1: PENDING, waiting for active (0s)',
                          'l1: STARTING, waiting for active (0s)',
                          'l1: ACTIVE, waiting for active (0s)'],
                         out.getvalue().splitlines())

    def test_the_poll_returns_the_last_value_when_the_time_is_up(self):
        values = iter(range(100))
        self.assertEqual(0, lease_wait._poll(lambda: next(values),
                                             lambda value: False, 0, 0.01))

    def test_the_poll_stops_at_the_first_value_that_is_done(self):
        values = iter(range(100))
        self.assertEqual(3, lease_wait._poll(
            lambda: next(values), lambda value: value == 3, 60, 0))


def _step(start, end, amount):
    return {'start': '2030-01-10T%s:00.000000' % start,
            'end': '2030-01-10T%s:00.000000' % end, 'amount': amount}


AVAILABILITY = {
    'resource_type': 'physical:host', 'unit': 'hosts',
    'start': '2030-01-10T00:00:00.000000',
    'end': '2030-01-10T10:00:00.000000',
    'free': [_step('00:00', '04:00', 4), _step('04:00', '05:00', 1),
             _step('05:00', '10:00', 4)],
    'hosts': [{'host': 'compute-1',
               'free': [_step('00:00', '04:00', 1),
                        _step('05:00', '10:00', 1)]}]}


class AvailabilityChartTest(base.TestCase):

    def test_the_chart_has_a_strip_over_time_and_a_bar_per_step(self):
        self.assertEqual([
            'free hosts (physical:host), 2030-01-10 00:00 to 2030-01-10 '
            '10:00 UTC, at most 4',
            ' ' * 17 + '▕' + '████' + '▂' + '█████' + '▏',
            ' ' * 18 + '2030-01-10 00:00',
            '2030-01-10 00:00 ' + '█' * 30 + ' 4',
            '2030-01-10 04:00 ' + ('█' * 8).ljust(30) + ' 1',
            '2030-01-10 05:00 ' + '█' * 30 + ' 4',
            '2030-01-10 10:00'],
            availability_chart.render(AVAILABILITY, 10))

    def test_a_column_shows_the_least_free_in_its_slice_of_time(self):
        steps = [(datetime.datetime(2030, 1, 1, 0), datetime.datetime(
            2030, 1, 1, 1, 30), 8), (datetime.datetime(2030, 1, 1, 1, 30),
                                     datetime.datetime(2030, 1, 1, 2), 2)]
        self.assertEqual('█▂', availability_chart.strip(
            steps, datetime.datetime(2030, 1, 1), datetime.datetime(
                2030, 1, 1, 2), 2, 8))

    def test_a_slice_not_wholly_covered_has_nothing_free(self):
        steps = [(datetime.datetime(2030, 1, 1, 0), datetime.datetime(
            2030, 1, 1, 1, 30), 8)]
        self.assertEqual('█ ', availability_chart.strip(
            steps, datetime.datetime(2030, 1, 1), datetime.datetime(
                2030, 1, 1, 2), 2, 8))

    def test_per_host_a_host_is_blank_where_it_is_taken(self):
        lines = availability_chart.per_host(AVAILABILITY, 10)
        self.assertEqual('compute-1 ▕████ █████▏', lines[1])
        self.assertEqual(' ' * 11 + '2030-01-10 00:00', lines[2])

    def test_the_axis_shows_both_ends_when_they_fit(self):
        self.assertEqual('2030-01-10 00:00' + ' ' * 8 + '2030-01-10 10:00',
                         availability_chart.axis(
                             datetime.datetime(2030, 1, 10),
                             datetime.datetime(2030, 1, 10, 10), 40))
