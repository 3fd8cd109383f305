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

"""Bursts: many leases starting, and others ending, at the same instant.

    python bench/burst.py [--n 100 300] [--profiles clean stuck slow]
                          [--engines 1 2] [--hosts 16] [--lead S]
                          [--timeout S] [--db-url URL] [--quick]

Per case (N, profile, engine count), a fresh ``reservation-sandbox
--engines 0`` on 16 fake compute hosts (all reservable but the first,
which takes the plain boot) with its leases DB on PostgreSQL (a schema
of its own, dropped afterwards), the engines run by
:mod:`harness.burst` behind :mod:`harness.fault_proxy`, and the burst of
:func:`harness.burst.book`: enders finishing at T0 and N starters from
T0. Profiles: ``clean``; ``stuck``, the snapshot of the server ender
that ends with ``snapshot_delete`` never becomes active; ``slow``, Nova
answers each of the engine's calls 2 s late and fails 30 % of them. The
plain boot of a server at T0 gives Nova's own boot time in the same run.
The case ends when every start and end is finished or ``--timeout``
seconds after T0.

One JSON line per case (see doc/source/contributor/benchmarks.rst):
``start_engine_s``, ``start_usable_s``, ``end_engine_s``,
``end_usable_s`` (p50, p99, max, count: seconds past T0),
``plain_boot_s``, ``events_per_s``, ``nova_calls_per_event``,
``leases_error``, ``unfinished``, ``double_executions``. Nothing is
asserted.
"""

import argparse
import datetime
import json
import math
import os
import platform
import shutil
import sys
import tempfile
import threading
import time

# Run as a script, Python puts bench/ on the path: the checkout too,
# for the packages ``bench`` and ``harness``.
sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(
    __file__))))

from bench import common  # noqa: E402
from harness import burst  # noqa: E402
from harness import fault_proxy  # noqa: E402
from harness import sandbox as harness_sandbox  # noqa: E402
from reservation_ext.sandbox import config as sandbox_config  # noqa: E402

PG_URL = ('postgresql+psycopg2://openstack_citest:openstack_citest@'
          'localhost/openstack_citest')
PROFILES = {
    'clean': {},
    'stuck': {'stuck': True},
    'slow': {'faults': {'nova': fault_proxy.Faults(2.0, 0.3)}},
}
# The targets of the issue: at N = 300 with one engine, clean and stuck.
TARGET_SLACK_S = 5
SETTLE_POLL = 2
WORKLOAD_END = datetime.timedelta(hours=2)


def parse_args(argv=None):
    """The command line's options."""
    parser = argparse.ArgumentParser(description=__doc__.split('\n')[0])
    parser.add_argument('--n', type=int, nargs='+', default=[100, 300],
                        help='starters per burst')
    parser.add_argument('--profiles', nargs='+', default=list(PROFILES),
                        choices=list(PROFILES))
    parser.add_argument('--engines', type=int, nargs='+', default=[1, 2])
    parser.add_argument('--workers', type=int, default=None,
                        help='[reservation] engine_workers of the engines '
                             '(default: the option\'s default)')
    parser.add_argument('--hosts', type=int, default=16,
                        help='fake compute hosts of the sandbox')
    parser.add_argument('--lead', type=float,
                        help='seconds from the first create to T0 '
                        '(default 30 + 0.4 N)')
    parser.add_argument('--timeout', type=float, default=240,
                        help='seconds after T0 at which a case stops')
    parser.add_argument('--db-url', default=PG_URL,
                        help='the leases DB server (a schema per case)')
    parser.add_argument('--logs',
                        help='a directory to copy each case\'s sandbox '
                        'logs to (a folder per case)')
    parser.add_argument('--quick', action='store_true',
                        help='N = 20, clean, one engine')
    args = parser.parse_args(argv)
    if args.quick:
        args.n, args.profiles, args.engines = [20], ['clean'], [1]
    return args


def percentiles(values):
    """p50, p99 and max (nearest rank, 2 decimals) and the count.

    None for each figure of an empty list.
    """
    ordered = sorted(values)

    def rank(share):
        """The nearest-rank value at ``share``."""
        if not ordered:
            return None
        return round(ordered[max(0, math.ceil(share * len(ordered)) - 1)],
                     2)
    return {'p50': rank(0.5), 'p99': rank(0.99), 'max': rank(1.0),
            'count': len(ordered)}


