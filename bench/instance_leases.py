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

"""Reserved server boots: POST /servers with a future lease, in the sandbox.

    python bench/instance_leases.py [--hosts 1000] [--bookings 50000]
                                    [--requests 100] [--warmup 3]
                                    [--seed 42] [--scales H:A ...]

It starts a ``reservation-sandbox`` (4 fake compute hosts), loads into its
leases DB H reservable hosts (32 vCPUs, 128 GiB of RAM, 2,000 GB of disk;
not Nova hosts: the planner only reads the leases DB) and A existing
``virtual:instance`` bookings (a lease, its reservation and request, and a
slice allocation each) of the sizes of Nova's usual flavors, 1 hour to 7
days long, starting in the 30 days after the day after tomorrow. The
bookings are denser on the hosts of low id, as the planner's lowest-id
first packing leaves them (the host of a booking is ``int(H * u**2)``,
``u`` uniform): in any window the first hosts are full (some 20 at the
default size), and a booking must pass them over.

Then, as the admin, pairs of requests, the first ``--warmup`` untimed: a
plain ``POST /servers`` (m1.tiny, no network), whose server is built and
deleted before anything else is sent, so that no build runs beside a
timed request; then the same boot with the hints ``reserved=True`` and
``lease_params`` for one day at a random minute of that month, which
nova-api's server middleware turns into a lease booking a slice of a
loaded host (the capacity check included) and a held-back build. Each
request is timed by the client around the HTTP call (keystoneauth1, token
cached).

Last, in this process, the statements one booking sends to a fresh SQLite
leases DB loaded the same way at each H:A of ``--scales``: the lease
service's create with the body the middleware builds, then the UPDATE that
keeps the build's arguments, counted with a ``before_cursor_execute``
hook.

JSON lines: ``reserved_post`` and ``plain_post`` (``p50_ms``, ``p90_ms``,
``mean_ms``, ``min_ms``, ``max_ms``, ``statuses``, ``valid``; the
reserved line also ``passed_over_p50`` and ``passed_over_max``, how many
loaded hosts came before the booked one), ``overhead`` (reserved minus
plain, the target being a p50 of at most 100 ms) and one ``statements``
line per scale (``sql_per_booking``, its ``sql_min`` and ``sql_max`` over
the samples, ``sql_kinds`` and the in-process ``p50_ms``). Nothing is
asserted.
"""

import argparse
import collections
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
import uuid

from keystoneauth1 import adapter
import nova.version
import sqlalchemy as sa

# Run as a script, Python puts bench/ on the path: the checkout too,
# for the packages ``bench`` and ``harness``.
sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(
    __file__))))

from bench import common  # noqa: E402
from db import api as db_api  # noqa: E402
from db import models  # noqa: E402
from harness import sandbox as harness_sandbox  # noqa: E402
from reservation_ext import clock as clock_mod  # noqa: E402
from reservation_ext import conf as conf_mod  # noqa: E402
from reservation_ext import context  # noqa: E402
from reservation_ext import dates  # noqa: E402
from reservation_ext.leases import hints as lease_hints  # noqa: E402
from reservation_ext.leases import notifications  # noqa: E402
from reservation_ext.leases import parsing as lease_requests  # noqa: E402
from reservation_ext.leases import service as lease_service  # noqa: E402
from reservation_ext.nova_api import server_records  # noqa: E402
from reservation_ext import plugins  # noqa: E402
from reservation_ext.plugins import virtual_instance  # noqa: E402
from reservation_ext.sandbox import config as sandbox_config  # noqa: E402
from reservation_ext.states import LeaseStatus  # noqa: E402
from reservation_ext.states import ReservationStatus  # noqa: E402
from reservation_ext.store import hosts as store_hosts  # noqa: E402

SANDBOX_HOSTS = 4
MICROVERSION = '2.87'
FLAVOR = '1'
HOST_SIZE = {'vcpus': 32, 'memory_mb': 131072, 'local_gb': 2000}
# Booking sizes: (vcpus, memory_mb, disk_gb) of Nova's usual flavors,
# m1.tiny (the flavor of the timed boots) to m1.xlarge.
SIZES = ((1, 512, 1), (1, 2048, 20), (2, 4096, 40), (4, 8192, 80),
         (8, 16384, 160))
