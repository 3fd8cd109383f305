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

"""Scheduler filter: ReservationFilter.filter_all against BlazarFilter.

    python bench/filter.py [--hosts N] [--reps R] [--warmup W] [--seed S]
                           [--workload FILE] [--db-url URL] [--peer]
                           [--shared DIR]

The workload is ``shared/bench/blazar_filter.py``'s (generated here by
importing that script, or read from FILE written by its
``--dump-workload``): N hosts, some in the free pool, some in lease
aggregates. Its pools go into a fresh leases DB (a temporary SQLite file
unless --db-url; a PostgreSQL URL gets a schema of its own, dropped at the
end): every free-pool and lease host is a reservable host, every lease
aggregate an ACTIVE lease of the aggregate's owner whose active
``physical:host`` reservation (id = the aggregate's name) holds those
hosts now. Then ``filter_all`` runs over N Nova ``HostState`` objects for
each request of the workload (``nohint``, ``hint``), the cases interleaved
rep by rep as the peer script does. Each timed call includes the pool
generation check the filter makes per request; the first call, which
loads the snapshot, is reported apart as ``load_ms``. The hosts that pass
are checked against the peer script's own model (``expected_pass``).

One JSON line per case. --peer also times Blazar's filter on the same
generator parameters (creating the peer virtualenv .peer-venv when it is
missing) and adds peer_median_ms and speedup (peer median / ours).
"""

import argparse
import datetime
import json
import os
import platform
import sys
import tempfile
import time
import uuid

import nova.conf  # noqa: F401 - nova's options, as nova-scheduler has them
from nova import objects
from nova.scheduler import host_manager
import nova.version
import sqlalchemy as sa

# Run as a script, Python puts bench/ on the path: the checkout too,
# for the packages ``bench`` and ``harness``.
sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(
    __file__))))

from bench import by_path  # noqa: E402
from bench import common  # noqa: E402
from db import api as db_api  # noqa: E402
from db import models  # noqa: E402
from nova_filters import reservation_filter  # noqa: E402
from reservation_ext import clock  # noqa: E402
from reservation_ext import conf as conf_mod  # noqa: E402
from reservation_ext import context  # noqa: E402
from reservation_ext.store import hosts as store_hosts  # noqa: E402

# Generator options of blazar_filter.py: the peer run must get the same
# workload as ours.
PEER_OPTIONS = ('hosts', 'freepool_frac', 'lease_frac',
                'max_hosts_per_lease', 'other_aggs', 'seed')
CASES = ('nohint', 'hint')
OWNER = 'blazar:owner'


def parse_args(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split('\n')[0])
    parser.add_argument('--hosts', type=int, default=10000,
                        help='hosts of a generated workload')
    parser.add_argument('--seed', type=int, default=42,
                        help='seed of a generated workload')
    parser.add_argument('--workload',
                        help='workload JSON from blazar_filter.py '
                             '--dump-workload (instead of generating one)')
    parser.add_argument('--reps', type=int, default=30)
    parser.add_argument('--warmup', type=int, default=3)
    parser.add_argument('--db-url', help='the database to load into '
                        '(default: a temporary SQLite file)')
    parser.add_argument('--peer', action='store_true',
                        help="also time Blazar's filter on the same workload")
    parser.add_argument('--shared', default=common.DEFAULT_SHARED,
                        help='the shared folder holding '
                             'bench/blazar_filter.py')
    return parser.parse_args(argv)


def get_workload(args, generator):
    """The workload and its generator parameters."""
    if args.workload:
        with open(args.workload) as f:
            workload = json.load(f)
        return workload, workload['params']
    params = vars(generator.parse_args(
        ['--hosts', str(args.hosts), '--seed', str(args.seed)]))
    return generator.generate_workload(argparse.Namespace(**params)), params


def load(workload):
    """Put the workload's pools into the leases DB; return the counts."""
    ctx = context.get_admin_context()
    pools = [a for a in workload['aggregates']
             if a['name'] == 'freepool' or OWNER in a['metadata']]
    leased = [a for a in pools if OWNER in a['metadata']]
    with db_api.writer(ctx, clock.SYSTEM) as session:
        models.Base.metadata.create_all(session.connection())
        names = [h for pool in pools for h in pool['hosts']]
        ids = dict(zip(names, store_hosts.bulk_load(session.connection(), [
            ({'hypervisor_hostname': name, 'service_name': name,
              'vcpus': 32, 'memory_mb': 131072, 'local_gb': 1000}, {})
            for name in names])))
        _insert_leases(session, leased, ids)
    return {'reservable_hosts': len(ids), 'active_leases': len(leased)}


def _insert_leases(session, aggregates, ids):
    """One ACTIVE lease holding each lease aggregate's hosts now."""
    now, day = clock.SYSTEM.now(), datetime.timedelta(days=1)
    start, end = now - day, now + day
    leases, reservations, allocations = [], [], []
    for n, aggregate in enumerate(aggregates):
        lease_id = str(uuid.uuid4())
        leases.append({'id': lease_id, 'name': 'lease-%d' % n,
                       'project_id': aggregate['metadata'][OWNER],
                       'start_date': start, 'end_date': end,
                       'status': 'ACTIVE'})
        reservations.append({'id': aggregate['name'], 'lease_id': lease_id,
                             'resource_type': 'physical:host',
                             'status': 'active'})
        allocations.extend({'id': str(uuid.uuid4()), 'host_id': ids[host],
                            'reservation_id': aggregate['name'],
                            'start_date': start, 'end_date': end,
                            'whole_host': True}
                           for host in aggregate['hosts'])
    session.execute(sa.insert(models.Lease.__table__), leases)
    session.execute(sa.insert(models.Reservation.__table__), reservations)
    session.execute(sa.insert(models.HostAllocation.__table__), allocations)