def lateness(records, phase, field):
    """Percentiles of ``field`` of the finished, not failed, ``phase``."""
    return percentiles([
        record[field] for record in records
        if record['phase'] == phase and record['status'] != 'ERROR' and
        record['event'] == 'DONE' and record[field] is not None])


def usable_by_kind(records):
    """``{<kind>_<phase>: {p50, max, count}}`` of the usable lateness."""
    groups = sorted({(r['kind'], r['phase']) for r in records})
    figures = {}
    for kind, phase in groups:
        found = lateness([r for r in records if r['kind'] == kind],
                         phase, 'usable')
        figures['%s_%s' % (kind, phase)] = {
            key: found[key] for key in ('p50', 'max', 'count')}
    return figures


def event_rate(records, t0):
    """Finished events per second from T0 to the last one's finish."""
    done = [record['finished_at'] for record in records
            if record['event'] in burst.FINISHED and record['finished_at']]
    if not done:
        return None
    seconds = (max(done) - t0).total_seconds()
    return round(len(done) / seconds, 2) if seconds > 0 else None


def case_line(case, records, t0, facts):
    """The JSON line of one case from its records and other facts.

    ``facts``: ``nova_calls``, ``nova_call_s`` (the seconds Nova took to
    answer them), ``nova_calls_by_kind``, ``plain_boot_s``,
    ``double_executions``
    (and ``doubles_by_kind``), ``create_failures``, ``seconds``.
    """
    finished = [r for r in records if r['event'] in burst.FINISHED]
    errors = [r for r in records if r['status'] == 'ERROR']
    line = dict(case, **{
        'start_engine_s': lateness(records, 'start', 'issued'),
        'start_usable_s': lateness(records, 'start', 'usable'),
        'end_engine_s': lateness(records, 'end', 'issued'),
        'end_usable_s': lateness(records, 'end', 'usable'),
        'usable_by_kind': usable_by_kind(records),
        'plain_boot_s': facts['plain_boot_s'],
        'events': len(records), 'events_finished': len(finished),
        'events_per_s': event_rate(records, t0),
        'nova_calls': facts['nova_calls'],
        'nova_calls_per_event': (round(facts['nova_calls'] / len(finished),
                                       1) if finished else None),
        'nova_call_s': facts['nova_call_s'],
        'nova_calls_by_kind': facts['nova_calls_by_kind'],
        'leases_error': len(errors),
        'error_reasons': sorted({str(r['reason'])[:120]
                                 for r in errors})[:3],
        'unfinished': len(records) - len(finished),
        'double_executions': facts['double_executions'],
        'doubles_by_kind': facts['doubles_by_kind'],
        'create_failures': facts['create_failures'],
        'seconds': facts['seconds'],
        'target_start_engine_p99_s': (sandbox_config.ENGINE_POLL_INTERVAL +
                                      TARGET_SLACK_S)})
    return line


def calls_by_kind(calls):
    """``{"METHOD resource[ action]": [count, seconds in all]}``."""
    kinds = {}
    for call in calls:
        parts = call.path.strip('/').split('/')
        kind = ' '.join([call.method] + parts[1:2] + (
            [call.action] if call.action else []))
        count, seconds = kinds.get(kind, (0, 0.0))
        kinds[kind] = [count + 1, round(seconds + (call.took or 0), 1)]
    return dict(sorted(kinds.items(), key=lambda item: -item[1][1]))


def wait_finished(layout, leases, deadline):
    """Wait until every start or end is finished and took effect.

    An engine may finish a start once its action is issued, before the
    server or volume is ready: the records must then wait for Nova and
    Cinder too. Returns at ``deadline`` at the latest.
    """
    while burst.utcnow() < deadline:
        records = burst.observe(layout, leases, [], {}, burst.utcnow())
        if all(record['event'] in burst.FINISHED and (
                record['event'] == 'ERROR' or record['usable'] is not None
                or record['kind'] in ('host', 'capacity'))
               for record in records):
            return
        time.sleep(SETTLE_POLL)


def wait_until(moment):
    """Sleep until the naive UTC ``moment``."""
    left = (moment - burst.utcnow()).total_seconds()
    if left > 0:
        time.sleep(left)


