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

"""A soak of the lease API under concurrent clients, checked.

    python bench/api_concurrency.py [--db-url URL] [--clients 64]
        [--ops 50] [--workers 3] [--hosts 50] [--rounds 1]
        [--proposal-ttl 45] [--seed 0]

The run of ``tests/e2e/test_api_concurrency.py``, longer: a sandbox
(``reservation-sandbox --engines 0``) and ``--workers`` more lease API
processes on its nova.conf, ``--clients`` concurrent clients of
``--ops`` requests each (creates through the lease API, nova-api and
cinder-api, updates and deletes of host, instance and volume leases,
schedule proposals and leases made from them), then the independent
checker (:mod:`harness.concurrency.checker`). A sandbox per round. The
leases DB is the sandbox's SQLite file unless ``--db-url`` names a
scratch database (PostgreSQL, MariaDB): its tables are dropped before
each round, and the sandbox creates them again.

One JSON line per round: ``database``, ``clients``, ``workers``,
``hosts``, ``operations``, ``status`` (counts by HTTP status),
``by_operation``, ``conflicts`` (409s, every one justified unless listed
in ``violations``), ``violations`` (their number; by kind in
``violation_kinds``, the first few and the workers' ERROR lines in
``examples``), ``seconds`` (the clients' wall time) and ``per_second``
(requests answered per second).
"""

import argparse
import collections
import json
import os
import re
import sys

import sqlalchemy as sa

# Run as a script, Python puts bench/ on the path: the checkout too,
# for the package ``harness``, whose run the e2e test makes too.
sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(
    __file__))))

from harness.concurrency import scenario  # noqa: E402
from harness import sandbox as harness_sandbox  # noqa: E402
from reservation_ext.sandbox import config  # noqa: E402


def parse_args(argv):
    parser = argparse.ArgumentParser(description=__doc__.split('\n')[0])
    parser.add_argument('--db-url', help='a scratch database (default: a '
                        'temporary SQLite file)')
    parser.add_argument('--clients', type=int, default=64)
    parser.add_argument('--ops', type=int, default=50,
                        help='requests per client')
    parser.add_argument('--workers', type=int, default=3)
    parser.add_argument('--hosts', type=int, default=50)
    parser.add_argument('--rounds', type=int, default=1)
    parser.add_argument('--proposal-ttl', type=int, default=45)
    parser.add_argument('--seed', type=int, default=0)
    return parser.parse_args(argv)


def drop_tables(url):
    """Drop every table of the database at ``url``, alembic's included."""
    engine = sa.create_engine(url)
    try:
        tables = sa.MetaData()
        tables.reflect(engine)
        tables.drop_all(engine)
    finally:
        engine.dispose()


def kinds(violations):
    """How many violations of each kind (ids, numbers and dates masked)."""
    masked = (re.sub(r'[0-9a-f-]{36}|[0-9]+', 'N', text)[:90]
              for text in violations)
    return dict(collections.Counter(masked).most_common())


def one_round(args, seed):
    options = ['--engines', '0', '--proposal-ttl', str(args.proposal_ttl)]
    if args.db_url:
        drop_tables(args.db_url)
        options += ['--db-url', args.db_url]
    with harness_sandbox.SandboxFixture(hosts=1,
                                        options=options) as sandbox:
        layout = config.Layout.load(sandbox.state_dir)
        result = scenario.run(layout, args.clients, args.ops, args.workers,
                              args.hosts, seed)
    summary = result['summary']
    return dict(
        database=sa.engine.make_url(layout.leases_db_url).get_backend_name(),
        clients=args.clients, workers=args.workers, hosts=args.hosts,
        seed=seed, operations=summary['operations'],
        status=summary['status'], by_operation=summary['by_operation'],
        conflicts=summary['conflicts'],
        violations=len(result['violations']),
        violation_kinds=kinds(result['violations']),
        examples=result['violations'][:3] + result['errors'][:10],
        seconds=round(result['seconds'], 2),
        per_second=round(summary['operations'] / result['seconds'], 1))


def main(argv=None):
    args = parse_args(argv)
    for round_ in range(args.rounds):
        print(json.dumps(one_round(args, args.seed + round_)), flush=True)


if __name__ == '__main__':
    main()
