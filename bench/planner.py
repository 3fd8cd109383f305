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

"""Free-host search: the planner against Blazar's _matching_hosts.

    python bench/planner.py --workload FILE [--db-url URL] [--peer]
                            [--reps N] [--shared DIR]
                            [--weight-property NAME [--descending]]
                            [--work-at-stake SHARE]

FILE comes from ``shared/bench/blazar_alloc.py ... --dump-workload FILE
--dump-only``. The hosts and leases (one reservation each, one whole-host
allocation per leased host) go into a fresh leases DB (a temporary SQLite
file unless --db-url), then every timed query of the workload runs
``planner.find_free_hosts`` once per filter, each in its own reader
transaction. Every result is checked against an in-memory model of the
workload. One JSON line per filter: median_ms, p90_ms, sql_per_search
(median statements per search) and valid.

--peer also times Blazar on the same generator parameters (creating the
peer virtualenv .peer-venv when it is missing) and adds peer_median_ms and
speedup (peer median / ours) to each line.

--weight-property NAME gives every host the extra capability NAME, a
number from 100 to 400 (seeded: the same on every run), and orders the
search by it as ``[power] host_weight_property = NAME`` does (the lowest
first, or the highest with --descending): the search's cost with the
weight term.

--work-at-stake SHARE gives that share of the hosts (seeded) preemptible
work, as the engine's survey writes it (``host_preemptible_work``), and
makes every search weigh it, as for a booking made to start within
``[reservation] preemption_lead_time``: the search's cost then.
"""

import datetime
import gc
import json
import os
import platform
import random
import statistics
import sys
import tempfile
import time

import sqlalchemy as sa

# Run as a script, Python puts bench/ on the path: the checkout too,
# for the packages ``bench`` and ``harness``.
sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(
    __file__))))

from bench import common  # noqa: E402
from db import api as db_api  # noqa: E402
from db import tables  # noqa: E402
from reservation_ext import context  # noqa: E402
from reservation_ext.planning import capabilities  # noqa: E402
from reservation_ext.planning import planner  # noqa: E402
from reservation_ext.planning import preference  # noqa: E402
from reservation_ext.planning import work_at_stake  # noqa: E402

# blazar_alloc.py options that shape the workload and the timed calls.
PEER_OPTIONS = ('hosts', 'allocs', 'want', 'reps', 'warmup', 'seed',
                'placement', 'horizon_days', 'window_days',
                'min_lease_hours', 'max_lease_hours', 'max_hosts_per_lease',
                'gpu_frac', 'racks', 'traits', 'cleaning_time')


def parse_args(argv=None):
    parser = common.workload_parser(__doc__.split('\n')[0])
    parser.add_argument('--reps', type=int, default=None,
                        help='time only the first N non-warmup queries')
    parser.add_argument('--weight-property',
                        help='give every host this numeric extra '
                             'capability and order the search by it')
    parser.add_argument('--descending', action='store_true',
                        help='the highest weight first')
    parser.add_argument('--work-at-stake', type=float, metavar='SHARE',
                        help='give this share of the hosts (0..1) '
                             'preemptible work, as the engine\'s survey '
                             'writes it, and weigh it in every search, as '
                             'for a booking made to start now')
    return parser.parse_args(argv)


class StatementCounter:
    """Counts the statements sent to the DB (a before_cursor_execute hook)."""

    def __init__(self, engine):
        self.count = 0
        sa.event.listen(engine, 'before_cursor_execute', self._count)

    def _count(self, *args):
        self.count += 1


def weigh_hosts(workload, name):
    """Give every host of ``workload`` the capability ``name``: watts."""
    rand = random.Random(42)
    for host in workload['hosts']:
        host['caps'][name] = str(rand.randint(100, 400))


def put_work_at_stake(engine, host_ids, share):
    """Give ``share`` of ``host_ids`` preemptible work; return the lead.

    Random vCPUs and ages, as :mod:`reservation_ext.engine.
    preemptible_work` records them; the lead makes every search's window
    near enough to weigh it.
    """
    rand = random.Random(7)
    now = work_at_stake.seconds(common.NOW)
    rows = []
    for host_id in rand.sample(sorted(host_ids), int(len(host_ids) * share)):
        vcpus = rand.randint(1, 16)
        rows.append({'host_id': host_id, 'vcpus': vcpus,
                     'vcpu_start_sum': vcpus * (now - rand.randint(
                         60, 86400)), 'recorded_at': common.NOW})
    with engine.begin() as connection:
        if rows:
            connection.execute(sa.insert(tables.PREEMPTIBLE_WORK), rows)
    return datetime.timedelta(days=3650)


