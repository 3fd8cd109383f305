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

"""Engine HA soak: lease lifecycles in a sandbox while engines die.

    python bench/engine_ha.py [--lifecycles N] [--engines N]
                              [--kill-probability P] [--parallel N]
                              [--window S] [--claim-timeout S]
                              [--poll-interval S] [--db-url URL]
                              [--sandbox-dir DIR] [--seed N]

Starts ``reservation-sandbox --engines 0`` (or uses the one running in
``--sandbox-dir``, started with ``--engines 0``), runs N lease
lifecycles of every kind (:mod:`harness.engine_ha`) with the engines of
:mod:`harness.killing_engine` killing themselves with probability P at
each checkpoint and replaced when they die, and prints one JSON line:
lifecycles by kind, kills by point, outcomes, the actions counted in
Nova, Cinder and Placement, ``duplicates`` (actions that did not take
effect exactly once), ``stuck`` (events later than claim timeout + poll
interval), the largest lateness of an event and the seconds taken.
"""

import argparse
import json
import os
import sys

# Run as a script, Python puts bench/ on the path: the checkout too,
# for the package ``harness``, which the e2e test shares.
sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(
    __file__))))

from harness import engine_ha  # noqa: E402
from harness import sandbox as harness_sandbox  # noqa: E402
from reservation_ext.sandbox import config  # noqa: E402


PROBLEMS_SHOWN = 20


def parse_args():
    parser = argparse.ArgumentParser(description=__doc__.split('\n')[0])
    parser.add_argument('--lifecycles', type=int, default=400)
    parser.add_argument('--engines', type=int, default=3)
    parser.add_argument('--kill-probability', type=float, default=0.02)
    parser.add_argument('--parallel', type=int, default=12)
    parser.add_argument('--window', type=float, default=4)
    parser.add_argument('--claim-timeout', type=int, default=10)
    parser.add_argument('--poll-interval', type=float, default=0.5)
    parser.add_argument('--hosts', type=int, default=4)
    parser.add_argument('--db-url', help='the sandbox leases DB')
    parser.add_argument('--sandbox-dir',
                        help='a running sandbox started with --engines 0')
    parser.add_argument('--seed', type=int, default=7)
    return parser.parse_args()


def run(args, layout):
    """One soak; its JSON line (the first problems only)."""
    figures = engine_ha.run(layout, engine_ha.Settings(
        args.lifecycles, args.engines, args.kill_probability, args.parallel,
        args.window, args.claim_timeout, args.poll_interval, args.seed))
    figures['problems'] = figures['problems'][:PROBLEMS_SHOWN]
    return json.dumps(figures)


def main():
    args = parse_args()
    if args.sandbox_dir:
        print(run(args, config.Layout.load(args.sandbox_dir)), flush=True)
        return
    options = ['--engines', '0']
    if args.db_url:
        options += ['--db-url', args.db_url]
    sandbox = harness_sandbox.SandboxFixture(hosts=args.hosts,
                                             options=options)
    sandbox.setUp()
    try:
        print(run(args, config.Layout.load(sandbox.state_dir)), flush=True)
    finally:
        sandbox.cleanUp()


if __name__ == '__main__':
    main()
