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

"""Schedule proposals of Heat stacks, small to nearly the whole pool.

    python bench/stack_proposals.py [--hosts 1000] [--bookings 10000]
                                    [--shares 0.6 0.95] [--small 2]
                                    [--duration 1d] [--count 5]
                                    [--reps 5] [--warmup 1] [--seed 42]
                                    [--budget 120] [--db-url URL]
                                    [--shared DIR]

The workload is ``shared/bench/blazar_alloc.py``'s, generated in process
(``--hosts`` H, ``--bookings`` A as its ``--allocs``, ``--seed``): whole-host
leases of 1 to 4 hosts, 1 to 7 days long, over the year from 2030-01-01.
Every host is given one size (32 vCPUs, 128 GiB of RAM, 2,000 GB of disk:
with Nova's default ratios and reserve, two servers of the ``bench.half``
flavor fit on a free host and no more), so that a stack's share of the
hosts is exact. They load into a fresh leases DB (a temporary SQLite file
unless --db-url) as ``bench/planner.py`` loads them.

The lease API's WSGI application (no Keystone; Heat's preview, Nova's
flavors and Neutron's networks are in-process fakes that answer as they
would) answers, as a member of a project at the start of the year, ``POST
/v1/leases/proposals`` of one ``heat:stack`` reservation, ``count``
windows of ``--duration`` over the year. The proposals are deleted
(untimed) after each request, so that every request sees the same
schedule. The cases:

* ``small``: ``--small`` servers of ``m1.large``;
* ``share-<p>``: for each p of ``--shares``, 2 x round(p x H) servers of
  ``bench.half``: they need that share of all the hosts.

The first (warm-up) answer of each case is checked against a plain model
of the workload (``valid``): each proposal is the earliest candidate start
(``not_before``, or the end of a booking or of an earlier proposal) after
the one before at which the free seats of the flavor (those of the hosts
no booking overlaps, less the slices earlier proposals hold there) number
the servers; its holds are the stack's servers, on hosts free of bookings,
within each host's size beside the other proposals' holds.

When the warm-up takes so long that ``--reps`` would run past
``--budget`` seconds for the case, the reps are cut (at least one;
``reps_cut`` says so). One JSON line per case: ``servers``,
``hosts_needed``, ``p50_ms``, ``p90_ms``, ``min_ms``, ``max_ms``,
``sql_per_request``, ``valid``, ``starts`` (the proposals' starts).
Nothing is asserted.
"""

import argparse
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
import types

from oslo_config import cfg
from oslo_messaging import conffixture
import sqlalchemy as sa
import webob

# Run as a script, Python puts bench/ on the path: the checkout too,
# for the packages ``bench`` and ``harness``.
sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(
    __file__))))

from bench import by_path  # noqa: E402
from bench import common  # noqa: E402
from db import api as db_api  # noqa: E402
from db import models  # noqa: E402
from db import tables  # noqa: E402
from reservation_ext.api import wsgi  # noqa: E402
from reservation_ext.clients import compute as compute_client  # noqa: E402
from reservation_ext.clients import plugin_clients  # noqa: E402
from reservation_ext import clock as clock_mod  # noqa: E402
from reservation_ext import conf as conf_mod  # noqa: E402
from reservation_ext import dates  # noqa: E402
from reservation_ext.leases import notifications  # noqa: E402
from reservation_ext.planning import host_capacity  # noqa: E402
from reservation_ext import plugins as plugins_mod  # noqa: E402

ALLOCATIONS = tables.ALLOCATIONS
HOST_SIZE = {'vcpus': 32, 'memory_mb': 131072, 'local_gb': 2000}
# (vcpus, memory_mb, disk_gb). Two bench.half fill the 130,560 MB a host
# has beside Nova's default reserve of 512 MB.
FLAVORS = {'m1.large': (4, 8192, 80), 'bench.half': (16, 65280, 1000)}
BIG = 'bench.half'


