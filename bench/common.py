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

"""Helpers shared by the benchmark scripts of this folder.

The peer side (OpenStack Blazar) runs in its own virtualenv, created here
when it is missing; the shared workload generators are imported by path
(they are scripts, not packages); timings are summarized the same way in
every script; and the planner's workload (hosts and leases from
``blazar_alloc.py``) loads into a leases DB the same way for every bench
that needs one.
"""

import argparse
import contextlib
import datetime
import json
import os
import statistics
import subprocess
import sys
import uuid

import sqlalchemy as sa

from db import models
from reservation_ext import clock
from reservation_ext.store import hosts as store_hosts

TOP = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
DEFAULT_SHARED = os.path.join(os.path.dirname(TOP), 'shared')
PEER_VENV = os.path.join(TOP, '.peer-venv')
# Creates PEER_VENV with Blazar 18 when it is missing (as .ci/run does).
PEER_VENV_SCRIPT = os.path.join(TOP, 'tools', 'peer-venv.sh')

# "Now" in the workloads of blazar_alloc.py, whose leases start from
# 2030-01-01: the time the peer's rows were written.
NOW = datetime.datetime(2029, 12, 1)

# The filters of blazar_alloc.py, evaluated on the workload's host dicts:
# the model does not share the planner's query compiler.
MODEL_FILTERS = {
    'none': lambda host: True,
    'gpu': lambda host: host['caps'].get('gpu') == 'true',
}


def workload_parser(description):
    """An argument parser with the options of the workload benches.

    ``--workload``, ``--db-url``, ``--peer`` and ``--shared``; the bench
    adds its own.
    """
    parser = argparse.ArgumentParser(description=description)
    parser.add_argument('--workload', required=True,
                        help='workload JSON from blazar_alloc.py')
    parser.add_argument('--db-url', help='an empty database to load into '
                        '(default: a fresh temporary SQLite file)')
    parser.add_argument('--peer', action='store_true',
                        help='also time Blazar on the same workload')
    parser.add_argument('--shared', default=DEFAULT_SHARED,
                        help='the shared folder holding bench/blazar_alloc.py')
    return parser


def peer_python():
    """The peer virtualenv's python, creating the venv when it is missing."""
    return subprocess.run([PEER_VENV_SCRIPT, sys.executable], check=True,
                          stdout=subprocess.PIPE, text=True).stdout.strip()


def run_peer(script, arguments):
    """Run a shared peer script under the peer venv; its JSON lines."""
    output = subprocess.run([peer_python(), script] + arguments, check=True,
                            capture_output=True, text=True).stdout
    return [json.loads(line) for line in output.splitlines()
            if line.startswith('{')]


def summary_ms(times_ms):
    """Median, p10, p90, min and max of timings in milliseconds."""
    # quantiles() needs two points; one rep is its own every percentile.
    deciles = (statistics.quantiles(times_ms, n=10) if len(times_ms) > 1
               else times_ms * 9)
    return {'median_ms': round(statistics.median(times_ms), 3),
            'p10_ms': round(deciles[0], 3),
            'p90_ms': round(deciles[-1], 3),
            'min_ms': round(min(times_ms), 3),
            'max_ms': round(max(times_ms), 3)}


def peer_fields(ours, theirs):
    """The peer's median and validity, and the speedup over it."""
    return {'peer_median_ms': theirs['median_ms'],
            'peer_valid': theirs['valid'],
            'speedup': round(theirs['median_ms'] / ours['median_ms'], 1)}


@contextlib.contextmanager
def scratch_database(url, tmp):
    """The URL of an empty database for one run, cleaned up afterwards.

    Without ``url``: a SQLite file in the folder ``tmp``. A PostgreSQL
    ``url`` gets a schema of its own (first on the search path), dropped
    at the end, so that the run touches no table of the database's other
    users. Any other ``url`` is used as it is and the schema's tables are
    dropped at the end.
    """
    if url is None:
        yield 'sqlite:///' + os.path.join(tmp, 'bench.sqlite')
        return
    parsed = sa.engine.make_url(url)
    if parsed.get_backend_name() != 'postgresql':
        try:
            yield url
        finally:
            engine = sa.create_engine(url)
            models.Base.metadata.drop_all(engine)
            engine.dispose()
        return
    schema = 'bench_%s' % uuid.uuid4().hex[:12]
    admin = sa.create_engine(parsed)
    with admin.begin() as conn:
        conn.exec_driver_sql('CREATE SCHEMA %s' % schema)
    try:
        yield parsed.update_query_dict(
            {'options': '-csearch_path=%s' % schema}).render_as_string(
                hide_password=False)
    finally:
        with admin.begin() as conn:
            conn.exec_driver_sql('DROP SCHEMA %s CASCADE' % schema)
        admin.dispose()


def parse_date(text):
    """A workload date (ISO 8601, naive UTC) as a datetime."""
    return datetime.datetime.fromisoformat(text)


def load_workload(engine, workload):
    """Fill a fresh schema with ``blazar_alloc.py``'s hosts and leases.

    Every lease gets one PENDING lease row, one ``physical:host``
    reservation and one whole-host allocation per leased host.

    :returns: ``{workload host id: our host id}``
    """
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
        conn.execution_options(**{models.CLOCK: clock.SYSTEM})
        ids = dict(zip([h['id'] for h in workload['hosts']],
                       store_hosts.bulk_load(conn, host_rows)))
        leases, reservations, allocations = _lease_rows(workload, ids)
        conn.execute(sa.insert(models.Lease.__table__), leases)
        conn.execute(sa.insert(models.Reservation.__table__), reservations)
        conn.execute(sa.insert(models.HostAllocation.__table__),
                     allocations)
    analyze(engine)
    return ids


def analyze(engine):
    """Give the planner statistics, as a table in service has them."""
    with engine.begin() as conn:
        conn.exec_driver_sql('ANALYZE')


def _lease_rows(workload, ids):
    leases, reservations, allocations = [], [], []
    for lease in workload['leases']:
        start, end = parse_date(lease['start']), parse_date(lease['end'])
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
    """The workload's schedule in memory, independent of the planner.

    It checks search results and finds room for new leases.
    """

    def __init__(self, workload, ids):
        self.hosts = {ids[h['id']]: h for h in workload['hosts']}
        self.busy = {host_id: [] for host_id in self.hosts}
        for lease in workload['leases']:
            for host in lease['hosts']:
                self.busy[ids[host]].append(
                    (parse_date(lease['start']), parse_date(lease['end'])))
        self.cleaning_time = workload['params']['cleaning_time']
        self.margin = datetime.timedelta(minutes=self.cleaning_time)

    def free_hosts(self, filter_name, start, end):
        """Our ids of the hosts that match and are free all along."""
        match = MODEL_FILTERS[filter_name]
        start, end = start - self.margin, end + self.margin
        return {host_id for host_id, host in self.hosts.items()
                if match(host) and all(b <= start or a >= end
                                       for a, b in self.busy[host_id])}

    def valid(self, filter_name, query, start, end, found):
        """Whether ``found`` is a right answer to the search ``query``."""
        free = self.free_hosts(filter_name, start, end)
        return (set(found) <= free and
                len(found) == min(query['max'], len(free)) and
                (len(found) < query['min']) == (len(free) < query['min']))
