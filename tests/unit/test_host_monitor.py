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

"""The host monitor's decisions: which hosts fail or recover, what moves
together, when Nova is read."""

import datetime

from reservation_ext import clock as clock_mod
from reservation_ext.engine import host_monitor
from reservation_ext.planning import healing
from tests import base
from tests.unit import test_engine

NOW = datetime.datetime(2030, 1, 1, 12, 0)


def service(host, state='up', status='enabled'):
    return {'host': host, 'state': state, 'status': status}


class ChangesTest(base.TestCase):

    def test_a_down_or_disabled_service_fails_its_host(self):
        self.assertEqual(
            ({'a': 'down', 'b': 'disabled', 'c': 'down'}, []),
            host_monitor.changes({'a': None, 'b': None, 'c': None}, [
                service('a', state='down'),
                service('b', status='disabled'),
                service('c', state='down', status='disabled')]))

    def test_a_failed_host_whose_service_is_up_and_enabled_is_back(self):
        self.assertEqual(({}, ['a']), host_monitor.changes(
            {'a': 'down', 'b': 'disabled'},
            [service('a'), service('b', status='disabled')]))

    def test_a_host_already_failed_does_not_fail_again(self):
        self.assertEqual(({}, []), host_monitor.changes(
            {'a': 'disabled'}, [service('a', state='down')]))

    def test_services_of_hosts_not_reservable_and_hosts_not_listed_are_left(
            self):
        self.assertEqual(({}, []), host_monitor.changes(
            {'a': 'down', 'b': None}, [service('other', state='down')]))

    def test_a_service_the_power_manager_disabled_is_left_alone(self):
        switched = dict(service('a', state='down', status='disabled'),
                        disabled_reason='reservation-ext: powered off, idle')
        other = dict(service('b', status='disabled'),
                     disabled_reason='maintenance')
        self.assertEqual(({'b': 'disabled'}, []), host_monitor.changes(
            {'a': None, 'b': None}, [switched, other]))


class GroupsTest(base.TestCase):

    bookings = [healing.Booking(str(i), 1, NOW, NOW, False, (1, 512, 1))
                for i in range(3)]

    def test_each_booking_moves_alone_by_default(self):
        self.assertEqual([[b] for b in self.bookings],
                         healing.groups(self.bookings, healing.Request()))

    def test_affinity_moves_them_together(self):
        self.assertEqual([self.bookings], healing.groups(
            self.bookings, healing.Request(together=True)))
        self.assertEqual([], healing.groups(
            [], healing.Request(together=True)))


class MonitorOffTest(base.TestCase):

    def monitor(self, **overrides):
        self.clock = clock_mod.ManualClock(NOW)
        conf = test_engine.make_conf(self, **overrides)
        return host_monitor.HostMonitor(conf, self.clock, {}, None, None)

    def test_a_monitor_that_is_off_does_nothing(self):
        # No clients, no DB: run() must not touch either.
        self.assertEqual(0, self.monitor(host_monitor=False).run(None))
