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

"""A preemptible request's scheduling: ReservationFilter + ReservationWeigher.

    python bench/weigher.py [--hosts 10000] [--bookings 3] [--days 30]
                            [--reps 30] [--warmup 3] [--seed 42]
                            [--db-url URL]

N reservable hosts go into a fresh leases DB (a temporary SQLite file
unless --db-url), each with ``--bookings`` whole-host bookings of PENDING
reservations at seeded random times of the next ``--days`` days (one to
three days long; they may overlap). For a preemptible request over N
Nova ``HostState`` objects, it times ``ReservationFilter.filter_all``
(the hosts closed to preemptibles), then
``ReservationWeigher.weigh_objects`` over the hosts that passed (the
reclaim times within the horizon), and the two together, rep by rep.
Both keep their answers until a booking changes
(:mod:`reservation_ext.planning.preemptible_view`): the reps run once
as they come, and once each after a booking changed (the
``booking_state`` generation bumped, as a booking's writer does), when
both read their answers again (``reread_*``). Every weight is checked
against a model computed here from the bookings generated (``valid``).

One JSON line: ``filter_*``, ``weigher_*`` and ``total_*`` (p50/p90 ms),
the same after a booking changed (``reread_filter_*``, ...),
``sql_per_request`` (of a request that reads nothing again), ``passed``
(hosts the filter passed), ``weighed`` (hosts with a booking within the
horizon) and ``valid``. Blazar has no
weigher: there is no peer figure. Nothing is asserted.
"""

import argparse
import datetime
import json
import os
import platform
import random
import sys
import tempfile
import time
import uuid

import nova.conf  # noqa: F401 - nova's options, as nova-scheduler has them
from nova import objects
from nova.scheduler import weights
import nova.version
import sqlalchemy as sa

# Run as a script, Python puts bench/ on the path: the checkout too.
sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(
    __file__))))

from bench import common  # noqa: E402
from bench import filter as filter_bench  # noqa: E402
from db import api as db_api  # noqa: E402
from db import models  # noqa: E402
from db import tables  # noqa: E402
from nova_filters import reservation_filter  # noqa: E402
from nova_filters import reservation_weigher  # noqa: E402
from reservation_ext import clock  # noqa: E402
from reservation_ext import conf as conf_mod  # noqa: E402
from reservation_ext import context  # noqa: E402
from reservation_ext.store import hosts as store_hosts  # noqa: E402


def parse_args(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split('\n')[0])
    parser.add_argument('--hosts', type=int, default=10000)
    parser.add_argument('--bookings', type=int, default=3,
                        help='bookings per host')
    parser.add_argument('--days', type=int, default=30,
                        help='the bookings start within these days')
    parser.add_argument('--reps', type=int, default=30)
    parser.add_argument('--warmup', type=int, default=3)
    parser.add_argument('--seed', type=int, default=42)
    parser.add_argument('--db-url', help='the database to load into '
                        '(default: a temporary SQLite file)')
    return parser.parse_args(argv)


def bookings(args, now):
    """``{hostname: [start, ...]}``: seeded, minutes apart from ``now``."""
    rand = random.Random(args.seed)
    minutes = args.days * 24 * 60
    return {'host-%05d' % n: sorted(
        now + datetime.timedelta(minutes=rand.randint(11, minutes))
        for _ in range(args.bookings)) for n in range(args.hosts)}


def load(starts):
    """Put the hosts and their bookings into the leases DB."""
    ctx = context.get_admin_context()
    # Before the writer: its first statement locks a table of the schema
    # on PostgreSQL and MariaDB.
    models.Base.metadata.create_all(db_api.get_engine())
    with db_api.writer(ctx, clock.SYSTEM) as session:
        names = list(starts)
        ids = dict(zip(names, store_hosts.bulk_load(session.connection(), [
            ({'hypervisor_hostname': name, 'service_name': name,
              'vcpus': 32, 'memory_mb': 131072, 'local_gb': 1000}, {})
            for name in names])))
        rows = _rows(starts, ids)
        for table, values in zip((models.Lease, models.Reservation,
                                  models.HostAllocation), rows):
            session.execute(sa.insert(table.__table__), values)


def _rows(starts, ids):
    """The leases, reservations and allocations of every booking."""
    rand = random.Random(0)
    leases, reservations, allocations = [], [], []
    for name, times in starts.items():
        for start in times:
            end = start + datetime.timedelta(days=rand.randint(1, 3))
            lease_id, reservation_id = str(uuid.uuid4()), str(uuid.uuid4())
            leases.append({'id': lease_id, 'name': lease_id,
                           'project_id': 'owner', 'start_date': start,
                           'end_date': end, 'status': 'PENDING'})
            reservations.append({'id': reservation_id, 'lease_id': lease_id,
                                 'resource_type': 'physical:host',
                                 'status': 'pending'})
            allocations.append({'id': str(uuid.uuid4()),
                                'host_id': ids[name],
                                'reservation_id': reservation_id,
                                'start_date': start, 'end_date': end,
                                'whole_host': True})
    return leases, reservations, allocations