def burst_run(layout, args, case, proxy):
    """Book, wait for T0, let the engines work; the case's line.

    The profile's faults begin 2 s before T0: the enders start on a
    healthy Nova.
    """
    cloud = burst.Cloud(layout)
    burst.prepare(cloud)
    engines = burst.Engines(layout, proxy, case['engines'],
                            workers=case['workers'])
    began = time.monotonic()
    try:
        t0, leases, failures, before = book_and_wait(layout, args, case,
                                                     proxy, cloud)
    finally:
        engines.stop()
    calls = proxy.calls_since(before['measured_from'])
    records = burst.observe(layout, leases, calls, before['aggregates'], t0)
    # Enders too may still be starting at T0 on a slow Nova.
    started_volumes = sum(
        1 for launched, _deleted in burst.cinder_facts(layout, {
            lease.resource_id for lease in leases
            if lease.kind == 'volume'}).values()
        if launched and launched >= before['measured_from'])
    doubles = {'creates': burst.duplicate_creates(calls),
               'builds': sum(1 for r in records if r['builds'] > 1),
               'volume_commits': max(0, burst.volume_commits(layout) -
                                     before['commits'] - started_volumes)}
    nova_calls = [call for call in calls if call.service == 'nova']
    return case_line(case, records, t0, {
        'nova_calls': len(nova_calls),
        'nova_call_s': percentiles([call.took for call in nova_calls
                                    if call.took is not None]),
        'nova_calls_by_kind': calls_by_kind(nova_calls),
        'plain_boot_s': before['plain'].get('boot'),
        'double_executions': sum(doubles.values()),
        'doubles_by_kind': doubles,
        'create_failures': failures[:3] + (
            ['...%d more' % (len(failures) - 3)] if len(failures) > 3
            else []),
        'seconds': round(time.monotonic() - began, 1)})


def book_and_wait(layout, args, case, proxy, cloud):
    """Book the burst, boot the plain server at T0, wait for the end.

    :returns: ``(t0, leases, failures, before)``, ``before`` what was
        read just before T0 and the plain boot's time.
    """
    lead = args.lead or 30 + 0.4 * case['n']
    t0 = (burst.utcnow() + datetime.timedelta(seconds=lead)).replace(
        microsecond=0)
    leases, failures = burst.book(cloud, 'burst', case['n'], t0,
                                  t0 + WORKLOAD_END, proxy.stuck_image_prefix
                                  or 'burst-snapshot')
    wait_until(t0 - datetime.timedelta(seconds=2))
    proxy.faults = dict(PROFILES[case['profile']].get('faults', {}))
    before = {'aggregates': burst.aggregate_ids(layout),
              'commits': burst.volume_commits(layout),
              'measured_from': burst.utcnow(), 'plain': {}}
    booter = threading.Thread(target=lambda: (
        wait_until(t0), before['plain'].update(
            boot=burst.plain_boot(cloud, 'burst-plain', args.timeout))),
        daemon=True)
    booter.start()
    wait_finished(layout, leases, t0 + datetime.timedelta(
        seconds=args.timeout))
    booter.join()
    return t0, leases, failures, before


def run_case(args, case):
    """One case in a sandbox of its own; its line."""
    profile = PROFILES[case['profile']]
    with tempfile.TemporaryDirectory() as tmp, \
            common.scratch_database(args.db_url, tmp) as url, \
            harness_sandbox.SandboxFixture(hosts=args.hosts, options=[
                '--engines', '0', '--db-url', url]) as sandbox:
        layout = sandbox_config.Layout.load(sandbox.state_dir)
        proxy = fault_proxy.FaultProxy(
            {name: layout.url(name) for name in sandbox_config.SERVICES},
            stuck_image_prefix='burst-stuck' if profile.get('stuck')
            else None)
        try:
            return burst_run(layout, args, case, proxy)
        finally:
            proxy.stop()
            if args.logs:
                shutil.copytree(os.path.dirname(layout.log_path('x')),
                                os.path.join(args.logs, '%(n)d-%(profile)s-'
                                             '%(engines)d' % case),
                                dirs_exist_ok=True)


def main(argv=None):
    """Run every case; print its line."""
    args = parse_args(argv)
    for engines in args.engines:
        for profile in args.profiles:
            for n in args.n:
                case = {'bench': 'burst', 'n': n, 'profile': profile,
                        'engines': engines, 'workers': args.workers,
                        'hosts': args.hosts,
                        'db': args.db_url.split(':')[0].split('+')[0],
                        'python':
                        platform.python_version(),
                        'poll_interval_s':
                        sandbox_config.ENGINE_POLL_INTERVAL}
                print(json.dumps(run_case(args, case)), flush=True)
    return 0


if __name__ == '__main__':
    sys.exit(main())