LOAD_PROJECT = 'bench-load'
HORIZON_DAYS = 30
BOOKING_HOURS = (1, 7 * 24)
SKEW = 2
WINDOW = datetime.timedelta(days=1)
DATE_FORMAT = '%Y-%m-%d %H:%M'
POLL_INTERVAL = 0.2
POLL_TIMEOUT = 120
TARGET_OVERHEAD_MS = 100
ORDER = 'pairs: a plain boot, built and deleted, then a reserved boot'
TABLES = [models.Lease.__table__, models.Reservation.__table__,
          models.InstanceReservation.__table__,
          models.HostAllocation.__table__]


def scale(text):
    """An ``H:A`` argument as ``(hosts, bookings)``."""
    hosts, _, bookings = text.partition(':')
    return int(hosts), int(bookings)


def parse_args(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split('\n')[0])
    parser.add_argument('--hosts', type=int, default=1000,
                        help='reservable hosts loaded into the sandbox')
    parser.add_argument('--bookings', type=int, default=50000,
                        help='existing bookings loaded into the sandbox')
    parser.add_argument('--requests', type=int, default=100,
                        help='timed requests of each kind')
    parser.add_argument('--warmup', type=int, default=3,
                        help='untimed requests of each kind before them')
    parser.add_argument('--seed', type=int, default=42,
                        help='seed of the bookings and request windows')
    parser.add_argument('--scales', type=scale, nargs='+',
                        default=[(100, 5000), (1000, 5000), (1000, 50000)],
                        help='H:A of the statement counts')
    return parser.parse_args(argv)


# The workload.

def horizon_start():
    """Midnight (UTC) of the day after tomorrow: all windows are later."""
    today = clock_mod.SYSTEM.now().replace(hour=0, minute=0, second=0,
                                           microsecond=0)
    return today + datetime.timedelta(days=2)


def random_minute(rand, begin, days):
    """A random minute of the ``days`` days after ``begin``."""
    return begin + datetime.timedelta(minutes=rand.randrange(days * 1440))


def bookings_of(rand, hosts, count, begin):
    """``(host index, start, end, size)`` of ``count`` bookings."""
    bookings = []
    for _ in range(count):
        start = random_minute(rand, begin, HORIZON_DAYS)
        bookings.append((
            int(hosts * rand.random() ** SKEW), start,
            start + datetime.timedelta(hours=rand.randint(*BOOKING_HOURS)),
            rand.choice(SIZES)))
    return bookings


def request_windows(rand, count, begin):
    """``count`` one-day windows inside the bookings' month."""
    starts = [random_minute(rand, begin + WINDOW, HORIZON_DAYS - 2)
              for _ in range(count)]
    return [(start, start + WINDOW) for start in starts]


def host_rows(count):
    """``bulk_load`` rows of ``count`` reservable hosts."""
    return [(dict(HOST_SIZE, hypervisor_hostname='bench-host-%04d' % n,
                  service_name='bench-host-%04d' % n,
                  availability_zone='nova'), {}) for n in range(count)]


def booking_rows(bookings, host_ids):
    """Rows of TABLES for ``bookings`` on the hosts ``host_ids``."""
    lease_rows, reservations, requests, allocations = [], [], [], []
    for n, (host, start, end, size) in enumerate(bookings):
        lease_id, reservation_id, server_id = (str(uuid.uuid4())
                                               for _ in range(3))
        size = dict(zip(virtual_instance.SIZE_KEYS, size))
        lease_rows.append({'id': lease_id, 'name': 'bench-booking-%06d' % n,
                           'project_id': LOAD_PROJECT,
                           'status': LeaseStatus.PENDING,
                           'start_date': start, 'end_date': end})
        reservations.append({'id': reservation_id, 'lease_id': lease_id,
                             'resource_type': virtual_instance.RESOURCE_TYPE,
                             'resource_id': server_id,
                             'status': ReservationStatus.PENDING})
        requests.append(dict(size, id=reservation_id, server_id=server_id,
                             reservation_id=reservation_id, on_end='delete'))
        allocations.append(dict(size, id=str(uuid.uuid4()),
                                host_id=host_ids[host],
                                reservation_id=reservation_id,
                                start_date=start, end_date=end,
                                whole_host=False))
    return lease_rows, reservations, requests, allocations


