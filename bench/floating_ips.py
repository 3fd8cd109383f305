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

"""Floating IP lease creation at 1,000 addresses and 10,000 leases.

    python bench/floating_ips.py [--addresses 1000] [--leases 10000]
                                 [--requests 300] [--db-url URL]
                                 [--peer] [--peer-requests 30]
                                 [--shared DIR]

A fresh leases DB (a temporary SQLite file unless --db-url; a
PostgreSQL URL gets a schema of its own, dropped at the end) gets the
rows of ``floating_ips_workload.generate`` (seeded: the same on every
run and on both sides): ``--addresses`` reservable addresses of one
network and ``--leases`` leases of one ``virtual:floatingip``
reservation each, with its booking (address ``a``'s ``k``-th lease holds
it for a day from day ``2k + 1`` plus ``a mod 24`` hours), so that every
window of the schedule has some addresses busy and some free. Then
``--requests`` leases of one address for an hour at random times inside
the schedule are created with ``POST /v1/leases`` through the lease
API's WSGI application (in process, the headers keystonemiddleware
sets). One JSON line: ``median_ms`` (the p50), ``p10_ms``, ``p90_ms``,
``min_ms``, ``max_ms`` of the creates, ``sql_per_create`` (median
statements) and ``statuses`` (201, or 409 where every address is busy
then).

--peer also runs ``bench/peer_floating_ips.py`` under the peer
virtualenv (created when missing): Blazar 18's lease create (the DB part
of its manager's, see there) on the same rows, for the first
``--peer-requests`` requests, on SQLite. It adds ``peer_median_ms``,
``peer_p10_ms``, ``peer_p90_ms``, ``peer_reserve_median_ms`` (Blazar's
``FloatingIpPlugin.reserve_resource`` alone), ``peer_sql_per_create``,
``peer_created``, ``median_ms_first`` (ours over those same requests),
``peer_valid`` (Blazar created exactly the leases we did) and
``speedup`` (the peer's median over ``median_ms_first``).
"""

import argparse
import collections
import json
import os
import statistics
import sys
import tempfile
import time

import sqlalchemy as sa
import webob

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(
    __file__))))

from bench import common  # noqa: E402
from bench import floating_ips_workload as workload  # noqa: E402
from db import api as db_api  # noqa: E402
from db import migration  # noqa: E402
from db import tables  # noqa: E402
from reservation_ext.api import wsgi  # noqa: E402
from reservation_ext import clock as clock_mod  # noqa: E402
from reservation_ext import conf as conf_mod  # noqa: E402
from reservation_ext.leases import notifications  # noqa: E402
from reservation_ext import plugins as plugins_mod  # noqa: E402

NOW = workload.NOW


def _load(engine, data):
    """Write the workload's addresses, and its leases with their bookings."""
    fips = [{'id': fip['id'], 'floating_network_id': workload.NETWORK,
             'subnet_id': workload.SUBNET, 'reservable': True,
             'generation': 0, 'created_at': NOW,
             'floating_ip_address': fip['address']}
            for fip in data['addresses']]
    rows = collections.defaultdict(list)
    for lease in data['leases']:
        reservation_id = lease['reservation_id']
        rows['leases'].append({
            'id': lease['id'], 'name': lease['name'], 'project_id': 'p',
            'start_date': lease['start'], 'end_date': lease['end'],
            'status': 'PENDING', 'degraded': False, 'created_at': NOW})
        rows['reservations'].append({
            'id': reservation_id, 'lease_id': lease['id'],
            'resource_type': 'virtual:floatingip',
            'resource_id': reservation_id, 'status': 'pending',
            'missing_resources': False, 'resources_changed': False,
            'created_at': NOW})
        rows['requests'].append({
            'id': reservation_id, 'reservation_id': reservation_id,
            'network_id': workload.NETWORK, 'amount': 1})
        rows['allocations'].append({
            'id': lease['allocation_id'],
            'floatingip_id': fips[lease['address']]['id'],
            'reservation_id': reservation_id, 'start_date': lease['start'],
            'end_date': lease['end']})
    with engine.begin() as conn:
        conn.execute(sa.insert(tables.FLOATINGIPS), fips)
        for table, name in ((tables.LEASES, 'leases'),
                            (tables.RESERVATIONS, 'reservations'),
                            (tables.FLOATINGIP_RESERVATIONS, 'requests'),
                            (tables.FLOATINGIP_ALLOCATIONS,
                             'allocations')):
            conn.execute(sa.insert(table), rows[name])
    common.analyze(engine)


