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

"""Waiting for Nova, Cinder and the image API (no real sleeping)."""

import fixtures

from reservation_ext.clients import polling
from reservation_ext import exceptions
from tests import base


class WaitForTest(base.TestCase):

    def setUp(self):
        super().setUp()
        self.now = 0.0
        self.sleeps = []
        self.useFixture(fixtures.MockPatchObject(
            polling.time, 'monotonic', side_effect=lambda: self.now))
        self.useFixture(fixtures.MockPatchObject(
            polling.time, 'sleep', side_effect=self.sleep))

    def sleep(self, seconds):
        self.sleeps.append(seconds)
        self.now += seconds

    def test_returns_the_first_value_that_is_done(self):
        values = iter(['building', 'building', 'active'])
        self.assertEqual('active', polling.wait_for(
            lambda: next(values), lambda value: value == 'active', 10, 2,
            str))
        self.assertEqual([2, 2], self.sleeps)

    def test_a_value_done_at_once_does_not_sleep(self):
        polling.wait_for(lambda: 'active', bool, 10, 1, str)
        self.assertEqual([], self.sleeps)

    def test_time_up_raises_with_the_last_value(self):
        error = self.assertRaises(
            exceptions.PluginError, polling.wait_for,
            lambda: 'building', lambda value: False, 5, 1,
            lambda value: 'still %s' % value)
        self.assertEqual('still building', error.message)
        # The last fetch was the first one after the timeout.
        self.assertEqual(6, self.now)

    def test_done_may_stop_early(self):
        def done(value):
            raise exceptions.PluginError('went to ERROR')
        self.assertRaises(exceptions.PluginError, polling.wait_for,
                          lambda: 'ERROR', done, 10, 1, str)
        self.assertEqual([], self.sleeps)
