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

"""Engine throughput: how many due events per second the engines run.

    python bench/engine.py [--events N] [--engines 1 3]
                           [--db sqlite|postgresql|both] [--db-url URL]

For every database and engine count it creates N due events (N/2 leases
with a start and an end, one reservation each) in a fresh schema, runs
that many engine *processes* (the honest multi-engine figure: no shared
GIL, each with its own DB connections) with a no-op plugin until every
event is finished, and prints one JSON line: events, seconds,
events_per_s, executed_once (every action ran exactly once and every
event is DONE).
"""

import argparse
import collections
import datetime
import json
import multiprocessing
import os
import tempfile
import time

from oslo_config import cfg
import sqlalchemy as sa

from db import api as db_api
from db import models
from reservation_ext import clock
from reservation_ext import conf as conf_mod
from reservation_ext import context
from reservation_ext.engine import runner
from reservation_ext.leases import notifications
from reservation_ext.plugins import base
from reservation_ext import states

RESOURCE_TYPE = 'bench:noop'
PG_URL = ('postgresql+psycopg2://openstack_citest:openstack_citest@'
          'localhost/openstack_citest')


class NoopPlugin(base.ResourcePlugin):
    """Does nothing but count its actions."""

    def __init__(self, conf, clock):
        super().__init__(conf, clock)
        self.actions = collections.Counter()

    def validate(self, values):
        return values

    def reserve(self, session, ctx, lease, reservation_id, values):
        return None

    def get_details(self, session, reservation_ids):
        return {}

    def on_start(self, ctx, lease, reservation):
        self.actions['on_start', reservation['id']] += 1

    def on_end(self, ctx, lease, reservation):
        self.actions['on_end', reservation['id']] += 1


def _configure(url):
    conf = cfg.ConfigOpts()
    conf_mod.register_opts(conf)
    conf([], project='reservation-ext')
    conf.set_override('connection', url, group=conf_mod.DB_GROUP)
    db_api.configure(conf)
    return conf


def _create_events(engine, count):
    """Fresh schema with ``count`` due events; return the reservation ids."""
    models.Base.metadata.drop_all(engine)
    models.Base.metadata.create_all(engine)
    now = clock.SYSTEM.now()
    leases, reservations, events = [], [], []
    for i in range(count // 2):
        lease_id = 'lease-%d' % i
        leases.append(dict(
            id=lease_id, name=lease_id, project_id='bench',
            start_date=now, end_date=now, created_at=now,
            status=states.LeaseStatus.PENDING))
        reservations.append(dict(
            id='res-%d' % i, lease_id=lease_id, resource_type=RESOURCE_TYPE,
            status=states.ReservationStatus.PENDING, created_at=now))
        for event_type in (states.EventType.START_LEASE,
                           states.EventType.END_LEASE):
            events.append(dict(
                id='%s-%s' % (event_type, i), lease_id=lease_id,
                event_type=event_type, time=now - datetime.timedelta(
                    seconds=1), status=states.EventStatus.UNDONE,
                attempts=0, created_at=now))
    with engine.begin() as conn:
        conn.execute(sa.insert(models.Lease.__table__), leases)
        conn.execute(sa.insert(models.Reservation.__table__), reservations)
        conn.execute(sa.insert(models.Event.__table__), events)
        # A table in service has planner statistics (autovacuum); a table
        # filled a moment ago has none until it is analyzed.
        conn.exec_driver_sql('ANALYZE')
    return [r['id'] for r in reservations]


def _unfinished():
    with db_api.context_manager.reader.using(
            context.get_admin_context()) as session:
        return session.scalar(
            sa.select(sa.func.count()).select_from(models.Event).where(
                models.Event.status.not_in(states.EventStatus.FINISHED)))


def _engine_process(url, ready, go, results):
    """Run one engine until no event is left; report its actions."""
    conf = _configure(url)
    plugin = NoopPlugin(conf, clock.SYSTEM)
    engine = runner.Engine(conf, clock.SYSTEM, {RESOURCE_TYPE: plugin},
                           notifications.get_notifier(conf))
    ready.release()
    go.wait()
    # Events of a lease wait for the lease's earlier events, which another
    # engine may hold: only stop when no event is left at all.
    while engine.run_once() or _unfinished():
        pass
    results.put(dict(plugin.actions))


# Seconds to wait for an engine's results before the run fails.
RESULT_TIMEOUT = 600


def _run(url, count, engines):
    db_engine = db_api.new_context_manager(connection=url).writer.get_engine()
    reservation_ids = _create_events(db_engine, count)
    mp = multiprocessing.get_context('spawn')
    ready, go, results = mp.Semaphore(0), mp.Event(), mp.Queue()
    processes = [mp.Process(target=_engine_process,
                            args=(url, ready, go, results))
                 for _ in range(engines)]
    for process in processes:
        process.start()
    for _ in processes:
        ready.acquire()
    started = time.monotonic()
    go.set()
    actions = collections.Counter()
    for _ in processes:
        # A dead engine sends nothing: fail the run rather than wait.
        actions.update(results.get(timeout=RESULT_TIMEOUT))
    seconds = time.monotonic() - started
    for process in processes:
        process.join()
    expected = {(action, rid): 1 for rid in reservation_ids
                for action in ('on_start', 'on_end')}
    with db_engine.connect() as conn:
        done = conn.scalar(sa.select(sa.func.count()).select_from(
            models.Event).where(
                models.Event.status == states.EventStatus.DONE))
    models.Base.metadata.drop_all(db_engine)
    db_engine.dispose()
    return dict(events=count, seconds=round(seconds, 3),
                events_per_s=round(count / seconds),
                executed_once=(dict(actions) == expected and done == count))


def main():
    parser = argparse.ArgumentParser(description=__doc__.split('\n')[0])
    parser.add_argument('--events', type=int, default=20000)
    parser.add_argument('--engines', type=int, nargs='+', default=[1, 3])
    parser.add_argument('--db', choices=('sqlite', 'postgresql', 'both'),
                        default='both')
    parser.add_argument('--db-url',
                        help='the database to use instead of --db (its '
                             'tables are dropped); default: a temporary '
                             'SQLite file and the local openstack_citest '
                             'PostgreSQL')
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        if args.db_url:
            urls = [args.db_url]
        else:
            urls = [u for db, u in (
                ('sqlite', 'sqlite:///' + os.path.join(tmp, 'bench.sqlite')),
                ('postgresql', PG_URL)) if args.db in (db, 'both')]
        for url in urls:
            backend = sa.engine.make_url(url).get_backend_name()
            for engines in args.engines:
                line = dict(db=backend, engines=engines)
                line.update(_run(url, args.events, engines))
                print(json.dumps(line), flush=True)


if __name__ == '__main__':
    main()
