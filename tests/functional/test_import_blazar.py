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

"""The import of a Blazar 18 database that Blazar's own code wrote.

On SQLite, PostgreSQL and MariaDB (the leases DB; Blazar's is a SQLite
file), and the command as an operator runs it. What the imported leases
then do in Nova is in ``test_nova_import_blazar.py``.
"""

import datetime
import os

import fixtures
from oslo_db import exception as db_exc
import sqlalchemy as sa

from db import models
from db import tables
from reservation_ext.blazar_import import blazar_schema
from reservation_ext.blazar_import import importer
from reservation_ext import clock as clock_mod
from reservation_ext import conf as conf_mod
from tests import base
from tests.functional import blazar_peer
from tests.functional import test_migrations

NOW = datetime.datetime(2030, 1, 1)
HOUR = datetime.timedelta(hours=1)
DAY = datetime.timedelta(days=1)
PROJECT = 'a0b1c2d3e4f5a6b7c8d9e0f1a2b3c4d5'


def dump(engine):
    """Every row of the leases DB, table by table, in a fixed order."""
    with engine.connect() as conn:
        return {table.name: sorted(
            (tuple(str(value) for value in row)
             for row in conn.execute(sa.select(table))), key=str)
            for table in models.Base.metadata.sorted_tables}


class _Import:
    """The tests, on the database of the class they are mixed into."""

    def setUp(self):
        super().setUp()
        self.blazar = self.useFixture(blazar_peer.BlazarDatabase(self, NOW))
        self.clock = clock_mod.ManualClock(NOW)

    def run_import(self, url=None):
        return importer.import_blazar(self.ctx, self.clock, conf_mod.CONF,
                                      url or self.blazar.url)

    def rows(self, table, **where):
        with self.engine.connect() as conn:
            return [row._asdict() for row in conn.execute(
                sa.select(table).filter_by(**where))]

    def test_hosts_come_over_with_their_extra_capabilities(self):
        report = self.run_import()
        self.assertEqual((3, 6), (report.hosts, report.capabilities))
        hosts = {row['id']: row['hypervisor_hostname']
                 for row in self.rows(tables.HOSTS)}
        self.assertEqual(['compute-1', 'compute-2', 'compute-3'],
                         sorted(hosts.values()))
        caps = {(hosts[row['host_id']], row['name']): row['value']
                for row in self.rows(tables.CAPABILITIES)}
        self.assertEqual('true', caps[('compute-2', 'gpu')])
        self.assertEqual('r1', caps[('compute-1', 'rack')])
        # Blazar's private property stays private.
        self.assertEqual([{'name': 'rack', 'private': True}],
                         self.rows(tables.HOST_PROPERTIES))

    def test_a_lease_keeps_its_ids_dates_owner_and_statuses(self):
        self.run_import()
        ids = self.blazar.lease('pending-hosts')
        lease, = self.rows(tables.LEASES, id=ids['lease'])
        self.assertEqual(
            ('pending-hosts', PROJECT, 'f0e1d2c3b4a5f6e7d8c9b0a1f2e3d4c5',
             '1234567890abcdef1234567890abcdef', 'PENDING', NOW + HOUR,
             NOW + DAY, NOW + DAY - 2 * HOUR),
            (lease['name'], lease['project_id'], lease['user_id'],
             lease['trust_id'], lease['status'], lease['start_date'],
             lease['end_date'], lease['before_end_date']))
        reservation, = self.rows(tables.RESERVATIONS, lease_id=ids['lease'])
        self.assertEqual((ids['reservation'], 'physical:host', 'pending'),
                         (reservation['id'], reservation['resource_type'],
                          reservation['status']))
        request, = self.rows(tables.HOST_RESERVATIONS,
                             reservation_id=ids['reservation'])
        self.assertEqual(
            (2, 2, '["=", "$gpu", "true"]', 'default', 17, 'release'),
            (request['min'], request['max'], request['resource_properties'],
             request['before_end'], request['aggregate_id'],
             request['on_end']))
        events = {row['event_type']: (row['time'], row['status'])
                  for row in self.rows(tables.LEASE_EVENTS,
                                       lease_id=ids['lease'])}
        self.assertEqual({'start_lease': (NOW + HOUR, 'UNDONE'),
                          'before_end_lease': (NOW + DAY - 2 * HOUR,
                                               'UNDONE'),
                          'end_lease': (NOW + DAY, 'UNDONE')}, events)
        booked = self.rows(tables.ALLOCATIONS,
                           reservation_id=ids['reservation'])
        self.assertEqual({(NOW + HOUR, NOW + DAY, True)},
                         {(row['start_date'], row['end_date'],
                           row['whole_host']) for row in booked})
        self.assertEqual(2, len({row['host_id'] for row in booked}))

    def test_started_and_ended_leases_keep_where_they_are(self):
        self.run_import()
        for name, status, reservation_status, phase in (
                ('active-hosts', 'ACTIVE', 'active', None),
                ('ended-hosts', 'TERMINATED', 'deleted', 'done')):
            ids = self.blazar.lease(name)
            lease, = self.rows(tables.LEASES, id=ids['lease'])
            reservation, = self.rows(tables.RESERVATIONS,
                                     id=ids['reservation'])
            request, = self.rows(tables.HOST_RESERVATIONS,
                                 reservation_id=ids['reservation'])
            self.assertEqual((status, reservation_status, phase),
                             (lease['status'], reservation['status'],
                              request['end_phase']))
        ids = self.blazar.lease('active-hosts')
        request, = self.rows(tables.HOST_RESERVATIONS,
                             reservation_id=ids['reservation'])
        self.assertEqual('snapshot', request['before_end'])

    def test_an_instance_reservation_keeps_its_flavor_and_seats(self):
        self.run_import()
        ids = self.blazar.lease('instances')
        request, = self.rows(tables.INSTANCE_RESERVATIONS,
                             reservation_id=ids['reservation'])
        self.assertEqual(
            (2, 1, 512, 1, None, ids['reservation'], 23, None, 'delete'),
            tuple(request[key] for key in (
                'amount', 'vcpus', 'memory_mb', 'disk_gb', 'affinity',
                'flavor_id', 'aggregate_id', 'server_id', 'on_end')))
        seats = self.rows(tables.ALLOCATIONS,
                          reservation_id=ids['reservation'])
        self.assertEqual(
            [(False, 1, 512, 1, None)] * 2,
            [(row['whole_host'], row['vcpus'], row['memory_mb'],
              row['disk_gb'], row['server_id']) for row in seats])

    def test_what_cannot_come_over_is_reported_with_why(self):
        report = self.run_import()
        floating = self.blazar.lease('floating')
        starting = self.blazar.lease('starting')
        self.assertEqual(
            [('lease %s (floating)' % floating['lease'],
              'its reservation %s is virtual:floatingip, which this import '
              'does not bring over yet' % floating['reservation']),
             ('lease %s (starting)' % starting['lease'],
              "Blazar's manager left it STARTING: let the manager finish, "
              'then import again')],
            report.refused)
        self.assertEqual([], self.rows(tables.LEASES, id=floating['lease']))
        self.assertEqual(6, report.leases)

    def test_a_name_twice_in_a_project_is_renamed_and_reported(self):
        report = self.run_import()
        first, second = (self.blazar.lease('twin', index)['lease']
                         for index in (0, 1))
        self.assertEqual([(second, 'twin', 'twin-' + second[:8])],
                         report.renamed)
        self.assertEqual('twin', self.rows(tables.LEASES, id=first)[0]['name'])

    def test_a_second_import_changes_nothing_and_says_so(self):
        self.run_import()
        before = dump(self.engine)
        report = self.run_import()
        self.assertEqual(before, dump(self.engine))
        self.assertEqual((0, 3, 0, 6), (report.hosts, report.hosts_present,
                                        report.leases,
                                        report.leases_present))
        self.assertIn('Nothing new to import.', report.lines())

    def test_started_leases_move_the_pool_generation(self):
        # The hosts are here already: only the leases can move it.
        with self.engine.begin() as conn:
            conn.execute(sa.insert(tables.HOSTS), [
                {'hypervisor_hostname': 'compute-%d' % number, 'vcpus': 10,
                 'memory_mb': 8192, 'local_gb': 1028, 'created_at': NOW}
                for number in (1, 2, 3)])
            conn.execute(sa.insert(tables.POOL_STATE).values(
                id=1, generation=5))
        report = self.run_import()
        self.assertEqual((0, 3), (report.hosts, report.hosts_present))
        self.assertEqual([6], [row['generation']
                               for row in self.rows(tables.POOL_STATE)])

    def test_an_unknown_blazar_schema_is_refused_before_any_write(self):
        older = self.useFixture(
            blazar_peer.BlazarDatabase(self, NOW, stamp='02e2f2186d98'))
        error = self.assertRaises(blazar_schema.UnknownSchema,
                                  self.run_import, older.url)
        self.assertIn('at revision 02e2f2186d98, which this import does not '
                      'know (it reads Blazar 18.0.0, revision 553383923ca0)',
                      str(error))
        self.assertEqual([], self.rows(tables.HOSTS))

    def test_a_failed_import_leaves_nothing_behind(self):
        # An event id already taken here: the INSERT of the events fails,
        # after those of the hosts and leases.
        _revision, data = blazar_schema.read(self.blazar.url)
        lease_id = self.blazar.lease('ended-hosts')['lease']
        event_id = [event['id'] for event in data.events
                    if event['lease_id'] == lease_id][0]
        with self.engine.begin() as conn:
            conn.execute(sa.insert(tables.LEASES).values(
                id='other', name='other', project_id=PROJECT,
                start_date=NOW, end_date=NOW + DAY, status='PENDING',
                degraded=False, created_at=NOW))
            conn.execute(sa.insert(tables.LEASE_EVENTS).values(
                id=event_id, lease_id='other',
                event_type='start_lease', time=NOW, status='UNDONE',
                attempts=0, created_at=NOW))
        before = dump(self.engine)
        self.assertRaises(db_exc.DBError, self.run_import)
        self.assertEqual(before, dump(self.engine))