def expected_weights(starts, now, conf):
    """The model: seconds until each host's reclaim, up to the horizon.

    :param conf: the ``[reservation]`` options.
    """
    ahead = datetime.timedelta(seconds=conf.preemption_lead_time,
                               minutes=conf.cleaning_time)
    cap = float(conf.preemptible_weigher_horizon)
    return {name: min(max((times[0] - ahead - now).total_seconds(), 0.0),
                      cap) for name, times in starts.items()}


def time_request(flt, weigher, hosts, spec, args, booked=False):
    """Time the filter, the weigher and both, rep by rep.

    :param booked: each rep comes after a booking changed (the
        ``booking_state`` generation moved), so that both read their
        answers again.
    """
    times = {'filter': [], 'weigher': [], 'total': []}
    for rep in range(args.warmup + args.reps):
        if booked:
            _booking_changed()
        began = time.perf_counter_ns()
        passed = flt.filter_all(hosts, spec)
        filtered = time.perf_counter_ns()
        # Nova makes these for its own weighers anyway.
        weighed = [weights.WeighedHost(host, 0.0) for host in passed]
        weighing = time.perf_counter_ns()
        found = weigher.weigh_objects(weighed, spec)
        ended = time.perf_counter_ns()
        if rep >= args.warmup:
            times['filter'].append((filtered - began) / 1e6)
            times['weigher'].append((ended - weighing) / 1e6)
            times['total'].append(
                (filtered - began + ended - weighing) / 1e6)
    return times, {host.nodename: weight
                   for host, weight in zip(passed, found)}


def _booking_changed():
    """Move the bookings' generation, as a booking's writer does."""
    with db_api.writer(context.get_admin_context(), clock.SYSTEM) as session:
        db_api.bump_counter(session, tables.BOOKING_STATE)


def statements_per_request(flt, weigher, hosts, spec):
    """SQL statements of one request: the filter's and the weigher's."""
    count = []

    def counter(*args):
        count.append(1)
    sa.event.listen(sa.engine.Engine, 'before_cursor_execute', counter)
    try:
        passed = flt.filter_all(hosts, spec)
        weigher.weigh_objects(
            [weights.WeighedHost(host, 0.0) for host in passed], spec)
    finally:
        sa.event.remove(sa.engine.Engine, 'before_cursor_execute', counter)
    return len(count)


def run(args, url):
    """Load, time one preemptible request; return the result line."""
    filter_bench._configure(url)
    objects.register_all()
    now = clock.SYSTEM.now().replace(microsecond=0)
    fixed = clock.ManualClock(now)
    # As in nova-scheduler: they point the leases DB at the options.
    flt = reservation_filter.ReservationFilter(clock=fixed)
    weigher = reservation_weigher.ReservationWeigher(clock=fixed)
    starts = bookings(args, now)
    load(starts)
    hosts = filter_bench.host_states({'host_names': list(starts)})
    spec = objects.RequestSpec(
        project_id='other', scheduler_hints={},
        flavor=objects.Flavor(
            extra_specs={'reservation:preemptible': 'true'}))
    times, found = time_request(flt, weigher, hosts, spec, args)
    reread, _found = time_request(flt, weigher, hosts, spec, args,
                                  booked=True)
    times.update(('reread_' + part, values)
                 for part, values in reread.items())
    conf = conf_mod.CONF.reservation
    model = expected_weights(starts, now, conf)
    line = {'hosts': len(hosts), 'bookings': len(hosts) * args.bookings,
            'reps': args.reps, 'passed': len(found),
            'weighed': sum(1 for weight in found.values()
                           if weight < conf.preemptible_weigher_horizon),
            'valid': all(found[name] == model[name] for name in found),
            'sql_per_request': statements_per_request(
                flt, weigher, hosts, spec)}
    for part, values in times.items():
        line.update({'%s_%s' % (part, key): value for key, value
                     in common.summary_ms(values).items()})
    db_api.get_engine().dispose()
    return line


def main(argv=None):
    args = parse_args(argv)
    with tempfile.TemporaryDirectory() as tmp:
        with common.scratch_database(args.db_url, tmp) as url:
            line = run(args, url)
    out = {'bench': 'nova_filters ReservationFilter + ReservationWeigher',
           'db': sa.engine.make_url(url).get_backend_name(),
           'python': platform.python_version(),
           'nova': nova.version.version_string()}
    out.update(line)
    print(json.dumps(out), flush=True)
    return 0


if __name__ == '__main__':
    sys.exit(main())