def parse_args(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split('\n')[0])
    add = parser.add_argument
    add('--hosts', type=int, default=1000, help='reservable hosts (H)')
    add('--bookings', type=int, default=10000,
        help="blazar_alloc.py's --allocs: whole-host leases (A)")
    add('--shares', type=float, nargs='*', default=[0.6, 0.95],
        help='the shares of all hosts the big stacks need')
    add('--small', type=int, default=2, help='servers of the small stack')
    add('--duration', default='1d', help="the stack's window")
    add('--count', type=int, default=5, help='proposals per request')
    add('--reps', type=int, default=5, help='timed requests per case')
    add('--warmup', type=int, default=1,
        help='untimed requests per case (the first is checked)')
    add('--seed', type=int, default=42, help="blazar_alloc.py's seed")
    add('--budget', type=float, default=120.0,
        help='seconds of timed requests per case, at most (about)')
    add('--db-url', help='an empty database to load into (default: a '
        'fresh temporary SQLite file)')
    add('--shared', default=common.DEFAULT_SHARED,
        help='the shared folder holding bench/blazar_alloc.py')
    return parser.parse_args(argv)


# The workload.

def generate(args, tmp):
    """Return blazar_alloc.py's workload, as its --dump-workload writes it.

    Every host gets :data:`HOST_SIZE`.
    """
    generator = by_path.blazar_alloc(args.shared)
    gen_args = generator.parse_args([
        '--hosts', str(args.hosts), '--allocs', str(args.bookings),
        '--seed', str(args.seed), '--reps', '0', '--warmup', '0'])
    path = os.path.join(tmp, 'workload.json')
    generator.dump_workload(generator.generate_workload(gen_args),
                            gen_args, path)
    with open(path) as f:
        workload = json.load(f)
    for host in workload['hosts']:
        host.update(HOST_SIZE)
    return workload