def load(engine, hosts, bookings):
    """Insert the hosts and bookings in one transaction; the host ids."""
    with engine.begin() as conn:
        conn.execution_options(**{models.CLOCK: clock_mod.SYSTEM})
        ids = store_hosts.bulk_load(conn, host_rows(hosts))
        for table, rows in zip(TABLES, booking_rows(bookings, ids)):
            conn.execute(sa.insert(table), rows)
    common.analyze(engine)
    return ids


def reservation_hints(start, end):
    """The scheduler hints of a reserved boot for ``[start, end)``."""
    return {'reserved': 'True', 'lease_params': json.dumps(
        {'start': start.strftime(DATE_FORMAT),
         'end': end.strftime(DATE_FORMAT)})}


# The sandbox.

def compute_adapter(layout):
    """The admin's compute API, with unlimited quotas."""
    session = sandbox_config.session(layout)
    compute = adapter.Adapter(session, service_type='compute',
                              region_name=sandbox_config.REGION,
                              default_microversion=MICROVERSION)
    compute.put('/os-quota-sets/%s' % session.get_project_id(), json={
        'quota_set': {'instances': -1, 'cores': -1, 'ram': -1}})
    return compute


def timed_boot(compute, name, hints=None):
    """POST /servers; ``(milliseconds, response)``."""
    body = {'server': {'name': name, 'imageRef': sandbox_config.IMAGE_ID,
                       'flavorRef': FLAVOR, 'networks': 'none'}}
    if hints is not None:
        body['os:scheduler_hints'] = hints
    gc.collect()
    began = time.perf_counter()
    response = compute.post('/servers', json=body, raise_exc=False)
    return (time.perf_counter() - began) * 1e3, response


def wait_for(check):
    """Poll ``check()`` until it returns a value other than None."""
    deadline = time.monotonic() + POLL_TIMEOUT
    while time.monotonic() < deadline:
        value = check()
        if value is not None:
            return value
        time.sleep(POLL_INTERVAL)
    raise RuntimeError('not done in %d s: %s' % (POLL_TIMEOUT, check))


def build_then_delete(compute, server_id):
    """Wait for a plain server's build, delete it; its build status."""
    path = '/servers/%s' % server_id

    def built():
        status = compute.get(path).json()['server']['status']
        return None if status == 'BUILD' else status

    def gone():
        return compute.get(path, raise_exc=False).status_code == 404 or None
    status = wait_for(built)
    compute.delete(path)
    wait_for(gone)
    return status


def report_failure(kind, response):
    """A refused request's status and body, on standard error."""
    print('%s POST /servers: HTTP %d %s' % (kind, response.status_code,
                                            response.text),
          file=sys.stderr, flush=True)


def boot_pairs(compute, windows, prefix):
    """A plain then a reserved boot per window; what each kind got."""
    results = {kind: {'times': [], 'statuses': collections.Counter(),
                      'lease_ids': [], 'builds': collections.Counter()}
               for kind in ('plain', 'reserved')}
    for n, (start, end) in enumerate(windows):
        for kind, hints in (('plain', None),
                            ('reserved', reservation_hints(start, end))):
            elapsed, response = timed_boot(compute, '%s-%s-%d' % (
                prefix, kind, n), hints)
            result = results[kind]
            result['times'].append(elapsed)
            result['statuses'][str(response.status_code)] += 1
            if response.status_code != 202:
                report_failure(kind, response)
                continue
            server = response.json()['server']
            if hints is None:
                result['builds'][build_then_delete(
                    compute, server['id'])] += 1
            else:
                result['lease_ids'].append(lease_id_of(compute,
                                                       server['id']))
    return results


