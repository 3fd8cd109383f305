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

"""Lease lifecycles while Nova or Cinder fail: outcomes and orphans.

    python -m tests.functional.fault_rounds [--service nova|cinder]
        [--rounds N] [--seed S] [--rate R]

The soak of the fault tests, run from the top of the checkout. It lives
with them, since it is made of their harness (the benchmarks of
``bench/`` import no test).

Inside Nova's functional harness (:mod:`tests.functional.test_faults_nova`)
each round creates a lease of every type (a host, a capacity reservation
with a server group, one-server leases ending by ``snapshot_delete``,
``delete`` and ``shelve``); inside Cinder's
(:mod:`tests.functional.test_faults_cinder`, in a child process) four
volume leases, two ending by ``delete`` and two by ``snapshot_delete``.
A real engine runs their start and end; its calls meet faults at
``--rate`` (:class:`tests.faults.FaultyTransport`, seeded with seed +
round: a round replays with its seed). The leases that went to ERROR are
deleted (for Nova through the same faults, until they are gone), then
what the service holds without a lease that says so is counted. One JSON
line per round (lifecycles, calls, faults by kind, outcomes, orphans and
what they are, the reasons the leases in ERROR show), then one with the
totals.
"""

import argparse
import collections
import datetime
import json
import os
import subprocess
import sys
import time
import unittest

# Set in the child process that runs Cinder's harness.
CINDER_CHILD = 'RESERVATION_BENCH_CINDER'
# The child imports Cinder's harness first: it monkey patches the process
# with eventlet, before the tests package would switch Nova to native
# threads (as in tests.cinder_child).
CINDER_MAIN = ('import runpy; import cinder.tests.functional; '
               'runpy.run_module(%r, run_name="__main__")')
ROUND = datetime.timedelta(hours=3)
HOUR = datetime.timedelta(hours=1)
SECOND = datetime.timedelta(seconds=1)
# The figures of a round that add up over the rounds.
TOTALLED = ('lifecycles', 'calls', 'faults_total', 'orphans')


class RoundsMixin:
    """Runs the rounds as one test of a harness (options as attributes).

    A subclass makes one round's leases (``make``: ``{lease id: on_end
    or None}``), shows a lease (``shown``) and counts the orphans
    (``count_orphans``).
    """

    rounds = seed = rate = None

    def runTest(self):
        """Print each round's JSON line, then the totals."""
        totals = collections.Counter()
        for number in range(self.rounds):
            figures = self.one_round(number)
            print(json.dumps(figures), flush=True)
            totals.update({key: figures[key] for key in TOTALLED})
            for key in ('faults', 'outcomes'):
                totals.update({'%s.%s' % (key, kind): count
                               for kind, count in figures[key].items()})
        print(json.dumps(dict(totals, rounds=self.rounds, seed=self.seed,
                              rate=self.rate, service=self.service)),
              flush=True)

    def one_round(self, number):
        """One round's leases through faults; its figures (a dict)."""
        from tests import faults

        began = time.monotonic()
        self.start = self.now + (number + 1) * ROUND
        self.end = self.start + HOUR
        leases = self.make(number)
        transport = faults.FaultyTransport(self.seed + number, self.rate)
        self.drive(self.start + SECOND, transport)
        self.drive(self.end + SECOND, transport)
        shown = [self.shown(lease_id) for lease_id in leases]
        outcomes = collections.Counter(lease['status'] for lease in shown)
        orphans = self.count_orphans(leases, transport)
        summary = transport.summary()
        return {'service': self.service, 'round': number,
                'seed': summary['seed'], 'lifecycles': len(leases),
                'calls': summary['calls'],
                'faults_total': summary['faults_total'],
                'faults': summary['faults'], 'outcomes': dict(outcomes),
                'reasons': [lease['status_reason'] for lease in shown
                            if lease['status_reason']],
                'orphans': len(orphans), 'orphaned': orphans,
                'seconds': round(time.monotonic() - began, 1)}


def nova_rounds():
    """The rounds as a test of Nova's functional harness (a class)."""
    from tests.functional import test_faults_nova

    class NovaRounds(RoundsMixin, test_faults_nova.FaultsTestCase):
        service = 'nova'

        def make(self, number):
            return self.every_type('-%d' % number)

        def shown(self, lease_id):
            return self.lease('/' + lease_id)

        def count_orphans(self, leases, transport):
            self.delete_failed(leases, transport)
            orphans = self.orphans()
            # Their owner deletes the servers that shelve leases left:
            # they count in the project's quota, which Nova checks
            # again when a later round's held builds start.
            for server in self.admin_api.get_servers(
                    search_opts={'all_tenants': 1}):
                self.admin_api.delete_server(server['id'])
                self._wait_until_deleted(server)
            return orphans

    return NovaRounds


def cinder_rounds():
    """The rounds as a test of Cinder's harness (a class)."""
    os.environ['RESERVATION_CINDER_HARNESS'] = '1'
    from tests.functional import test_faults_cinder

    class CinderRounds(RoundsMixin, test_faults_cinder.CinderFaultsTest):
        service = 'cinder'

        def setUp(self):
            super().setUp()
            self.now = self.start - HOUR

        def make(self, number):
            return {self.reserve(on_end, 'round%d' % number): on_end
                    for on_end in test_faults_cinder.ON_END * 2}

        def shown(self, lease_id):
            return self.lease(lease_id)

        def count_orphans(self, leases, transport):
            snapshots = self.snapshots(leases)
            self.delete_failed(leases)
            orphans = self.orphans(snapshots, self.images_before)
            self.images_before = len(self.images.images)
            return orphans

        images_before = 0

    return CinderRounds


def run(rounds_class, args):
    """Run the rounds with the options ``args``; the exit status."""
    rounds_class.rounds, rounds_class.seed, rounds_class.rate = (
        args.rounds, args.seed, args.rate)
    result = unittest.TestResult()
    rounds_class().run(result)
    for _case, trace in result.errors + result.failures:
        print(trace, file=sys.stderr)
    return 0 if result.wasSuccessful() else 1


def main():
    """Parse the options and run the rounds of one service."""
    parser = argparse.ArgumentParser(description=__doc__.split('\n')[0])
    parser.add_argument('--service', choices=('nova', 'cinder'),
                        default='nova')
    parser.add_argument('--rounds', type=int, default=10)
    parser.add_argument('--seed', type=int, default=16)
    parser.add_argument('--rate', type=float, default=0.3)
    args = parser.parse_args()
    if args.service == 'nova':
        return run(nova_rounds(), args)
    if os.environ.get(CINDER_CHILD) == '1':
        return run(cinder_rounds(), args)
    # Cinder's global configuration and eventlet need a process of their
    # own, as in the tests.
    return subprocess.call(
        [sys.executable, '-c', CINDER_MAIN % __spec__.name] + sys.argv[1:],
        env=dict(os.environ, **{CINDER_CHILD: '1'}))


if __name__ == '__main__':
    sys.exit(main())
