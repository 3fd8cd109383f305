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

"""The power policy (reservation_ext.power.policy), on a manual clock."""

import datetime

import testtools

from reservation_ext import clock as clock_mod
from reservation_ext.power import policy

MINUTE = datetime.timedelta(minutes=1)
HOUR = datetime.timedelta(hours=1)
# 30 minutes off at least, on 15 minutes ahead, no spare unless said.
SETTINGS = policy.Settings(min_off_time=30 * MINUTE, lead_time=15 * MINUTE,
                           spare_hosts=0)


class PolicyTest(testtools.TestCase):

    def setUp(self):
        super().setUp()
        self.clock = clock_mod.ManualClock(datetime.datetime(2030, 1, 1, 12))

    @property
    def now(self):
        return self.clock.now()

    def window(self, start, length=HOUR):
        """A window ``start`` from now, ``length`` long."""
        return (self.now + start, self.now + start + length)

    def next_of(self, host, settings=SETTINGS):
        return policy.plan([host], self.now, settings)[host.id]

    def test_an_idle_host_that_is_on_is_switched_off_now(self):
        self.assertEqual(policy.Transition(policy.POWER_OFF, self.now,
                                           policy.IDLE),
                         self.next_of(policy.Host(1)))

    def test_a_host_held_now_is_switched_off_when_its_window_ends(self):
        host = policy.Host(1, windows=(self.window(-HOUR, 2 * HOUR),))
        self.assertEqual(self.now + HOUR, self.next_of(host).at)

    def test_a_gap_shorter_than_min_off_time_keeps_the_host_on(self):
        # 40 minutes free, 15 of them lead time: 25 < 30 minutes off.
        host = policy.Host(1, windows=(self.window(40 * MINUTE),))
        transition = self.next_of(host)
        self.assertEqual(policy.POWER_OFF, transition.action)
        self.assertEqual(self.now + 100 * MINUTE, transition.at)
        self.assertFalse(transition.due(self.now))

    def test_a_gap_as_long_as_min_off_time_switches_the_host_off(self):
        # 45 minutes free: 15 lead time, 30 off.
        host = policy.Host(1, windows=(self.window(45 * MINUTE),))
        self.assertTrue(self.next_of(host).due(self.now))

    def test_a_short_gap_between_windows_is_skipped_for_a_long_one(self):
        host = policy.Host(1, windows=(
            self.window(-HOUR, 2 * HOUR),
            self.window(HOUR + 20 * MINUTE),
            self.window(4 * HOUR)))
        # After the second window (2:20) the gap to 4:00 is long enough.
        self.assertEqual(self.now + 140 * MINUTE, self.next_of(host).at)

    def test_a_host_that_is_off_is_switched_on_lead_time_ahead(self):
        host = policy.Host(1, state=policy.OFF,
                           windows=(self.window(2 * HOUR),))
        self.assertEqual(policy.Transition(
            policy.POWER_ON, self.now + 2 * HOUR - 15 * MINUTE,
            policy.BOOKING), self.next_of(host))

    def test_a_host_off_past_its_lead_time_is_switched_on_at_once(self):
        host = policy.Host(1, state=policy.OFF,
                           windows=(self.window(5 * MINUTE),))
        self.assertEqual(self.now, self.next_of(host).at)

    def test_an_idle_host_that_is_off_stays_off(self):
        self.assertIsNone(self.next_of(policy.Host(1, state=policy.OFF)))

    def test_a_host_coming_up_waits_for_nova(self):
        self.assertIsNone(self.next_of(
            policy.Host(1, state=policy.POWERING_ON)))

    def test_the_first_idle_hosts_stay_on_as_spares(self):
        hosts = [policy.Host(i) for i in (3, 1, 2)]
        planned = policy.plan(hosts, self.now,
                              policy.Settings(spare_hosts=2))
        # In the order given (the planner's preference), not by id.
        self.assertIsNone(planned[3])
        self.assertIsNone(planned[1])
        self.assertEqual(policy.POWER_OFF, planned[2].action)

    def test_a_busy_host_is_no_spare(self):
        hosts = [policy.Host(1, windows=(self.window(-HOUR, 2 * HOUR),)),
                 policy.Host(2)]
        planned = policy.plan(hosts, self.now,
                              policy.Settings(spare_hosts=1))
        self.assertIsNone(planned[2])
        self.assertEqual(self.now + HOUR, planned[1].at)

    def test_too_few_spares_on_switch_the_preferred_idle_ones_on(self):
        hosts = [policy.Host(i, state=policy.OFF) for i in (1, 2, 3)]
        planned = policy.plan(hosts, self.now,
                              policy.Settings(spare_hosts=2))
        self.assertEqual(
            [policy.Transition(policy.POWER_ON, self.now, policy.SPARE)] * 2,
            [planned[1], planned[2]])
        self.assertIsNone(planned[3])

    def test_more_idle_hosts_on_than_spares_switch_no_other_on(self):
        hosts = [policy.Host(1), policy.Host(2, state=policy.OFF),
                 policy.Host(3, state=policy.OFF)]
        planned = policy.plan(hosts, self.now, SETTINGS)
        self.assertEqual(policy.POWER_OFF, planned[1].action)
        self.assertEqual({2: None, 3: None}, {2: planned[2], 3: planned[3]})

    def test_a_host_coming_up_counts_as_a_spare(self):
        hosts = [policy.Host(1, state=policy.POWERING_ON),
                 policy.Host(2, state=policy.OFF)]
        planned = policy.plan(hosts, self.now,
                              policy.Settings(spare_hosts=1))
        self.assertEqual({1: None, 2: None}, planned)

    def test_an_unmanaged_host_that_is_off_is_switched_on(self):
        host = policy.Host(1, state=policy.OFF, managed=False)
        self.assertEqual(policy.Transition(policy.POWER_ON, self.now,
                                           policy.UNMANAGED),
                         self.next_of(host))

    def test_an_unmanaged_host_that_is_on_is_left_alone(self):
        self.assertIsNone(self.next_of(policy.Host(1, managed=False)))

    def test_an_unmanaged_host_is_no_spare_to_switch_on(self):
        hosts = [policy.Host(1, state=policy.OFF, managed=False),
                 policy.Host(2, state=policy.OFF)]
        planned = policy.plan(hosts, self.now,
                              policy.Settings(spare_hosts=2))
        # 1 goes on because it is unmanaged; 2 as a spare.
        self.assertEqual(policy.UNMANAGED, planned[1].reason)
        self.assertEqual(policy.SPARE, planned[2].reason)

    def test_a_failed_host_is_not_switched_off(self):
        self.assertIsNone(self.next_of(policy.Host(1, failed=True)))

    def test_a_failed_host_is_no_spare(self):
        hosts = [policy.Host(1, failed=True), policy.Host(2)]
        planned = policy.plan(hosts, self.now,
                              policy.Settings(spare_hosts=1))
        self.assertIsNone(planned[1])
        self.assertIsNone(planned[2])

    def test_a_failed_host_that_is_off_is_switched_on_for_its_bookings(self):
        host = policy.Host(1, state=policy.OFF, failed=True,
                           windows=(self.window(HOUR),))
        self.assertEqual(policy.BOOKING, self.next_of(host).reason)

    def test_the_settings_come_from_the_power_options(self):
        conf = type('Conf', (), {'power': type('Power', (), {
            'min_off_time': 60, 'power_on_lead_time': 120,
            'spare_hosts': 3, 'spare_share': 0.1})})
        self.assertEqual(policy.Settings(MINUTE, 2 * MINUTE, 3, 0.1),
                         policy.Settings.from_conf(conf))

    def test_a_share_of_the_hosts_stays_on_when_it_is_more_spares(self):
        settings = policy.Settings(spare_hosts=1, spare_share=0.25)
        self.assertEqual(1, settings.spares(2))
        self.assertEqual(3, settings.spares(9))
        self.assertEqual(25, settings.spares(100))
        hosts = [policy.Host(i) for i in range(1, 9)]
        planned = policy.plan(hosts, self.clock.now(), settings)
        # Two of eight idle hosts stay on; the others go off now.
        self.assertEqual([None, None] + [policy.POWER_OFF] * 6,
                         [planned[h.id] and planned[h.id].action
                          for h in hosts])

    def test_a_later_clock_plans_from_its_now(self):
        host = policy.Host(1, windows=(self.window(40 * MINUTE),))
        self.assertEqual(self.now + 100 * MINUTE, self.next_of(host).at)
        self.clock.advance(minutes=90)
        # Held now, until its window ends 10 minutes later.
        self.assertEqual(self.now + 10 * MINUTE, self.next_of(host).at)