def lease_id_of(compute, server_id):
    """The lease of a server, from its view's metadata (not timed)."""
    return compute.get('/servers/%s' % server_id).json()['server'][
        'metadata'].get('reservation:lease_id')


def passed_over(layout, lease_ids, host_ids):
    """How many loaded hosts precede the host each lease booked."""
    allocations = models.HostAllocation.__table__
    reservations = models.Reservation.__table__
    engine = sa.create_engine(layout.leases_db_url)
    with engine.connect() as conn:
        booked = conn.execute(
            sa.select(allocations.c.host_id).join(
                reservations,
                reservations.c.id == allocations.c.reservation_id)
            .where(reservations.c.lease_id.in_(lease_ids))).scalars().all()
    engine.dispose()
    position = {host_id: n for n, host_id in enumerate(host_ids)}
    return [position[host_id] for host_id in booked]


def timing_fields(times_ms):
    """p50, p90, mean, min and max of timings in milliseconds."""
    stats = common.summary_ms(times_ms)
    return {'p50_ms': stats['median_ms'], 'p90_ms': stats['p90_ms'],
            'mean_ms': round(statistics.mean(times_ms), 3),
            'min_ms': stats['min_ms'], 'max_ms': stats['max_ms']}


def sandbox_runs(args, begin):
    """Load the sandbox and boot; the results and the booked positions."""
    rand = random.Random(args.seed)
    bookings = bookings_of(rand, args.hosts, args.bookings, begin)
    windows = request_windows(rand, args.warmup + args.requests, begin)
    with harness_sandbox.SandboxFixture(hosts=SANDBOX_HOSTS) as sandbox:
        layout = sandbox_config.Layout.load(sandbox.state_dir)
        engine = sa.create_engine(layout.leases_db_url,
                                  connect_args={'timeout': 60})
        host_ids = load(engine, args.hosts, bookings)
        engine.dispose()
        compute = compute_adapter(layout)
        boot_pairs(compute, windows[:args.warmup], 'warmup')
        results = boot_pairs(compute, windows[args.warmup:], 'bench')
        positions = passed_over(layout, [
            lease_id for lease_id in results['reserved']['lease_ids']
            if lease_id], host_ids)
    return results, positions


def sandbox_lines(args, begin):
    """The reserved_post, plain_post and overhead lines."""
    results, positions = sandbox_runs(args, begin)
    fields = {'hosts': args.hosts, 'bookings': args.bookings,
              'requests': args.requests, 'warmup': args.warmup,
              'flavor': FLAVOR, 'microversion': MICROVERSION,
              'sandbox_hosts': SANDBOX_HOSTS, 'order': ORDER}
    reserved, plain = results['reserved'], results['plain']
    reserved_line = dict(
        fields, kind='reserved_post', window_hours=WINDOW.days * 24,
        **timing_fields(reserved['times']),
        passed_over_p50=statistics.median_low(positions or [0]),
        passed_over_max=max(positions or [0]),
        statuses=dict(reserved['statuses']),
        valid=(reserved['statuses'] == {'202': args.requests} and
               len(positions) == args.requests))
    plain_line = dict(
        fields, kind='plain_post', **timing_fields(plain['times']),
        builds=dict(plain['builds']), statuses=dict(plain['statuses']),
        valid=plain['builds'] == {'ACTIVE': args.requests})
    overhead = {'overhead_%s' % key: round(reserved_line[key] -
                                           plain_line[key], 3)
                for key in ('p50_ms', 'p90_ms', 'mean_ms')}
    return [reserved_line, plain_line,
            dict(fields, kind='overhead', target_p50_ms=TARGET_OVERHEAD_MS,
                 **overhead)]


# Statements per booking, in this process.

class StatementKinds:
    """Counts statements by their first word (before_cursor_execute)."""

    def __init__(self, engine):
        self.kinds = collections.Counter()
        sa.event.listen(engine, 'before_cursor_execute', self._count)

    def _count(self, conn, cursor, statement, *args):
        self.kinds[statement.split(None, 1)[0].upper()] += 1


