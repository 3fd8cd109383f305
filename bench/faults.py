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

"""Lease lifecycles while Nova fails: outcomes and orphans over many rounds.

    python bench/faults.py [--rounds N] [--seed S] [--rate R]

Inside Nova's functional harness (real API, conductor, scheduler with
ReservationFilter, fake computes; :mod:`tests.functional.test_faults_nova`),
each round creates a lease of every type (a host, a capacity reservation
with a server group, one-server leases ending by ``snapshot_delete``,
``delete`` and ``shelve``), runs their start and end with a real engine
whose Nova and image calls meet faults at ``--rate``
(:class:`tests.faults.FaultyTransport`, seeded with seed + round: a round
replays with its seed), deletes the leases that went to ERROR (through
the same faults, until they are gone), and counts
what Nova holds without a lease that says so. One JSON line per round
(lifecycles, calls, faults by kind, outcomes, orphans and what they are),
then one with the totals.
"""

import argparse
import collections
import datetime
import json
import os
import sys
import time
import unittest

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(
    __file__))))

from tests import faults  # noqa: E402  (sets up Nova's process first)
from tests.functional import test_faults_nova  # noqa: E402

ROUND = datetime.timedelta(hours=3)


class Rounds(test_faults_nova.FaultsTestCase):
    """The rounds, as one test of Nova's harness (options as attributes)."""

    rounds = seed = rate = None

    def runTest(self):
        totals = collections.Counter()
        for number in range(self.rounds):
            figures = self.one_round(number)
            print(json.dumps(figures), flush=True)
            totals.update({key: value for key, value in figures.items()
                           if isinstance(value, int)})
            for key in ('faults', 'outcomes'):
                totals.update({'%s.%s' % (key, kind): count
                               for kind, count in figures[key].items()})
        print(json.dumps(dict(totals, rounds=self.rounds, seed=self.seed,
                              rate=self.rate)), flush=True)

    def one_round(self, number):
        began = time.monotonic()
        self.start = self.now + (number + 1) * ROUND
        self.end = self.start + test_faults_nova.HOUR
        leases = self.every_type('-%d' % number)
        transport = faults.FaultyTransport(self.seed + number, self.rate)
        self.drive(self.start + test_faults_nova.SECOND, transport)
        self.drive(self.end + test_faults_nova.SECOND, transport)
        outcomes = collections.Counter(
            self.lease('/' + lease_id)['status'] for lease_id in leases)
        self.delete_failed(leases, transport)
        orphans = self.orphans()
        summary = transport.summary()
        return {'round': number, 'seed': summary['seed'],
                'lifecycles': len(leases), 'calls': summary['calls'],
                'faults_total': summary['faults_total'],
                'faults': summary['faults'], 'outcomes': dict(outcomes),
                'orphans': len(orphans), 'orphaned': orphans,
                'seconds': round(time.monotonic() - began, 1)}


def main():
    parser = argparse.ArgumentParser(description=__doc__.split('\n')[0])
    parser.add_argument('--rounds', type=int, default=10)
    parser.add_argument('--seed', type=int, default=test_faults_nova.SEED)
    parser.add_argument('--rate', type=float,
                        default=test_faults_nova.RATE)
    args = parser.parse_args()
    Rounds.rounds, Rounds.seed, Rounds.rate = (args.rounds, args.seed,
                                               args.rate)
    result = unittest.TestResult()
    Rounds().run(result)
    for _case, trace in result.errors + result.failures:
        print(trace, file=sys.stderr)
    return 0 if result.wasSuccessful() else 1


if __name__ == '__main__':
    sys.exit(main())
