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

"""The peer of bench/floating_ips.py: Blazar 18 creating the same leases.

    .peer-venv/bin/python bench/peer_floating_ips.py --shared DIR
        [--addresses 1000] [--leases 10000] [--requests 30]

Run by ``bench/floating_ips.py --peer`` under the peer virtualenv (Blazar
installed, not this project). Blazar's own ``db_api.setup_db()`` makes
its schema in a fresh SQLite file, with an index on every foreign-key
column as MySQL/InnoDB has (``blazar_alloc.py``'s ``add_fk_indexes``)
and in WAL mode as ours (see ``wal``), and gets the rows of
``floating_ips_workload.generate``: the addresses, and per lease its
lease, reservation, floatingip_reservations and floatingip_allocations
rows and its three events.

Each timed create runs the DB part of ``ManagerService.create_lease`` for
one ``virtual:floatingip`` reservation of one address, with Blazar's
code in the manager's order: ``_parse_lease_dates``,
``_allocation_candidates`` (the plugin's ``allocation_candidates`` and
``get`` of each candidate), ``db_api.lease_create``,
``_create_reservation`` (``reservation_create``, the plugin's
``reserve_resource``, ``reservation_update``), ``event_create`` of its
three events, ``lease_update`` to PENDING and ``lease_get``. Left out:
the API process and its RPC call, the Keystone trust, the enforcement
filters (none by default) and the notification. The plugin is built as
Blazar's manager builds it: its reserve path touches the DB only (Neutron
is called at the lease's start).

One JSON line: ``median_ms`` and the other deciles of the creates,
``reserve_median_ms`` (``reserve_resource`` alone), ``sql_per_create``
(median statements) and ``created`` (one boolean per request: false where
Blazar answered ``NotEnoughFloatingIPAvailable``).
"""

import argparse
import json
import os
import statistics
import sys
import tempfile
import time
import warnings

import by_path
import floating_ips_workload as workload

TRUST = '00000000-0000-4000-8000-000000000000'


def parse_args():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument('--shared', required=True,
                        help='the shared folder holding bench/blazar_alloc.py')
    parser.add_argument('--addresses', type=int, default=1000)
    parser.add_argument('--leases', type=int, default=10000)
    parser.add_argument('--requests', type=int, default=30)
    return parser.parse_args()


def populate(engine, models, data):
    """Write the workload's rows into Blazar's tables."""
    now = workload.NOW
    fips = [{'id': fip['id'], 'floating_network_id': workload.NETWORK,
             'subnet_id': workload.SUBNET, 'reservable': True,
             'floating_ip_address': fip['address'], 'created_at': now}
            for fip in data['addresses']]
    rows = {'leases': [], 'res': [], 'fipres': [], 'alloc': [], 'events': []}
    for lease in data['leases']:
        rows['leases'].append({
            'id': lease['id'], 'name': lease['name'],
            'user_id': workload.USER, 'project_id': 'p',
            'start_date': lease['start'], 'end_date': lease['end'],
            'trust_id': TRUST, 'status': 'PENDING', 'degraded': False,
            'created_at': now})
        rows['res'].append({
            'id': lease['reservation_id'], 'lease_id': lease['id'],
            'resource_id': lease['request_id'],
            'resource_type': 'virtual:floatingip', 'status': 'pending',
            'missing_resources': False, 'resources_changed': False,
            'created_at': now})
        rows['fipres'].append({
            'id': lease['request_id'],
            'reservation_id': lease['reservation_id'],
            'network_id': workload.NETWORK, 'amount': 1, 'created_at': now})
        rows['alloc'].append({
            'id': lease['allocation_id'],
            'floatingip_id': data['addresses'][lease['address']]['id'],
            'reservation_id': lease['reservation_id'], 'created_at': now})
        rows['events'].extend(_events(lease, now))
    with engine.begin() as conn:
        conn.execute(models.FloatingIP.__table__.insert(), fips)
        for key, model in (('leases', models.Lease),
                           ('res', models.Reservation),
                           ('fipres', models.FloatingIPReservation),
                           ('alloc', models.FloatingIPAllocation),
                           ('events', models.Event)):
            conn.execute(model.__table__.insert(), rows[key])
    with engine.connect() as conn:
        conn.exec_driver_sql('ANALYZE')


def _events(lease, now):
    # Their ids are the model's default (random): no query reads them.
    return [{'lease_id': lease['id'], 'event_type': kind, 'time': moment,
             'status': 'UNDONE', 'created_at': now}
            for kind, moment in (
                ('start_lease', lease['start']),
                ('before_end_lease', lease['end'] - workload.HOUR),
                ('end_lease', lease['end']))]