def run_filter(ctx, counter, model, queries, filter_name, text,
               prefer=preference.Preference()):
    """Time ``find_free_hosts`` on ``queries``; return the result line."""
    times, statements, valid = [], [], True
    # As the physical:host plugin: compiled once, when the request is read.
    conditions = capabilities.compile(text, 'resource_properties')
    for query in queries:
        start = common.parse_date(query['start'])
        end = common.parse_date(query['end'])
        gc.collect()
        counter.count = 0
        began = time.perf_counter_ns()
        with db_api.context_manager.reader.using(ctx) as session:
            found = planner.find_free_hosts(
                session, start, end,
                planner.Busy(common.NOW, model.cleaning_time,
                             prefer=prefer),
                conditions=[conditions], max_count=query['max'])
        elapsed = time.perf_counter_ns() - began
        if not query['warmup']:
            times.append(elapsed / 1e6)
            statements.append(counter.count)
            valid = valid and model.valid(
                filter_name, query, start, end, [h for h, _gen in found])
    line = {'filter': filter_name, 'resource_properties': text,
            'reps_done': len(times)}
    line.update(common.summary_ms(times))
    line.update(sql_per_search=statistics.median(statements), valid=valid)
    return line


def peer_results(args, params):
    """Run blazar_alloc.py under the peer venv; return {filter: line}."""
    arguments = []
    for option in PEER_OPTIONS:
        arguments += ['--' + option.replace('_', '-'), str(params[option])]
    if params['no_inventories']:
        arguments.append('--no-inventories')
    if not params['fk_indexes']:
        arguments.append('--no-fk-indexes')
    lines = common.run_peer(
        os.path.join(args.shared, 'bench', 'blazar_alloc.py'), arguments)
    return {line['filter']: line for line in lines}


def _engine(args, tmp):
    url = args.db_url or 'sqlite:///' + os.path.join(tmp, 'planner.sqlite')
    db_api.context_manager.configure(connection=url)
    return db_api.get_engine()


def main(argv=None):
    args = parse_args(argv)
    with open(args.workload) as f:
        workload = json.load(f)
    params = workload['params']
    if args.weight_property:
        weigh_hosts(workload, args.weight_property)
    with tempfile.TemporaryDirectory() as tmp:
        engine = _engine(args, tmp)
        began = time.perf_counter()
        ids = common.load_workload(engine, workload)
        setup_s = round(time.perf_counter() - began, 2)
        prefer = preference.Preference(
            args.weight_property, args.descending,
            stake_lead=None if args.work_at_stake is None else
            put_work_at_stake(engine, set(ids.values()),
                              args.work_at_stake))
        model = common.Model(workload, ids)
        timed = [q for q in workload['queries'] if not q['warmup']]
        queries = ([q for q in workload['queries'] if q['warmup']] +
                   timed[:args.reps])
        counter = StatementCounter(engine)
        ctx = context.get_admin_context()
        lines = [run_filter(ctx, counter, model, queries, name, text,
                            prefer)
                 for name, text in workload['filters'].items()]
        engine.dispose()
    peer = peer_results(args, params) if args.peer else {}
    for line in lines:
        out = {'bench': 'reservation_ext.planning.planner.find_free_hosts',
               'db': engine.dialect.name, 'python': platform.python_version(),
               'sqlalchemy': sa.__version__, 'hosts': params['hosts'],
               'allocs': params['allocs'], 'leases': len(workload['leases']),
               'want': params['want'], 'window_days': params['window_days'],
               'cleaning_time': params['cleaning_time'], 'setup_s': setup_s,
               'weight_property': args.weight_property,
               'work_at_stake': args.work_at_stake,
               'weight_order': (None if not args.weight_property else
                                'descending' if args.descending
                                else 'ascending')}
        out.update(line)
        if line['filter'] in peer:
            theirs = peer[line['filter']]
            out.update(common.peer_fields(line, theirs),
                       peer_sql_per_search=theirs['sql_per_call_median'])
        print(json.dumps(out), flush=True)
    return 0


if __name__ == '__main__':
    sys.exit(main())
