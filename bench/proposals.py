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

"""Schedule proposals and availability against a Blazar user's way.

    python bench/proposals.py --workload FILE [--db-url URL] [--reps N]
                              [--peer] [--shared DIR]

FILE comes from ``shared/bench/blazar_alloc.py ... --dump-workload FILE
--dump-only``. Its hosts and leases go into a fresh leases DB (a temporary
SQLite file unless --db-url). The lease API application (its WSGI ``App``,
no Keystone) answers, as a member of a project at the start of the
workload's year:

* ``propose-<filter>``: ``POST /v1/leases/proposals`` for 4 hosts, 2 days,
  ``count`` 5, over the year; the proposals are deleted (untimed) after
  each request, so that every request sees the same schedule;
* ``availability-<filter>``: ``GET /v1/availability`` of hosts over the
  first 30 days.

Each answer is checked against an independent brute-force model of the
workload (``valid``): the proposals are the first five candidate starts
(the start of the year, or a moment a booking ends) at which four matching
hosts are free, each taking its hosts before the next is sought; every
step of the availability counts the hosts free at its middle.

One JSON line per case with ``p50_ms``, ``p90_ms``, ``sql_per_request``
and ``valid``. --peer also times, on the same generator parameters, what a
Blazar 18 user must do for the same answer (``bench/peer_proposals.py``
under the peer virtualenv): list the hosts and the allocations through
Blazar's own plugin and DB API, then search the windows client-side; it
adds ``peer_p50_ms`` and ``speedup``.
"""

import bisect
import datetime
import gc
import json
import os
import platform
import statistics
import sys
import tempfile
import time
import urllib.parse

from oslo_config import cfg
from oslo_messaging import conffixture
import sqlalchemy as sa
import webob

# Run as a script, Python puts bench/ on the path: the checkout too,
# for the packages ``bench`` and ``harness``.
sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(
    __file__))))

from bench import common  # noqa: E402
from db import api as db_api  # noqa: E402
from db import models  # noqa: E402
from reservation_ext.api import wsgi  # noqa: E402
from reservation_ext.clients import compute as compute_client  # noqa: E402
from reservation_ext import clock as clock_mod  # noqa: E402
from reservation_ext import conf as conf_mod  # noqa: E402
from reservation_ext import dates  # noqa: E402
from reservation_ext.leases import notifications  # noqa: E402
from reservation_ext import plugins as plugins_mod  # noqa: E402

PEER_OPTIONS = ('hosts', 'allocs', 'seed', 'placement', 'horizon_days',
                'min_lease_hours', 'max_lease_hours', 'max_hosts_per_lease',
                'gpu_frac', 'racks', 'traits')
WANT = 4
DURATION = datetime.timedelta(days=2)
COUNT = 5
AVAILABILITY_DAYS = 30
_TICK = datetime.timedelta(microseconds=1)


def parse_args(argv=None):
    parser = common.workload_parser(__doc__.split('\n')[0])
    parser.add_argument('--reps', type=int, default=20,
                        help='timed requests per case')
    parser.add_argument('--peer-reps', type=int, default=5,
                        help='timed requests per case of the peer (each '
                             'takes seconds)')
    return parser.parse_args(argv)


class Model:
    """The workload's schedule by host, searched the slow, plain way."""

    def __init__(self, workload, ids):
        self.hosts = {ids[h['id']]: h for h in workload['hosts']}
        self.busy = {host: [] for host in self.hosts}
        for lease in workload['leases']:
            for host in lease['hosts']:
                self.busy[ids[host]].append((common.parse_date(lease['start']),
                                             common.parse_date(lease['end'])))
        for windows in self.busy.values():
            windows.sort()

    def matching(self, filter_name):
        match = common.MODEL_FILTERS[filter_name]
        return sorted(h for h, host in self.hosts.items() if match(host))

    def free(self, host, start, end):
        """Whether no booking of ``host`` overlaps [start, end).

        An empty period is a moment: free unless a booking holds it. A
        host's bookings do not overlap (the workload places them so):
        only the last that starts before the end can reach the start.
        """
        windows = self.busy[host]
        index = bisect.bisect_left(windows, (max(end, start + _TICK),))
        return index == 0 or windows[index - 1][1] <= start

    def proposals(self, filter_name, first, last):
        """``[(start, hosts)]``: the proposals the contract asks for."""
        hosts = self.matching(filter_name)
        found, taken = [], {host: [] for host in hosts}
        previous = None
        while len(found) < COUNT:
            candidates = sorted(
                {first} | {b for host in hosts
                           for _a, b in self.busy[host] + taken[host]
                           if b >= first})
            pick = None
            for start in candidates:
                if start > last:
                    break
                if previous is not None and start <= previous:
                    continue
                free = [h for h in hosts
                        if self.free(h, start, start + DURATION) and all(
                            b <= start or a >= start + DURATION
                            for a, b in taken[h])]
                if len(free) >= WANT:
                    pick = (start, free[:WANT])
                    break
            if pick is None:
                break
            found.append(pick)
            previous = pick[0]
            for host in pick[1]:
                taken[host].append((pick[0], pick[0] + DURATION))
        return found

    def free_count(self, filter_name, moment):
        return sum(1 for h in self.matching(filter_name)
                   if self.free(h, moment, moment))


