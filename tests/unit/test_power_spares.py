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

"""The power policy's spares: idle hosts free for a while, kept on."""

import datetime

from reservation_ext.power import policy
from tests import base

NOW = datetime.datetime(2030, 1, 1)
MINUTE = datetime.timedelta(minutes=1)
SETTINGS = policy.Settings()


def window(start_minutes, minutes=60):
    start = NOW + start_minutes * MINUTE
    return (start, start + minutes * MINUTE)


class SparesTest(base.TestCase):

    def test_the_preferred_idle_host_on_stays_on_the_others_go_off(self):
        planned = policy.plan([policy.Host(2), policy.Host(1)], NOW,
                              SETTINGS)
        self.assertIsNone(planned[2])
        self.assertEqual(policy.POWER_OFF, planned[1].action)

    def test_a_host_booting_for_a_booking_is_not_the_spare(self):
        # Host 1 boots for its booking in 10 minutes; host 2 is the spare.
        planned = policy.plan(
            [policy.Host(1, policy.POWERING_ON, windows=(window(10),)),
             policy.Host(2)], NOW, SETTINGS)
        self.assertIsNone(planned[2])

    def test_a_host_on_for_a_booking_soon_is_not_the_spare(self):
        # Host 1's booking starts in 40 minutes: too soon to switch it
        # off (15 + 30), so it stays on; host 2 stays on as the spare.
        planned = policy.plan([policy.Host(1, windows=(window(40),)),
                               policy.Host(2)], NOW, SETTINGS)
        self.assertIsNone(planned[2])
        self.assertNotEqual(NOW, planned[1].at)

    def test_a_spare_is_switched_on_when_the_spare_is_booked_soon(self):
        planned = policy.plan(
            [policy.Host(1, windows=(window(5),)),
             policy.Host(2, policy.OFF), policy.Host(3, policy.OFF)],
            NOW, SETTINGS)
        self.assertEqual(policy.Transition(policy.POWER_ON, NOW,
                                           policy.SPARE), planned[2])
        self.assertIsNone(planned[3])

    def test_a_host_free_for_long_enough_can_be_the_spare(self):
        planned = policy.plan([policy.Host(1, windows=(window(50),)),
                               policy.Host(2, policy.OFF)], NOW, SETTINGS)
        self.assertIsNone(planned[1])
        self.assertIsNone(planned[2])

    def test_a_host_booked_by_nobody_is_the_spare_before_a_booked_one(self):
        planned = policy.plan([policy.Host(1, windows=(window(50),)),
                               policy.Host(2)], NOW, SETTINGS)
        self.assertEqual(policy.POWER_OFF, planned[1].action)
        self.assertIsNone(planned[2])

    def test_more_idle_hosts_on_than_spares_switch_no_host_on(self):
        planned = policy.plan(
            [policy.Host(1), policy.Host(2), policy.Host(3)] +
            [policy.Host(n, policy.OFF) for n in range(4, 10)], NOW,
            SETTINGS)
        self.assertEqual([], [host for host, transition in planned.items()
                              if transition is not None and
                              transition.action == policy.POWER_ON])