class Model:
    """The workload's whole-host bookings by host, searched plainly.

    With hosts of one size and a stack of one flavor, the stack fits a
    window when the seats left on the hosts no booking overlaps, less the
    slices that earlier proposals hold there, number its servers: packing
    one size never wastes room.
    """

    def __init__(self, workload, ids, usable, margin):
        self.busy = {host: [] for host in ids.values()}
        for lease in workload['leases']:
            for host in lease['hosts']:
                self.busy[ids[host]].append(
                    (common.parse_date(lease['start']),
                     common.parse_date(lease['end'])))
        for windows in self.busy.values():
            windows.sort()
        self.starts = {host: [a for a, _b in windows]
                       for host, windows in self.busy.items()}
        self.capacity = tuple(int(value) for value in usable.of(
            HOST_SIZE['vcpus'], HOST_SIZE['memory_mb'],
            HOST_SIZE['local_gb']))
        self.margin = margin
        self.ends = sorted({b + margin for windows in self.busy.values()
                            for _a, b in windows})

    def booked(self, host, start, end):
        """Whether a booking, widened by the margin, overlaps the window."""
        index = bisect.bisect_left(self.starts[host], end + self.margin)
        return index > 0 and (
            self.busy[host][index - 1][1] + self.margin > start)

    def seats(self, size, held):
        """The slices of ``size`` a host fits beside ``held`` slices."""
        left = [c - held * s for c, s in zip(self.capacity, size)]
        return max(0, min(room // s for room, s in zip(left, size) if s))

    def held(self, holds, start, end):
        """``{host: slices}`` of the ``holds`` that overlap the window."""
        held = {}
        for (lower, upper), host in holds:
            if lower < end and upper > start:
                held[host] = held.get(host, 0) + 1
        return held

    def fits(self, size, count, window, holds):
        """Whether ``count`` slices of ``size`` find room in the window."""
        held = self.held(holds, *window)
        most, found, left = self.seats(size, 0), 0, len(self.busy)
        for host in self.busy:
            left -= 1
            if not self.booked(host, *window):
                found += self.seats(size, held.get(host, 0))
            if found >= count:
                return True
            if found + left * most < count:
                return False
        return False

    def earliest(self, size, count, span, after, holds):
        """The first candidate start after ``after`` where the stack fits.

        Candidates: ``first`` and where a booking or hold ends (plus the
        margin), up to ``last``.
        """
        first, last, duration = span
        ends = [upper for (_lower, upper), _host in holds]
        for start in sorted(set([first] + self.ends + ends)):
            if start < first or (after is not None and start <= after):
                continue
            if start > last:
                return None
            if self.fits(size, count, (start, start + duration), holds):
                return start
        return None

    def holds_right(self, size, count, window, placed, holds):
        """Whether ``placed`` (``[(host, size)]``) is right.

        The stack's servers, on hosts free of bookings, within their size
        beside ``holds``.
        """
        if len(placed) != count or any(s != size for _h, s in placed):
            return False
        held = self.held(holds, *window)
        mine = {}
        for host, _size in placed:
            mine[host] = mine.get(host, 0) + 1
        return all(not self.booked(host, *window) and
                   self.seats(size, held.get(host, 0)) >= n
                   for host, n in mine.items())

    def valid(self, stack, span, wanted, found):
        """Whether ``found`` (``[(start, [(host, size)])]``) is right."""
        size, count = stack
        first, last, duration = span
        holds, after = [], None
        for start, placed in found:
            window = (start, start + duration)
            if start != self.earliest(size, count, span, after, holds) or (
                    not self.holds_right(size, count, window, placed,
                                         holds)):
                return False
            reach = (start - self.margin, start + duration + self.margin)
            holds.extend((reach, host) for host, _size in placed)
            after = start
        return len(found) == wanted or self.earliest(
            size, count, span, after, holds) is None


# The lease API, with Heat, Nova and Neutron faked.

class FakeHeat:
    """Heat's preview: the template's resources, as Heat lists them."""

    @staticmethod
    def preview(auth, name, text, parameters, environment=None):
        resources = json.loads(text)['resources']
        return {'resources': [
            {'resource_name': name, 'resource_type': resource['type'],
             'properties': resource['properties']}
            for name, resource in sorted(resources.items())]}


class FakeNova:
    """Nova's flavors, by name."""

    @staticmethod
    def find_flavor(name):
        if name not in FLAVORS:
            return None
        vcpus, ram, disk = FLAVORS[name]
        return {'id': name, 'vcpus': vcpus, 'ram': ram, 'disk': disk}


class FakeNeutron:
    """Neutron's networks: none (the stacks have no floating IPs)."""

    @staticmethod
    def find_network_id(name):
        return None


def template(flavor, count):
    """A HOT template (JSON text) of ``count`` servers of ``flavor``."""
    return json.dumps({'heat_template_version': '2021-04-16', 'resources': {
        'server-%05d' % index: {'type': 'OS::Nova::Server', 'properties': {
            'flavor': flavor, 'image': 'cirros'}}
        for index in range(count)}})


class Bench:
    """The lease API over the loaded workload, and its statement count."""

    def __init__(self, engine, now):
        self.conf = cfg.ConfigOpts()
        conf_mod.register_opts(self.conf)
        self.conf([], project='reservation')
        conffixture.ConfFixture(self.conf).setUp()
        cfg.CONF([], project='reservation-ext', default_config_files=[])
        clock = clock_mod.ManualClock(now)
        clients = plugin_clients.PluginClients(
            self.conf, nova=FakeNova(), network=FakeNeutron())
        clients.heat = FakeHeat()
        self.app = wsgi.build_app(
            self.conf, clock,
            plugins_mod.load_plugins(self.conf, clock, clients),
            notifications.get_notifier(self.conf),
            compute_client.NovaClient(self.conf))
        self.engine = engine
        self.statements = 0
        sa.event.listen(engine, 'before_cursor_execute', self._count)

    def _count(self, *args):
        self.statements += 1

    def propose(self, body):
        """POST the proposals request: ``(response, ms, statements)``."""
        req = webob.Request.blank('/v1/leases/proposals', method='POST',
                                  headers={'X-User-Id': 'bench',
                                           'X-Project-Id': 'bench',
                                           'X-Roles': 'member,reader'})
        # What keystonemiddleware leaves: the caller's token, for Heat.
        req.environ['keystone.token_auth'] = types.SimpleNamespace(
            user=object())
        req.body = json.dumps(body).encode()
        req.content_type = 'application/json'
        gc.collect()
        self.statements = 0
        began = time.perf_counter_ns()
        response = req.get_response(self.app)
        elapsed = (time.perf_counter_ns() - began) / 1e6
        return response, elapsed, self.statements

    def held(self, response):
        """``[(start, [(host, size)])]`` of the answer's proposals."""
        found = []
        with self.engine.connect() as conn:
            for proposal in response.json.get('proposals', []):
                rows = conn.execute(sa.select(
                    ALLOCATIONS.c.host_id, ALLOCATIONS.c.vcpus,
                    ALLOCATIONS.c.memory_mb, ALLOCATIONS.c.disk_gb).where(
                        ALLOCATIONS.c.proposal_id == proposal['id']))
                found.append((_parsed(proposal['start_date']),
                              [(row[0], tuple(row[1:])) for row in rows]))
        return found

    def forget_proposals(self):
        with self.engine.begin() as conn:
            conn.execute(sa.delete(ALLOCATIONS).where(
                ALLOCATIONS.c.proposal_id.isnot(None)))
            conn.execute(sa.delete(models.Proposal.__table__))


def _parsed(text):
    return common.parse_date(text.replace('T', ' '))


# The cases.

def cases(args, model):
    """``[(name, flavor, servers, hosts needed)]``."""
    small = model.seats(FLAVORS['m1.large'], 0)
    listed = [('small', 'm1.large', args.small, -(-args.small // small))]
    per_host = model.seats(FLAVORS[BIG], 0)
    for share in args.shares:
        needed = round(share * args.hosts)
        listed.append(('share-%g' % share, BIG, per_host * needed, needed))
    return listed


def timed(bench, body, reps, warmup, budget):
    """Warm up (the first answer kept), then up to ``reps`` timed calls.

    :returns: ``(first response and its holds, times, statements, cut)``.
    """
    first, times, statements = None, [], []
    warm_ms = 0.0
    for _rep in range(max(warmup, 1)):
        response, elapsed, _count = bench.propose(body)
        if first is None:
            first = (response, bench.held(response))
        bench.forget_proposals()
        warm_ms = max(warm_ms, elapsed)
    todo = max(1, min(reps, int(budget * 1000 // max(warm_ms, 1))))
    for _rep in range(todo):
        _response, elapsed, count = bench.propose(body)
        bench.forget_proposals()
        times.append(elapsed)
        statements.append(count)
    return first, times, statements, todo < reps


def run_case(bench, model, args, case, span):
    """Time one case; return its line."""
    name, flavor, servers, needed = case
    first, last, duration = span
    body = {'reservations': [{'resource_type': 'heat:stack',
                              'template': template(flavor, servers)}],
            'duration': args.duration, 'count': args.count,
            'not_before': str(first), 'not_after': str(last)}
    (response, found), times, statements, cut = timed(
        bench, body, args.reps, args.warmup, args.budget)
    valid = response.status_int == 201 and model.valid(
        (FLAVORS[flavor], servers), span, args.count, found)
    line = {'case': name, 'flavor': flavor, 'servers': servers,
            'hosts_needed': needed, 'reps': len(times), 'reps_cut': cut,
            'p50_ms': round(statistics.median(times), 3),
            'p90_ms': round(_p90(times), 3),
            'sql_per_request': statistics.median(statements),
            'valid': valid,
            'starts': [dates.format_date(start) for start, _p in found]}
    line.update({key: value for key, value in common.summary_ms(
        times).items() if key in ('min_ms', 'max_ms')})
    return line


def _p90(times):
    """The 90th percentile, within the times (one time is its own)."""
    if len(times) < 2:
        return times[0]
    return statistics.quantiles(times, n=10, method='inclusive')[-1]


def main(argv=None):
    args = parse_args(argv)
    with tempfile.TemporaryDirectory() as tmp:
        workload = generate(args, tmp)
        first = common.parse_date(workload['horizon_start'])
        span = (first, first + datetime.timedelta(
            days=workload['params']['horizon_days']),
            dates.parse_duration(args.duration, 'duration'))
        with common.scratch_database(args.db_url, tmp) as url:
            db_api.context_manager.configure(connection=url)
            engine = db_api.get_engine()
            ids = common.load_workload(engine, workload)
            bench = Bench(engine, first)
            model = Model(workload, ids,
                          host_capacity.from_nova_conf(bench.conf),
                          datetime.timedelta(
                              minutes=bench.conf.reservation.cleaning_time))
            for case in cases(args, model):
                out = {'bench': 'stack_proposals',
                       'db': engine.dialect.name,
                       'python': platform.python_version(),
                       'hosts': args.hosts, 'bookings': args.bookings,
                       'leases': len(workload['leases']), 'seed': args.seed,
                       'duration': args.duration, 'count': args.count}
                out.update(run_case(bench, model, args, case, span))
                print(json.dumps(out), flush=True)
            engine.dispose()
    return 0


if __name__ == '__main__':
    sys.exit(main())
