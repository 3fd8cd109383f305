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

"""The energy simulation (bench/energy.py) on tiny traces.

What it must show whatever the timings: with ``noop`` every host stays
on; with the power policy idle hosts go off and come back on before
their bookings start, a lease made to start now lands on the spare that
is on, and a start on a host that is not on counts as late.
"""

import datetime

from bench import energy
from bench import utilization
from tests import base

T0 = utilization.T0
HOUR = datetime.timedelta(hours=1)
BOOT = datetime.timedelta(minutes=5)


def host_lease(at, start, hours, hosts=1, n=0):
    """A host lease of the trace, times in hours after T0."""
    start = T0 + start * HOUR
    return utilization.Request(T0 + at * HOUR, utilization.HOST_LEASE,
                               start, start + hours * HOUR, hosts, None,
                               'host-%d' % n)


class EnergyTest(base.DBTestCase):

    def run_power(self, power, trace, hosts=3, **options):
        line, sim = energy.simulate(
            power, trace, hosts, 1, 0, energy.make_conf(power, **options),
            BOOT)
        return line, sim

    def test_noop_keeps_every_host_on(self):
        line, _sim = self.run_power('noop', [host_lease(0, 6, 4)])
        self.assertEqual(0, line['host_hours_off'])
        self.assertEqual(0, line['late_starts'])
        # 3 hosts for a day, one booked for 4 hours.
        self.assertEqual(68.0, line['idle_host_hours'])

    def test_idle_hosts_go_off_and_come_on_before_their_booking(self):
        # Two hosts from 6 to 10; the third, booked by nobody, is the
        # spare and stays on.
        line, sim = self.run_power('power', [host_lease(0, 6, 4, hosts=2)])
        self.assertEqual(0, line['late_starts'])
        booted = sorted(start for intervals in sim.booting.values()
                        for start, _up in intervals)
        # The booked hosts power_on_lead_time (15 minutes) before the
        # start.
        self.assertEqual([T0 + 6 * HOUR - datetime.timedelta(minutes=15)] * 2,
                         booted)
        # Of the 64 idle host-hours, the spare's 24 are not off; the
        # others are, until they boot at 5:45 and after 10.
        self.assertEqual(64.0, line['idle_host_hours'])
        self.assertEqual(39.5, line['host_hours_off'])

    def test_a_lease_made_to_start_now_lands_on_the_spare_that_is_on(self):
        line, _sim = self.run_power('power', [host_lease(5, 5, 4)])
        self.assertEqual(0, line['late_starts'])

    def test_a_start_on_a_host_that_is_off_is_late(self):
        # One spare is on: the second host of a lease made to start now
        # is off, and boots.
        line, _sim = self.run_power('power', [host_lease(5, 5, 4, hosts=2)])
        self.assertEqual(1, line['late_starts'])
        self.assertEqual(0, line['late_starts_made_ahead'])
        line, _sim = self.run_power('power', [host_lease(5, 5, 4, hosts=2)],
                                    spare_hosts=2)
        self.assertEqual(0, line['late_starts'])

    def test_savings_are_over_noop_on_the_same_trace(self):
        lines = energy.with_savings({
            power: self.run_power(power, [host_lease(0, 6, 4)])[0]
            for power in energy.POLICIES})
        self.assertEqual(0.0, lines['noop']['kwh_saved'])
        self.assertGreater(lines['power']['kwh_saved'], 0)
