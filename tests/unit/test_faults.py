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

"""The fault injection of the functional tests replays with its seed."""

import requests

from tests import base
from tests import faults

ACTION = 'http://nova/v2.1/servers/s1/action'
# Faults that never let a request through: nothing is sent.
REFUSING = ('refused', '500', '503', '409')


def _outcomes(transport, count=60):
    outcomes = []
    for _ in range(count):
        try:
            outcomes.append(transport.request('POST', ACTION).status_code)
        except requests.ConnectionError:
            outcomes.append('refused')
    return outcomes


class FaultyTransportTest(base.TestCase):

    def test_the_same_seed_injects_the_same_faults(self):
        first = faults.FaultyTransport(7, rate=1.0, kinds=REFUSING)
        again = faults.FaultyTransport(7, rate=1.0, kinds=REFUSING)
        other = faults.FaultyTransport(8, rate=1.0, kinds=REFUSING)
        outcomes = _outcomes(first)
        self.assertEqual(outcomes, _outcomes(again))
        self.assertNotEqual(outcomes, _outcomes(other))
        self.assertEqual({'refused', 500, 503, 409}, set(outcomes))
        self.assertEqual(60, first.calls)
        self.assertEqual(60, sum(first.counts.values()))

    def test_a_busy_409_is_only_for_server_actions(self):
        transport = faults.FaultyTransport(7, rate=1.0, kinds=('409',))
        self.assertIsNone(transport._draw('GET', ACTION[:-7], None))
        self.assertIsNone(transport._draw(
            'POST', 'http://nova/v2.1/os-aggregates/1/action', None))
        self.assertEqual('409', transport._draw('POST', ACTION, None))
        self.assertEqual({'409': 1}, dict(transport.counts))

    def test_first_time_chooses_each_request_once(self):
        transport = faults.FaultyTransport(
            7, rate=1.0, kinds=('500',), where=faults.first_time(
                lambda method, url, body: method == 'POST'))
        self.assertEqual('500', transport._draw('POST', ACTION, {'a': 1}))
        self.assertIsNone(transport._draw('POST', ACTION, {'a': 1}))
        self.assertEqual('500', transport._draw('POST', ACTION, {'b': 1}))
        self.assertIsNone(transport._draw('GET', ACTION, None))
