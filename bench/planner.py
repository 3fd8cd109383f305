"""Free-host search: the planner against Blazar's _matching_hosts.

    python bench/planner.py --workload FILE [--db-url URL] [--peer]
                            [--reps N] [--shared DIR]

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
"""

import argparse
import datetime
import gc
import json
import os
import platform
import statistics
import subprocess
import sys
import tempfile
import time
import uuid

import sqlalchemy as sa

from db import api as db_api
from db import models
from reservation_ext import context
from reservation_ext import hosts as hosts_mod
from reservation_ext import planner

TOP = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
PEER_VENV = os.path.join(TOP, '.peer-venv')
PEER_PACKAGES = ['blazar==18.0.0', 'blazar-nova==10.0.0', 'nova==34.0.0']
# The filters of blazar_alloc.py, evaluated on the workload's host dicts:
# the model does not share the planner's query compiler.
MODEL_FILTERS = {
    'none': lambda host: True,
    'gpu': lambda host: host['caps'].get('gpu') == 'true',
}
# blazar_alloc.py options that shape the workload and the timed calls.
PEER_OPTIONS = ('hosts', 'allocs', 'want', 'reps', 'warmup', 'seed',
                'placement', 'horizon_days', 'window_days',
                'min_lease_hours', 'max_lease_hours', 'max_hosts_per_lease',
                'gpu_frac', 'racks', 'traits', 'cleaning_time')


def parse_args(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split('\n')[0])
    parser.add_argument('--workload', required=True,
                        help='workload JSON from blazar_alloc.py')
    parser.add_argument('--db-url', help='an empty database to load into '
                        '(default: a fresh temporary SQLite file)')
    parser.add_argument('--reps', type=int, default=None,
                        help='time only the first N non-warmup queries')
    parser.add_argument('--peer', action='store_true',
                        help='also time Blazar on the same workload')
    parser.add_argument('--shared', default=os.path.join(
        os.path.dirname(TOP), 'shared'),
        help='the shared folder holding bench/blazar_alloc.py')
    return parser.parse_args(argv)


def _date(text):
    return datetime.datetime.fromisoformat(text)


def load(engine, workload):
    """Fill a fresh schema with the workload; return {host uuid: our id}."""
    models.Base.metadata.drop_all(engine)
    models.Base.metadata.create_all(engine)
    host_rows = [({'hypervisor_hostname': h['name'],
                   'service_name': h['name'], 'availability_zone': 'nova',
                   'vcpus': h['vcpus'], 'memory_mb': h['memory_mb'],
                   'local_gb': h['local_gb'],
                   'hypervisor_type': h['hypervisor_type'],
                   'hypervisor_version': h['hypervisor_version']},
                  h['caps']) for h in workload['hosts']]
    with engine.begin() as conn:
        ids = dict(zip([h['id'] for h in workload['hosts']],
                       hosts_mod.bulk_load(conn, host_rows)))
        leases, reservations, allocations = _lease_rows(workload, ids)
        conn.execute(sa.insert(models.Lease.__table__), leases)
        conn.execute(sa.insert(models.Reservation.__table__), reservations)
        conn.execute(sa.insert(models.HostAllocation.__table__),
                     allocations)
    with engine.begin() as conn:
        conn.exec_driver_sql('ANALYZE')
    return ids


def _lease_rows(workload, ids):
    leases, reservations, allocations = [], [], []
    for lease in workload['leases']:
        start, end = _date(lease['start']), _date(lease['end'])
        leases.append({'id': lease['id'], 'name': lease['name'],
                       'project_id': lease['project_id'],
                       'start_date': start, 'end_date': end,
                       'status': 'PENDING'})
        reservations.append({'id': lease['reservation_id'],
                             'lease_id': lease['id'],
                             'resource_type': 'physical:host',
                             'status': 'pending'})
        allocations.extend(
            {'id': str(uuid.uuid4()), 'host_id': ids[host],
             'reservation_id': lease['reservation_id'], 'start_date': start,
             'end_date': end, 'whole_host': True}
            for host in lease['hosts'])
    return leases, reservations, allocations


