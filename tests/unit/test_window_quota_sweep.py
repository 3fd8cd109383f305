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

"""The peak of a window's bookings, and the quota errors' wording."""

import datetime

from reservation_ext.enforcement import window_quotas
from reservation_ext import exceptions
from tests import base

T0 = datetime.datetime(2031, 6, 1, 9, 0)
HOUR = datetime.timedelta(hours=1)
RESOURCES = ('instances', 'cores')


def booking(start_hour, end_hour, instances, cores=0):
    return (T0 + start_hour * HOUR, T0 + end_hour * HOUR,
            {'instances': instances, 'cores': cores})


class PeakUsageTest(base.TestCase):

    def peak(self, bookings, start_hour, end_hour):
        return window_quotas.peak_usage(RESOURCES, bookings,
                                        T0 + start_hour * HOUR,
                                        T0 + end_hour * HOUR)

    def test_bookings_that_meet_end_to_start_do_not_add_up(self):
        self.assertEqual({'instances': 2, 'cores': 0}, self.peak(
            [booking(0, 1, 2), booking(1, 2, 2)], 0, 2))

    def test_the_peak_may_be_at_a_later_start_within_the_window(self):
        self.assertEqual({'instances': 5, 'cores': 4}, self.peak(
            [booking(0, 4, 2), booking(2, 3, 3, cores=4)], 0, 4))

    def test_each_resource_peaks_on_its_own(self):
        self.assertEqual({'instances': 3, 'cores': 8}, self.peak(
            [booking(0, 1, 3, cores=1), booking(1, 2, 1, cores=8)], 0, 2))

    def test_bookings_outside_the_window_count_for_nothing(self):
        self.assertEqual({'instances': 1, 'cores': 0}, self.peak(
            [booking(0, 1, 5), booking(1, 3, 1), booking(3, 4, 5)], 1, 3))


class QuotaErrorsTest(base.TestCase):

    def test_the_compute_error_is_novas_message_and_a_403(self):
        error = exceptions.ComputeQuotaExceeded(
            ['cores', 'ram'], [6, 1536], [0, 0], [4, 1024])
        self.assertEqual((403, 'Quota exceeded for cores, ram: Requested '
                          '6, 1536, but already used 0, 0 of 4, 1024 cores, '
                          'ram'), (error.code, error.message))

    def test_the_volume_errors_are_cinders_messages_and_a_403(self):
        gigabytes = exceptions.VolumeQuotaExceeded(
            ['gigabytes', 'volumes'], [5, 1], [6, 1], [10, 1])
        volumes = exceptions.VolumeQuotaExceeded(['volumes'], [1], [2], [2])
        self.assertEqual(
            (403, 'Requested volume or snapshot exceeds allowed gigabytes '
             'quota. Requested 5G, quota is 10G and 6G has been consumed.'),
            (gigabytes.code, gigabytes.message))
        self.assertEqual("Maximum number of volumes allowed (2) exceeded "
                         "for quota 'volumes'.", volumes.message)
