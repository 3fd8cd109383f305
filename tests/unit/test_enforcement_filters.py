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

"""MaxLeaseDurationFilter: Blazar's limit, and Chameleon's window."""

import datetime

from oslo_config import cfg

from reservation_ext import clock as clock_mod
from reservation_ext import conf as conf_mod
from reservation_ext.enforcement import filters
from reservation_ext import exceptions
from tests import base

D = datetime.datetime
DAY = 86400
CONTEXT = {'user_id': 'u1', 'project_id': 'p1', 'auth_url': None,
           'region_name': None}


def lease(start, end):
    return {'start_date': start, 'end_date': end, 'reservations': []}


class _FilterTest(base.TestCase):

    def setUp(self):
        super().setUp()
        self.conf = cfg.ConfigOpts()
        conf_mod.register_opts(self.conf)
        self.conf([])
        self.conf.set_override('max_lease_duration', DAY,
                               group='enforcement')
        self.clock = clock_mod.ManualClock(D(2027, 1, 10, 9, 0))

    def make(self):
        return filters.load(self.conf, self.clock,
                            ['MaxLeaseDurationFilter'])[0]


class MaxLeaseDurationFilterTest(_FilterTest):

    def test_a_lease_as_long_as_the_maximum_may_be_created(self):
        self.make().check_create(CONTEXT, lease(D(2027, 1, 10),
                                                D(2027, 1, 11)))

    def test_a_longer_lease_is_refused_with_blazars_message(self):
        exc = self.assertRaises(
            exceptions.EnforcementRefused, self.make().check_create,
            CONTEXT, lease(D(2027, 1, 10), D(2027, 1, 11, 0, 1)))
        self.assertEqual(403, exc.code)
        self.assertEqual(
            'Lease duration of 86460 seconds must be less than or equal to '
            'the maximum lease duration of 86400 seconds.', exc.message)

    def test_minus_one_means_no_limit(self):
        self.conf.set_override('max_lease_duration', -1, group='enforcement')
        self.make().check_create(CONTEXT, lease(D(2027, 1, 10),
                                                D(2030, 1, 10)))

    def test_an_exempt_project_may_create_a_longer_lease(self):
        self.conf.set_override('max_lease_duration_exempt_project_ids',
                               ['p1'], group='enforcement')
        self.make().check_create(CONTEXT, lease(D(2027, 1, 10),
                                                D(2027, 2, 10)))

    def test_an_extension_past_the_maximum_is_refused(self):
        self.assertRaises(
            exceptions.EnforcementRefused, self.make().check_update,
            CONTEXT, lease(D(2027, 1, 10), D(2027, 1, 11)),
            lease(D(2027, 1, 10), D(2027, 1, 11, 1)))

    def test_shortening_a_lease_that_is_too_long_is_allowed(self):
        self.make().check_update(
            CONTEXT, lease(D(2027, 1, 10), D(2027, 1, 20)),
            lease(D(2027, 1, 10), D(2027, 1, 19)))

    def test_moving_the_start_earlier_counts_as_an_extension(self):
        self.assertRaises(
            exceptions.EnforcementRefused, self.make().check_update,
            CONTEXT, lease(D(2027, 1, 11), D(2027, 1, 12)),
            lease(D(2027, 1, 10, 12), D(2027, 1, 12)))


class ExtensionWindowTest(_FilterTest):
    """``reservation_extension_window`` set: renew near the end only."""

    def setUp(self):
        super().setUp()
        # Extensions in the last 2 hours before the end.
        self.conf.set_override('reservation_extension_window', 7200,
                               group='enforcement')
        self.current = lease(D(2027, 1, 10, 0), D(2027, 1, 11, 0))

    def test_an_extension_before_the_window_opens_is_refused(self):
        self.clock.set(D(2027, 1, 10, 21, 59))
        exc = self.assertRaises(
            exceptions.EnforcementRefused, self.make().check_update,
            CONTEXT, self.current, lease(D(2027, 1, 10), D(2027, 1, 11, 1)))
        self.assertIn('in the last 7200 seconds before its end '
                      '(2027-01-11T00:00:00.000000)', exc.message)

    def test_in_the_window_a_lease_may_be_extended_by_the_maximum(self):
        self.clock.set(D(2027, 1, 10, 22, 0))
        self.make().check_update(CONTEXT, self.current,
                                 lease(D(2027, 1, 10), D(2027, 1, 12)))

    def test_in_the_window_a_longer_extension_is_refused(self):
        self.clock.set(D(2027, 1, 10, 23, 0))
        self.assertRaises(
            exceptions.EnforcementRefused, self.make().check_update,
            CONTEXT, self.current, lease(D(2027, 1, 10),
                                         D(2027, 1, 12, 0, 1)))

    def test_an_exempt_project_extends_whenever_it_likes(self):
        self.conf.set_override('max_lease_duration_exempt_project_ids',
                               ['p1'], group='enforcement')
        self.make().check_update(CONTEXT, self.current,
                                 lease(D(2027, 1, 10), D(2027, 3, 1)))


class FilterLoadingTest(base.TestCase):

    def test_an_unknown_filter_name_is_an_error_naming_the_known_ones(self):
        conf = cfg.ConfigOpts()
        conf_mod.register_opts(conf)
        conf([])
        exc = self.assertRaises(ValueError, filters.load, conf,
                                clock_mod.SYSTEM, ['NoSuchFilter'])
        self.assertIn('NoSuchFilter', str(exc))
        self.assertIn('ExternalServiceFilter, MaxLeaseDurationFilter',
                      str(exc))

    def test_the_external_service_filter_needs_a_url(self):
        conf = cfg.ConfigOpts()
        conf_mod.register_opts(conf)
        conf([])
        exc = self.assertRaises(ValueError, filters.load, conf,
                                clock_mod.SYSTEM, ['ExternalServiceFilter'])
        self.assertIn('external_service_base_endpoint', str(exc))