class Model:
    """The workload's schedule in memory, to check every search result."""

    def __init__(self, workload, ids):
        self.hosts = {ids[h['id']]: h for h in workload['hosts']}
        self.busy = {host_id: [] for host_id in self.hosts}
        for lease in workload['leases']:
            for host in lease['hosts']:
                self.busy[ids[host]].append(
                    (_date(lease['start']), _date(lease['end'])))
        self.cleaning_time = workload['params']['cleaning_time']
        self.margin = datetime.timedelta(minutes=self.cleaning_time)

    def free_hosts(self, filter_name, start, end):
        match = MODEL_FILTERS[filter_name]
        start, end = start - self.margin, end + self.margin
        return {host_id for host_id, host in self.hosts.items()
                if match(host) and all(b <= start or a >= end
                                       for a, b in self.busy[host_id])}

    def valid(self, filter_name, query, start, end, found):
        free = self.free_hosts(filter_name, start, end)
        return (set(found) <= free and
                len(found) == min(query['max'], len(free)) and
                (len(found) < query['min']) == (len(free) < query['min']))


class StatementCounter:
    """Counts the statements sent to the DB (a before_cursor_execute hook)."""

    def __init__(self, engine):
        self.count = 0
        sa.event.listen(engine, 'before_cursor_execute', self._count)

    def _count(self, *args):
        self.count += 1


def run_filter(ctx, counter, model, queries, filter_name, text):
    """Time ``find_free_hosts`` on ``queries``; return the result line."""
    times, statements, valid = [], [], True
    for query in queries:
        start, end = _date(query['start']), _date(query['end'])
        gc.collect()
        counter.count = 0
        began = time.perf_counter_ns()
        with db_api.context_manager.reader.using(ctx) as session:
            found = planner.find_free_hosts(
                session, start, end, query=text, max_count=query['max'],
                cleaning_time=model.cleaning_time)
        elapsed = time.perf_counter_ns() - began
        if not query['warmup']:
            times.append(elapsed / 1e6)
            statements.append(counter.count)
            valid = valid and model.valid(
                filter_name, query, start, end, [h for h, _gen in found])
    return {'filter': filter_name, 'resource_properties': text,
            'reps_done': len(times),
            'median_ms': round(statistics.median(times), 3),
            'p90_ms': round(statistics.quantiles(times, n=10)[-1], 3),
            'min_ms': round(min(times), 3), 'max_ms': round(max(times), 3),
            'sql_per_search': statistics.median(statements),
            'valid': valid}


def peer_results(args, params):
    """Run blazar_alloc.py under the peer venv; return {filter: line}."""
    python = os.path.join(PEER_VENV, 'bin', 'python')
    if not os.path.exists(python):
        subprocess.run([sys.executable, '-m', 'venv', PEER_VENV], check=True)
        subprocess.run([python, '-m', 'pip', 'install'] + PEER_PACKAGES,
                       check=True)
    command = [python, os.path.join(args.shared, 'bench', 'blazar_alloc.py')]
    for option in PEER_OPTIONS:
        command += ['--' + option.replace('_', '-'), str(params[option])]
    if params['no_inventories']:
        command.append('--no-inventories')
    if not params['fk_indexes']:
        command.append('--no-fk-indexes')
    output = subprocess.run(command, check=True, capture_output=True,
                            text=True).stdout
    lines = [json.loads(line) for line in output.splitlines()
             if line.startswith('{')]
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
    with tempfile.TemporaryDirectory() as tmp:
        engine = _engine(args, tmp)
        began = time.perf_counter()
        ids = load(engine, workload)
        setup_s = round(time.perf_counter() - began, 2)
        model = Model(workload, ids)
        timed = [q for q in workload['queries'] if not q['warmup']]
        queries = ([q for q in workload['queries'] if q['warmup']] +
                   timed[:args.reps])
        counter = StatementCounter(engine)
        ctx = context.get_admin_context()
        lines = [run_filter(ctx, counter, model, queries, name, text)
                 for name, text in workload['filters'].items()]
        engine.dispose()
    peer = peer_results(args, params) if args.peer else {}
    for line in lines:
        out = {'bench': 'reservation_ext.planner.find_free_hosts',
               'db': engine.dialect.name, 'python': platform.python_version(),
               'sqlalchemy': sa.__version__, 'hosts': params['hosts'],
               'allocs': params['allocs'], 'leases': len(workload['leases']),
               'want': params['want'], 'window_days': params['window_days'],
               'cleaning_time': params['cleaning_time'], 'setup_s': setup_s}
        out.update(line)
        if line['filter'] in peer:
            peer_median = peer[line['filter']]['median_ms']
            out.update(peer_median_ms=peer_median,
                       peer_sql_per_search=peer[line['filter']][
                           'sql_per_call_median'],
                       peer_valid=peer[line['filter']]['valid'],
                       speedup=round(peer_median / line['median_ms'], 1))
        print(json.dumps(out), flush=True)
    return 0


if __name__ == '__main__':
    sys.exit(main())