class ImportSQLite(_Import, base.DBTestCase):
    pass


class ImportPostgreSQL(_Import, base.PostgreSQLTestCase):
    pass


class ImportMySQL(_Import, base.MySQLTestCase):
    pass


class ImportCommand(test_migrations.DBManageMixin, base.TestCase):
    """reservation-db-manage import-blazar, as an operator runs it."""

    def setUp(self):
        super().setUp()
        self.blazar = self.useFixture(blazar_peer.BlazarDatabase(self, NOW))
        tmp = self.useFixture(fixtures.TempDir()).path
        self.write_config(tmp, os.path.join(tmp, 'reservation.sqlite'))
        self.assertEqual(0, self._run('upgrade').returncode)

    def test_the_command_prints_what_it_imported_then_nothing_new(self):
        result = self._run('import-blazar', '--blazar-connection',
                           self.blazar.url)
        self.assertEqual(0, result.returncode, result.stderr)
        lines = result.stdout.splitlines()
        self.assertEqual(
            ['Blazar database at revision 553383923ca0 (Blazar 18.0.0).',
             'Imported 3 host(s) with 6 extra capability(ies), 6 lease(s) '
             'with 6 reservation(s), 18 event(s) and 8 allocation(s).',
             'Already here: 0 host(s), 0 lease(s).',
             'Renamed (the project has a lease of that name):'], lines[:4])
        self.assertEqual('Not imported:', lines[5])
        self.assertEqual(8, len(lines))

        result = self._run('import-blazar', '--blazar-connection',
                           self.blazar.url)
        self.assertEqual(0, result.returncode, result.stderr)
        self.assertEqual(['Nothing new to import.',
                          'Already here: 3 host(s), 6 lease(s).'],
                         result.stdout.splitlines()[1:3])

    def test_a_leases_db_not_migrated_is_refused_before_reading(self):
        self.assertEqual(0, self._run('downgrade', 'base').returncode)
        result = self._run('import-blazar', '--blazar-connection',
                           self.blazar.url)
        self.assertEqual(1, result.returncode)
        self.assertIn('reservation-db-manage: error: the leases DB is not at '
                      'the latest revision: run "reservation-db-manage '
                      'upgrade" first', result.stderr)

    def test_a_database_that_is_not_blazars_is_refused_clearly(self):
        tmp = self.useFixture(fixtures.TempDir()).path
        result = self._run('import-blazar', '--blazar-connection',
                           'sqlite:///%s/empty.sqlite' % tmp)
        self.assertEqual(1, result.returncode)
        self.assertIn(
            'reservation-db-manage: error: the Blazar database sqlite:///%s'
            "/empty.sqlite: it has no alembic_version table: not a database "
            "that Blazar's blazar-db-manage made" % tmp, result.stderr)
        self.assertNotIn('Traceback', result.stderr)