def _create(app, index, start):
    req = webob.Request.blank('/v1/leases', method='POST', headers={
        'X-User-Id': workload.USER, 'X-Project-Id': workload.PROJECT,
        'X-Roles': 'member,reader', 'X-Auth-Token': 'token'})
    req.body = json.dumps({
        'name': 'bench%d' % index,
        'start_date': start.strftime('%Y-%m-%d %H:%M'),
        'end_date': (start + workload.HOUR).strftime('%Y-%m-%d %H:%M'),
        'reservations': [{'resource_type': 'virtual:floatingip',
                          'network_id': workload.NETWORK,
                          'amount': 1}]}).encode()
    req.content_type = 'application/json'
    begin = time.perf_counter()
    response = req.get_response(app)
    return (time.perf_counter() - begin) * 1000, response.status_int


def parse_args(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument('--addresses', type=int, default=1000)
    parser.add_argument('--leases', type=int, default=10000)
    parser.add_argument('--requests', type=int, default=300)
    parser.add_argument('--db-url')
    parser.add_argument('--peer', action='store_true',
                        help='also time Blazar on the same workload')
    parser.add_argument('--peer-requests', type=int, default=30,
                        help='how many of the requests the peer times '
                             '(the first ones; each takes seconds)')
    parser.add_argument('--shared', default=common.DEFAULT_SHARED,
                        help='the shared folder holding bench/blazar_alloc.py')
    return parser.parse_args(argv)


def run_ours(args, data):
    """Time the creates; return [(ms, status, statements)] and the DB."""
    with tempfile.TemporaryDirectory() as tmp, common.scratch_database(
            args.db_url, tmp) as url:
        conf = conf_mod.CONF
        conf([], project='reservation-ext', default_config_files=[])
        conf.set_override('connection', url,
                          group='reservation_database')
        db_api.configure(conf)
        engine = db_api.get_engine()
        migration.upgrade(engine)
        _load(engine, data)
        clock = clock_mod.ManualClock(NOW)
        app = wsgi.build_app(conf, clock,
                             plugins_mod.load_plugins(conf, clock),
                             notifications.get_notifier(conf), None)
        statements = [0]
        sa.event.listen(engine, 'before_cursor_execute', lambda *a: (
            statements.__setitem__(0, statements[0] + 1)))
        results = []
        for index, start in enumerate(data['requests']):
            statements[0] = 0
            results.append(_create(app, index, start) + (statements[0],))
        return results, engine.dialect.name


def peer_fields(args, results):
    """Run peer_floating_ips.py in the peer venv; the fields it adds."""
    count = min(args.peer_requests, args.requests)
    theirs = common.run_peer(
        os.path.join(common.TOP, 'bench', 'peer_floating_ips.py'),
        ['--shared', args.shared, '--addresses', str(args.addresses),
         '--leases', str(args.leases), '--requests', str(count)])[0]
    # Valid: Blazar created exactly the leases we created (201), and
    # refused the others.
    theirs['valid'] = theirs['created'] == [
        status == 201 for _ms, status, _sql in results[:count]]
    # The speedup compares the same requests on both sides.
    first = {'median_ms': round(statistics.median(
        ms for ms, _status, _sql in results[:count]), 3)}
    fields = common.peer_fields(first, theirs)
    fields.update(
        peer_requests=count, peer_p10_ms=theirs['p10_ms'],
        peer_p90_ms=theirs['p90_ms'],
        peer_reserve_median_ms=theirs['reserve_median_ms'],
        peer_sql_per_create=theirs['sql_per_create'],
        peer_created=sum(theirs['created']),
        median_ms_first=first['median_ms'])
    return fields


def main(argv=None):
    args = parse_args(argv)
    data = workload.generate(args.addresses, args.leases, args.requests)
    results, backend = run_ours(args, data)
    line = dict(
        common.summary_ms([ms for ms, _status, _sql in results]),
        bench='POST /v1/leases virtual:floatingip', backend=backend,
        addresses=args.addresses, leases=args.leases,
        requests=args.requests,
        sql_per_create=statistics.median(sql for _ms, _st, sql in results),
        statuses=dict(collections.Counter(
            str(status) for _ms, status, _sql in results)))
    if args.peer:
        line.update(peer_fields(args, results))
    print(json.dumps(line), flush=True)
    return 0


if __name__ == '__main__':
    sys.exit(main())