def configure(url):
    """Parse nova-api's configuration (none here) and point at ``url``."""
    conf_mod.CONF([], project='nova', default_config_files=[])
    conf_mod.CONF.set_override('connection', url, group=conf_mod.DB_GROUP)
    db_api.configure(conf_mod.CONF)


def make_lease_service():
    """The lease service as nova-api's server middleware makes it."""
    conf = conf_mod.CONF
    return lease_service.LeaseService(conf, clock_mod.SYSTEM,
                                      plugins.load_plugins(
                                          conf, clock_mod.SYSTEM),
                                      notifications.get_notifier(conf))


def book(service, ctx, hints):
    """What the middleware does for a created server with ``hints``."""
    conf = conf_mod.CONF.reservation
    server_id = str(uuid.uuid4())
    lease = lease_hints.parse(
        hints, clock_mod.SYSTEM.now(), 'bench-%s' % server_id,
        dates.parse_duration(conf.default_lease_duration,
                             'default_lease_duration'),
        virtual_instance.ON_END, conf.instance_on_end)
    vcpus, memory_mb, disk_gb = SIZES[0]
    service.create_parsed(ctx, lease_requests.with_reservation(
        lease, service.plugins, virtual_instance.RESOURCE_TYPE, dict(
            vcpus=vcpus, memory_mb=memory_mb, disk_gb=disk_gb,
            server_id=server_id, flavor_id=FLAVOR, shared_pool=False,
            on_end=lease['on_end'])))
    server_records.save_build_args(ctx, server_id, json.dumps(
        {'image': sandbox_config.IMAGE_ID}))


def statement_line(engine, counter, service, args, hosts, bookings, begin):
    """Load a fresh schema at one scale; count the statements of bookings."""
    rand = random.Random(args.seed)
    models.Base.metadata.drop_all(engine)
    models.Base.metadata.create_all(engine)
    load(engine, hosts, bookings_of(rand, hosts, bookings, begin))
    ctx = context.RequestContext(user_id='bench-user',
                                 project_id='bench-project',
                                 roles=['member', 'reader'],
                                 overwrite=False)
    counts, kinds, times = [], collections.Counter(), []
    for n, (start, end) in enumerate(request_windows(
            rand, args.warmup + args.requests, begin)):
        counter.kinds.clear()
        gc.collect()
        began = time.perf_counter()
        book(service, ctx, reservation_hints(start, end))
        if n >= args.warmup:
            times.append((time.perf_counter() - began) * 1e3)
            counts.append(sum(counter.kinds.values()))
            kinds = counter.kinds.copy()
    return {'kind': 'statements', 'hosts': hosts, 'bookings': bookings,
            'samples': len(counts),
            'sql_per_booking': statistics.median_low(counts),
            'sql_min': min(counts), 'sql_max': max(counts),
            'sql_kinds': dict(sorted(kinds.items())),
            'p50_ms': common.summary_ms(times)['median_ms']}


def statement_lines(args, begin):
    """One statements line per scale of ``--scales``."""
    with tempfile.TemporaryDirectory() as tmp:
        with common.scratch_database(None, tmp) as url:
            configure(url)
            engine = db_api.get_engine()
            counter = StatementKinds(engine)
            service = make_lease_service()
            lines = [statement_line(engine, counter, service, args, hosts,
                                    bookings, begin)
                     for hosts, bookings in args.scales]
            engine.dispose()
    return lines


def main(argv=None):
    args = parse_args(argv)
    begin = horizon_start()
    lines = sandbox_lines(args, begin) + statement_lines(args, begin)
    for line in lines:
        out = {'bench': 'instance_leases', 'db': 'sqlite',
               'python': platform.python_version(),
               'platform': platform.platform(), 'sqlalchemy': sa.__version__,
               'nova': nova.version.version_string(),
               'horizon_start': begin.strftime(DATE_FORMAT)}
        out.update(line)
        print(json.dumps(out), flush=True)
    return 0


if __name__ == '__main__':
    sys.exit(main())
