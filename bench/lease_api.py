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

"""Lease creation: POST /reservation/v1/leases through nova-api's pipeline.

    python bench/lease_api.py --workload FILE [--requests N] [--warmup W]
                              [--db-url URL]

FILE comes from ``shared/bench/blazar_alloc.py ... --dump-workload FILE
--dump-only``. Its hosts and leases (one ``physical:host`` reservation
each, with its host request and one whole-host allocation per leased host)
go into a fresh leases DB (a temporary SQLite file unless --db-url; a
PostgreSQL URL gets a schema of its own, dropped at the end).

The application is ``[pipeline:reservation_api]`` of etc/nova/api-paste.ini,
loaded by paste.deploy as nova-api loads it, with the real
keystonemiddleware ``auth_token`` whose token validation is answered in
process by keystonemiddleware's own ``AuthTokenFixture`` (no Keystone).
python-blazarclient sends every request, as ``blazar lease-create
--physical-reservation min=2,max=2,resource_properties=...`` would, over
requests and wsgi-intercept. Each request books 2 hosts for a 1-day lease
with one of the workload's resource-properties filters, in a window of
its own where the workload leaves at least 2 matching hosts free (the
workload's 3-day query windows have almost none left at A=50,000).

One JSON line per filter: ``p50_ms``, ``p90_ms`` and ``mean_ms`` are the
time inside the WSGI pipeline (the server's latency), ``client_p50_ms``
the time blazarclient saw; ``statuses`` counts the HTTP codes (all should
be 201) and ``valid`` says every lease got its 2 hosts.
"""

import argparse
import collections
import datetime
import gc
import json
import os
import platform
import statistics
import sys
import tempfile
import time
import uuid

from blazarclient import client as blazar_client
from blazarclient import exception as blazar_exc
from keystoneauth1 import session as ks_session
from keystoneauth1 import token_endpoint
from keystonemiddleware import auth_token  # noqa: F401 - its options
from keystonemiddleware import fixture as ksm_fixture
import paste.deploy
import sqlalchemy as sa
from wsgi_intercept import interceptor

# Run as a script, Python puts bench/ on the path: the checkout too,
# for the packages ``bench`` and ``harness``.
sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(
    __file__))))

from bench import common  # noqa: E402
from db import api as db_api  # noqa: E402
from db import models  # noqa: E402
from reservation_ext import conf as conf_mod  # noqa: E402

PASTE_CONFIG = 'config:' + common.TOP + '/etc/nova/api-paste.ini'
PIPELINE = 'reservation_api'
ENDPOINT = 'http://nova-api.bench:8774/reservation'
PROJECT = 'bench-project'
KEYSTONE = 'http://keystone.bench/identity'
LEASE_DAYS = 1
DATE_FORMAT = '%Y-%m-%d %H:%M'
WANT = 2
AUTH = 'keystonemiddleware.auth_token + AuthTokenFixture (in-process tokens)'
TRANSPORT = 'python-blazarclient over requests + wsgi-intercept'


def parse_args(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split('\n')[0])
    parser.add_argument('--workload', required=True,
                        help='workload JSON from blazar_alloc.py')
    parser.add_argument('--requests', type=int, default=50,
                        help='timed lease creations per filter')
    parser.add_argument('--warmup', type=int, default=3,
                        help='untimed lease creations before them')
    parser.add_argument('--db-url', help='the database to load into '
                        '(default: a temporary SQLite file)')
    return parser.parse_args(argv)


def load(engine, workload):
    """The workload's hosts and leases, with their host requests."""
    common.load_workload(engine, workload)
    with engine.begin() as conn:
        conn.execute(sa.insert(models.HostReservation.__table__), [
            {'id': lease['host_reservation_id'],
             'reservation_id': lease['reservation_id'],
             'min': len(lease['hosts']), 'max': len(lease['hosts']),
             'hypervisor_properties': '', 'resource_properties': '',
             'before_end': 'default', 'on_end': 'release'}
            for lease in workload['leases']])
    common.analyze(engine)


class Timed:
    """WSGI middleware: the time and status of every response.

    It wraps the whole pipeline, and the time includes reading the body,
    so that it is what the WSGI server would wait for.
    """

    def __init__(self, app):
        self.app = app
        self.times_ms = []
        self.statuses = collections.Counter()

    def __call__(self, environ, start_response):
        began = time.perf_counter_ns()
        status = []

        def recording_start_response(code, headers, exc_info=None):
            status.append(int(code.split()[0]))
            return start_response(code, headers, exc_info)
        body = b''.join(self.app(environ, recording_start_response))
        self.times_ms.append((time.perf_counter_ns() - began) / 1e6)
        self.statuses[status[0]] += 1
        return [body]


def configure(url):
    """Parse nova-api's configuration (none here) and point at ``url``."""
    conf_mod.CONF([], project='nova', default_config_files=[])
    conf_mod.CONF.set_override('connection', url, group=conf_mod.DB_GROUP)
    # What a 401 names; auth_token asks Keystone for it when it is unset.
    conf_mod.CONF.set_override('www_authenticate_uri', KEYSTONE,
                               group='keystone_authtoken')
    db_api.configure(conf_mod.CONF)