def create_lease(blazar, manager, index, start):
    """ManagerService.create_lease's DB steps, for one floating IP."""
    db_api, status = blazar['db_api'], blazar['status']
    lease_values = {'name': 'bench%d' % index, 'user_id': workload.USER,
                    'project_id': workload.PROJECT,
                    'status': status.lease.CREATING}
    start_date, end_date, _now = manager._parse_lease_dates(
        start.strftime('%Y-%m-%d %H:%M'),
        (start + workload.HOUR).strftime('%Y-%m-%d %H:%M'))
    lease_values.update(start_date=start_date, end_date=end_date)
    reservations = [{'resource_type': 'virtual:floatingip',
                     'network_id': workload.NETWORK, 'amount': 1}]
    manager._allocation_candidates(lease_values, reservations)
    events = [{'event_type': kind, 'time': moment,
               'status': status.event.UNDONE}
              for kind, moment in (('start_lease', start_date),
                                   ('end_lease', end_date))]
    before_end = {'event_type': 'before_end_lease',
                  'status': status.event.UNDONE}
    events.append(before_end)
    manager._update_before_end_event_date(
        before_end, end_date - workload.HOUR, lease_values)
    lease_values['trust_id'] = TRUST
    lease = db_api.lease_create(lease_values)
    try:
        for reservation in reservations:
            reservation.update(lease_id=lease['id'],
                               start_date=lease['start_date'],
                               end_date=lease['end_date'])
            manager._create_reservation(reservation)
    except Exception:
        db_api.lease_destroy(lease['id'])
        raise
    for event in events:
        event['lease_id'] = lease['id']
        db_api.event_create(event)
    db_api.lease_update(lease['id'], {'status': status.lease.PENDING})
    return db_api.lease_get(lease['id'])


def blazar_modules(url):
    """Blazar's modules (only in the peer venv), its DB set up at ``url``."""
    import blazar.config  # noqa: F401 (registers Blazar's options)
    from blazar.db import api as db_api
    from blazar.db.sqlalchemy import facade_wrapper
    from blazar.db.sqlalchemy import models
    from blazar.manager import exceptions as manager_ex
    from blazar.manager import service
    from blazar.plugins.floatingips import floatingip_plugin
    from blazar import status
    from oslo_config import cfg

    cfg.CONF.set_override('connection', url, group='database')
    db_api.setup_db()
    return {'db_api': db_api, 'facade': facade_wrapper._get_facade(),
            'models': models, 'manager_ex': manager_ex,
            'service': service, 'plugin': floatingip_plugin,
            'status': status}


def wal(engine):
    """Open every connection in WAL mode with NORMAL sync, as ours does.

    Needed besides: ``fip_get_all_by_queries`` runs its query after its
    session's block, so a read transaction stays open until the garbage
    collector frees it; in SQLite's default journal mode the lease's write
    that follows waits on it ("database is locked"). In WAL mode a reader
    does not block the writer, as on MySQL.
    """
    from sqlalchemy import event

    def pragmas(dbapi_con, _record):
        dbapi_con.execute('PRAGMA journal_mode=WAL')
        dbapi_con.execute('PRAGMA synchronous=NORMAL')
    event.listen(engine, 'connect', pragmas)


def timed_manager(blazar):
    """A manager with the floating IP plugin whose reserve_resource is timed.

    ``ManagerService.__init__`` starts RPC and loads every plugin; the
    create path uses only its ``plugins``.
    """
    spent = []

    class TimedPlugin(blazar['plugin'].FloatingIpPlugin):
        def reserve_resource(self, reservation_id, values):
            began = time.perf_counter()
            try:
                return super().reserve_resource(reservation_id, values)
            finally:
                spent.append((time.perf_counter() - began) * 1e3)

    manager = object.__new__(blazar['service'].ManagerService)
    manager.plugins = {'virtual:floatingip': TimedPlugin()}
    return manager, spent


def run(blazar, data):
    """Time the creates; return (times, reserve times, statements, created)."""
    from sqlalchemy import event
    statements = [0]
    facade = blazar['facade']
    for engine in {facade.writer.get_engine(), facade.reader.get_engine()}:
        event.listen(engine, 'before_cursor_execute',
                     lambda *a: statements.__setitem__(0, statements[0] + 1))
    manager, spent = timed_manager(blazar)
    times, counts, created = [], [], []
    for index, start in enumerate(data['requests']):
        statements[0] = 0
        began = time.perf_counter()
        try:
            create_lease(blazar, manager, index, start)
            created.append(True)
        except blazar['manager_ex'].NotEnoughFloatingIPAvailable:
            created.append(False)
        times.append((time.perf_counter() - began) * 1e3)
        counts.append(statements[0])
    return times, spent, counts, created


def main():
    args = parse_args()
    warnings.filterwarnings('ignore')
    data = workload.generate(args.addresses, args.leases, args.requests)
    alloc = by_path.blazar_alloc(args.shared)
    with tempfile.TemporaryDirectory() as tmp:
        blazar = blazar_modules(
            'sqlite:///' + os.path.join(tmp, 'blazar.sqlite'))
        engine = blazar['facade'].writer.get_engine()
        wal(engine)
        alloc.add_fk_indexes(engine, blazar['models'].Lease.metadata)
        populate(engine, blazar['models'], data)
        times, spent, counts, created = run(blazar, data)
        engine.dispose()
    deciles = statistics.quantiles(times, n=10) if len(times) > 1 else (
        times * 9)
    print(json.dumps({
        'bench': 'blazar ManagerService.create_lease (DB part)',
        'requests': len(times),
        'median_ms': round(statistics.median(times), 3),
        'p10_ms': round(deciles[0], 3), 'p90_ms': round(deciles[-1], 3),
        'reserve_median_ms': round(statistics.median(spent), 3)
        if spent else None,
        'sql_per_create': statistics.median(counts), 'created': created}),
        flush=True)
    return 0


if __name__ == '__main__':
    sys.exit(main())