class Bench:
    """The lease API over the loaded workload, and its statement count."""

    def __init__(self, engine, now):
        conf = cfg.ConfigOpts()
        conf_mod.register_opts(conf)
        conf([], project='reservation')
        conffixture.ConfFixture(conf).setUp()
        cfg.CONF([], project='reservation-ext', default_config_files=[])
        clock = clock_mod.ManualClock(now)
        self.app = wsgi.build_app(
            conf, clock, plugins_mod.load_plugins(conf, clock),
            notifications.get_notifier(conf),
            compute_client.NovaClient(conf))
        self.engine = engine
        self.statements = 0
        sa.event.listen(engine, 'before_cursor_execute', self._count)

    def _count(self, *args):
        self.statements += 1

    def request(self, method, path, body=None):
        req = webob.Request.blank(path, method=method, headers={
            'X-User-Id': 'bench', 'X-Project-Id': 'bench',
            'X-Roles': 'member,reader'})
        if body is not None:
            req.body = json.dumps(body).encode()
            req.content_type = 'application/json'
        gc.collect()
        self.statements = 0
        began = time.perf_counter_ns()
        response = req.get_response(self.app)
        elapsed = (time.perf_counter_ns() - began) / 1e6
        return response, elapsed, self.statements

    def forget_proposals(self):
        with self.engine.begin() as conn:
            conn.execute(sa.delete(models.HostAllocation.__table__).where(
                models.HostAllocation.__table__.c.proposal_id.isnot(None)))
            conn.execute(sa.delete(models.Proposal.__table__))


def run_case(bench, reps, call, check):
    """Time ``reps`` calls after a warm-up whose answer ``check`` judges.

    Every call gets the same answer: the schedule does not change.
    """
    response, _elapsed, _count = call()
    valid = check(response)
    times, statements = [], []
    for _rep in range(reps):
        _response, elapsed, count = call()
        times.append(elapsed)
        statements.append(count)
    line = {'reps': reps, 'p50_ms': round(statistics.median(times), 3),
            'p90_ms': round(statistics.quantiles(times, n=10)[-1], 3),
            'sql_per_request': statistics.median(statements),
            'valid': valid}
    line.update(common.summary_ms(times))
    return line


def propose_case(bench, model, filter_name, query, first, last, reps):
    body = {'reservations': [{'resource_type': 'physical:host', 'min': WANT,
                              'max': WANT, 'resource_properties': query}],
            'duration': '2d', 'count': COUNT, 'not_before': str(first),
            'not_after': str(last)}
    expected = [dates.format_date(start) for start, _hosts in
                model.proposals(filter_name, first, last)]

    def call():
        try:
            return bench.request('POST', '/v1/leases/proposals', body)
        finally:
            bench.forget_proposals()

    def check(response):
        return response.status_int == 201 and expected == [
            p['start_date'] for p in response.json['proposals']]

    line = run_case(bench, reps, call, check)
    line['starts'] = expected
    return line


def availability_case(bench, model, filter_name, query, first, reps):
    end = first + datetime.timedelta(days=AVAILABILITY_DAYS)
    params = {'resource_type': 'physical:host', 'start': str(first),
              'end': str(end)}
    if query:
        params['resource_properties'] = query
    path = '/v1/availability?' + urllib.parse.urlencode(params)

    def check(response):
        steps = response.json['availability']['free']
        return response.status_int == 200 and all(
            step['amount'] == model.free_count(filter_name, _middle(step))
            for step in steps)

    line = run_case(bench, reps, lambda: bench.request('GET', path), check)
    response, _elapsed, _count = bench.request('GET', path)
    steps = response.json['availability']['free']
    line['steps'] = len(steps)
    line['free_host_hours'] = round(sum(
        step['amount'] * (_parsed(step['end']) -
                          _parsed(step['start'])).total_seconds() / 3600
        for step in steps), 3)
    return line


def _parsed(text):
    return common.parse_date(text.replace('T', ' '))


def _middle(step):
    start, end = _parsed(step['start']), _parsed(step['end'])
    return start + (end - start) / 2


def peer_results(args, params, first, last):
    arguments = ['--shared', args.shared, '--reps', str(args.peer_reps),
                 '--first', first.isoformat(), '--last', last.isoformat()]
    for option in PEER_OPTIONS:
        arguments += ['--' + option.replace('_', '-'), str(params[option])]
    lines = common.run_peer(
        os.path.join(common.TOP, 'bench', 'peer_proposals.py'), arguments)
    return {line['case']: line for line in lines}


def main(argv=None):
    args = parse_args(argv)
    with open(args.workload) as f:
        workload = json.load(f)
    params = workload['params']
    first = common.parse_date(workload['horizon_start'])
    last = first + datetime.timedelta(days=params['horizon_days'])
    lines = []
    with tempfile.TemporaryDirectory() as tmp:
        url = args.db_url or 'sqlite:///' + os.path.join(tmp, 'bench.sqlite')
        db_api.context_manager.configure(connection=url)
        engine = db_api.get_engine()
        ids = common.load_workload(engine, workload)
        model = Model(workload, ids)
        bench = Bench(engine, first)
        for name, query in workload['filters'].items():
            lines.append(dict(case='propose-' + name, **propose_case(
                bench, model, name, query, first, last, args.reps)))
            lines.append(dict(case='availability-' + name,
                              **availability_case(bench, model, name, query,
                                                  first, args.reps)))
        engine.dispose()
    peer = peer_results(args, params, first, last) if args.peer else {}
    for line in lines:
        out = {'bench': 'proposals', 'db': engine.dialect.name,
               'python': platform.python_version(),
               'hosts': params['hosts'], 'allocs': params['allocs'],
               'leases': len(workload['leases'])}
        out.update(line)
        if line['case'] in peer:
            theirs = peer[line['case']]
            out.update(peer_p50_ms=theirs['p50_ms'],
                       peer_valid=all(theirs.get(key) == line.get(key)
                                      for key in ('starts',
                                                  'free_host_hours')),
                       peer_sql_per_request=theirs['sql_per_request'],
                       speedup=round(theirs['p50_ms'] / line['p50_ms'], 1))
        print(json.dumps(out), flush=True)
    return 0


if __name__ == '__main__':
    sys.exit(main())
