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

"""The stack proposals benchmark (bench/stack_proposals.py), kept runnable.

The script runs on a tiny workload and prints a valid JSON line per case;
its model of the answer refuses a wrong one.
"""

import datetime
import json
import os
import subprocess
import sys

from bench import common
from bench import stack_proposals
from reservation_ext.planning import host_capacity
from tests import base

SCRIPT = os.path.join(common.TOP, 'bench', 'stack_proposals.py')
T0 = datetime.datetime(2030, 1, 1)
DAY = datetime.timedelta(days=1)
HALF = stack_proposals.FLAVORS[stack_proposals.BIG]


class ScriptTest(base.TestCase):

    def test_a_tiny_workload_prints_a_valid_line_per_case(self):
        if not os.path.isdir(os.path.join(common.DEFAULT_SHARED, 'bench')):
            self.skipTest('no shared folder at %s' % common.DEFAULT_SHARED)
        run = subprocess.run(
            [sys.executable, SCRIPT, '--hosts', '20', '--bookings', '60',
             '--reps', '2', '--count', '2', '--shares', '0.5'],
            capture_output=True, text=True, timeout=120, check=True)
        lines = [json.loads(line) for line in run.stdout.splitlines()]
        self.assertEqual(['small', 'share-0.5'],
                         [line['case'] for line in lines])
        for line in lines:
            self.assertTrue(line['valid'], line)
            self.assertEqual(2, line['reps'])
            self.assertGreater(line['p50_ms'], 0)
            self.assertGreater(line['sql_per_request'], 0)
        self.assertEqual((20, 10), (lines[1]['servers'],
                                    lines[1]['hosts_needed']))


class ModelTest(base.TestCase):
    """Two hosts; host 2 is booked on the first day."""

    def setUp(self):
        super().setUp()
        workload = {'leases': [{'start': T0.isoformat(),
                                'end': (T0 + DAY).isoformat(),
                                'hosts': ['b']}]}
        self.model = stack_proposals.Model(
            workload, {'a': 1, 'b': 2},
            host_capacity.from_nova_conf(None), datetime.timedelta(0))
        self.span = (T0, T0 + 10 * DAY, DAY)

    def test_the_right_answer_is_valid(self):
        found = [(T0, [(1, HALF), (1, HALF)]),
                 (T0 + DAY, [(1, HALF), (1, HALF)])]
        self.assertTrue(self.model.valid((HALF, 2), self.span, 2, found))
        # Four servers wait for host 2.
        found = [(T0 + DAY, [(1, HALF)] * 2 + [(2, HALF)] * 2)]
        self.assertTrue(self.model.valid((HALF, 4), self.span, 1, found))

    def test_a_late_start_or_a_booked_host_is_refused(self):
        self.assertFalse(self.model.valid((HALF, 2), self.span, 1, [
            (T0 + DAY, [(1, HALF), (1, HALF)])]))
        self.assertFalse(self.model.valid((HALF, 2), self.span, 1, [
            (T0, [(2, HALF), (2, HALF)])]))
        # Too few proposals, or slices over a host's size.
        self.assertFalse(self.model.valid((HALF, 2), self.span, 2, [
            (T0, [(1, HALF), (1, HALF)])]))
        self.assertFalse(self.model.valid((HALF, 3), self.span, 1, [
            (T0 + DAY, [(1, HALF)] * 3)]))