def request_specs(workload):
    """``{case: RequestSpec}`` for the workload's requests."""
    specs = {}
    for case, req in workload['requests'].items():
        if case in CASES:
            specs[case] = objects.RequestSpec(
                project_id=req['project_id'],
                flavor=objects.Flavor(
                    extra_specs=dict(req['flavor_extra_specs'])),
                scheduler_hints={k: list(v) for k, v in
                                 req['scheduler_hints'].items()})
    return specs


def host_states(workload):
    """One Nova ``HostState`` per host (host name == node name)."""
    cell = str(uuid.uuid4())
    return [host_manager.HostState(name, name, cell)
            for name in workload['host_names']]


def time_cases(flt, hosts, specs, args):
    """Time ``filter_all`` per case, interleaved rep by rep.

    :returns: ``({case: [ms, ...]}, {case: passed host names}, load_ms)``
    """
    first = next(iter(specs.values()))
    began = time.perf_counter_ns()
    flt.filter_all(hosts, first)
    load_ms = (time.perf_counter_ns() - began) / 1e6
    times = {case: [] for case in specs}
    passed = {}
    for rep in range(args.warmup + args.reps):
        # Interleaved, so that machine noise hits every case alike.
        for case, spec in specs.items():
            began = time.perf_counter_ns()
            result = flt.filter_all(hosts, spec)
            elapsed = time.perf_counter_ns() - began
            if rep >= args.warmup:
                times[case].append(elapsed / 1e6)
            passed[case] = [host.host for host in result]
    return times, passed, load_ms


def statements_per_call(flt, hosts, spec):
    """SQL statements one (warm) ``filter_all`` call sends.

    Counted on every engine: the generation check may have its own.
    """
    count = []

    def counter(*args):
        count.append(1)
    sa.event.listen(sa.engine.Engine, 'before_cursor_execute', counter)
    try:
        flt.filter_all(hosts, spec)
    finally:
        sa.event.remove(sa.engine.Engine, 'before_cursor_execute', counter)
    return len(count)


def peer_results(args, params):
    """Run blazar_filter.py under the peer venv; return {case: line}."""
    arguments = ['--reps', str(args.reps), '--warmup', str(args.warmup)]
    for option in PEER_OPTIONS:
        arguments += ['--' + option.replace('_', '-'), str(params[option])]
    lines = common.run_peer(
        os.path.join(args.shared, 'bench', 'blazar_filter.py'), arguments)
    return {line['case']: line for line in lines}


def _configure(url):
    """Point ``[reservation_database]`` at ``url``, as nova.conf would."""
    conf_mod.CONF([], project='nova', default_config_files=[])
    conf_mod.CONF.set_override('connection', url,
                               group=conf_mod.DB_GROUP)


def run(args, workload, url, expected):
    """Load the workload, time our filter; return the result lines.

    :param expected: ``{case: names of the hosts that should pass}``
    """
    _configure(url)
    objects.register_all()
    flt = reservation_filter.ReservationFilter()
    counts = load(workload)
    hosts = host_states(workload)
    specs = request_specs(workload)
    times, passed, load_ms = time_cases(flt, hosts, specs, args)
    lines = []
    for case, spec in specs.items():
        line = {'case': case, 'hosts': len(hosts), 'reps': args.reps}
        line.update(common.summary_ms(times[case]))
        line.update(
            median_ns_per_host=round(
                line['median_ms'] * 1e6 / len(hosts), 1),
            passed=len(passed[case]),
            valid=passed[case] == expected[case],
            load_ms=round(load_ms, 3),
            sql_per_call=statements_per_call(flt, hosts, spec))
        line.update(counts)
        lines.append(line)
    db_api.get_engine().dispose()
    return lines


def main(argv=None):
    args = parse_args(argv)
    generator = by_path.import_script(
        os.path.join(args.shared, 'bench', 'blazar_filter.py'))
    workload, params = get_workload(args, generator)
    # The peer script's own model of which hosts pass, not ours.
    expected = {case: generator.expected_pass(workload, case)
                for case in CASES if case in workload['requests']}
    with tempfile.TemporaryDirectory() as tmp:
        with common.scratch_database(args.db_url, tmp) as url:
            lines = run(args, workload, url, expected)
    peer = peer_results(args, params) if args.peer else {}
    for line in lines:
        out = {'bench': 'nova_filters.ReservationFilter.filter_all',
               'db': sa.engine.make_url(url).get_backend_name(),
               'python': platform.python_version(),
               'nova': nova.version.version_string()}
        out.update(line)
        if line['case'] in peer:
            out.update(common.peer_fields(line, peer[line['case']]))
        print(json.dumps(out), flush=True)
    return 0


if __name__ == '__main__':
    sys.exit(main())