def plan_windows(workload, needed):
    """Disjoint lease windows where the workload leaves room.

    Every request gets a 1-day window of its own, at noon of a day of the
    workload's horizon, in which the in-memory model of the workload has
    at least WANT free hosts matching the request's filter: each request
    then books into the workload's schedule as it was loaded, untouched
    by the bench's other requests, and must succeed.

    :param needed: ``{filter name: how many windows}``
    :returns: ``{filter name: [(start, end), ...]}`` in blazarclient's
        date format
    """
    model = common.Model(workload, {h['id']: h['id']
                                    for h in workload['hosts']})
    noon = common.parse_date(workload['horizon_start']) + datetime.timedelta(
        hours=12)
    length = datetime.timedelta(days=LEASE_DAYS)
    days = list(range(0, workload['params']['horizon_days'] - LEASE_DAYS,
                      LEASE_DAYS))
    plan = {}
    # The filter that matches fewest hosts picks its days first.
    for name in sorted(needed, key=lambda name: sum(
            map(common.MODEL_FILTERS[name], workload['hosts']))):
        plan[name] = []
        for day in list(days):
            if len(plan[name]) == needed[name]:
                break
            start = noon + datetime.timedelta(days=day)
            if len(model.free_hosts(name, start, start + length)) >= WANT:
                days.remove(day)
                plan[name].append((start.strftime(DATE_FORMAT),
                                   (start + length).strftime(DATE_FORMAT)))
        if len(plan[name]) < needed[name]:
            sys.exit('Only %d days have room for %d %s hosts; ask for '
                     'fewer requests.' % (len(plan[name]), WANT, name))
    return plan


def reservation(query):
    """The host reservation as blazarclient's lease-create sends it."""
    return {'min': str(WANT), 'max': str(WANT), 'hypervisor_properties': '',
            'resource_properties': query, 'resource_type': 'physical:host'}


def create_leases(leases, spans, name, query):
    """Create a lease per window of ``spans``; the client's times (ms)."""
    times = []
    for n, (start, end) in enumerate(spans):
        gc.collect()
        began = time.perf_counter_ns()
        try:
            leases.create('%s-%d' % (name, n), start, end,
                          [reservation(query)], [])
        except blazar_exc.BlazarClientException:
            pass  # The Timed middleware counted its status.
        times.append((time.perf_counter_ns() - began) / 1e6)
    return times


def booked_leases(prefix):
    """How many leases named ``prefix-*`` hold exactly WANT hosts."""
    alloc = models.HostAllocation.__table__
    res = models.Reservation.__table__
    lease = models.Lease.__table__
    per_lease = (sa.select(sa.func.count(alloc.c.id).label('hosts'))
                 .join(res, res.c.id == alloc.c.reservation_id)
                 .join(lease, lease.c.id == res.c.lease_id)
                 .where(lease.c.name.like(prefix + '-%'))
                 .group_by(lease.c.id).subquery())
    with db_api.get_engine().connect() as conn:
        return conn.scalar(sa.select(sa.func.count()).select_from(
            per_lease).where(per_lease.c.hosts == WANT))


def run_filter(app, leases, spans, args, filter_name, query):
    """Time the creations with one filter; return the result line."""
    name = 'bench-%s' % filter_name
    create_leases(leases, spans[:args.warmup], 'warmup-' + filter_name,
                  query)
    app.times_ms.clear()
    app.statuses.clear()
    client_ms = create_leases(leases, spans[args.warmup:], name, query)
    stats = common.summary_ms(app.times_ms)
    return {'filter': filter_name, 'resource_properties': query,
            'requests': len(app.times_ms), 'p50_ms': stats['median_ms'],
            'p90_ms': stats['p90_ms'],
            'mean_ms': round(statistics.mean(app.times_ms), 3),
            'min_ms': stats['min_ms'], 'max_ms': stats['max_ms'],
            'client_p50_ms': round(statistics.median(client_ms), 3),
            'statuses': {str(code): count
                         for code, count in sorted(app.statuses.items())},
            'valid': (set(app.statuses) == {201} and
                      booked_leases(name) == args.requests)}


def run(args, workload, url):
    """Load, build the pipeline, time every filter; the result lines."""
    configure(url)
    load(db_api.get_engine(), workload)
    app = Timed(paste.deploy.loadapp(PASTE_CONFIG, name=PIPELINE))
    plan = plan_windows(workload, {name: args.warmup + args.requests
                                   for name in workload['filters']})
    # The workload's objects are no part of a real nova-api: keep them out
    # of every garbage collection from here on.
    gc.freeze()
    with ksm_fixture.AuthTokenFixture() as auth:
        token = uuid.uuid4().hex
        auth.add_token_data(token_id=token, project_id=PROJECT,
                            user_id='bench-user',
                            # A member's token: Keystone adds the implied
                            # reader role.
                            role_list=['member', 'reader'])
        with interceptor.RequestsInterceptor(lambda: app, url=ENDPOINT):
            leases = blazar_client.Client(session=ks_session.Session(
                auth=token_endpoint.Token(ENDPOINT + '/v1', token))).lease
            lines = [run_filter(app, leases, plan[name], args, name, query)
                     for name, query in workload['filters'].items()]
    db_api.get_engine().dispose()
    return lines


def main(argv=None):
    args = parse_args(argv)
    with open(args.workload) as f:
        workload = json.load(f)
    with tempfile.TemporaryDirectory() as tmp:
        with common.scratch_database(args.db_url, tmp) as url:
            lines = run(args, workload, url)
    for line in lines:
        out = {'bench': 'POST /reservation/v1/leases (physical:host)',
               'db': sa.engine.make_url(url).get_backend_name(),
               'python': platform.python_version(),
               'hosts': len(workload['hosts']),
               'leases': len(workload['leases']), 'want': WANT,
               'lease_days': LEASE_DAYS, 'auth': AUTH,
               'transport': TRANSPORT}
        out.update(line)
        print(json.dumps(out), flush=True)
    return 0


if __name__ == '__main__':
    sys.exit(main())
