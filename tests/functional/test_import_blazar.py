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
import json
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

    def test_floating_ips_and_their_leases_come_over_with_their_ids(self):
        report = self.run_import()
        fips = self.blazar.made['floatingips']
        self.assertEqual((4, 0), (report.floatingips,
                                  report.floatingips_present))
        # The booked addresses' generations moved, as a booking's do.
        self.assertEqual(
            {(fips[address], 'ext-net', 'ext-subnet', address,
              address != '172.24.4.13', int(address != '172.24.4.13'))
             for address in fips},
            {tuple(row[key] for key in (
                'id', 'floating_network_id', 'subnet_id',
                'floating_ip_address', 'reservable', 'generation'))
             for row in self.rows(tables.FLOATINGIPS)})
        for name, status, amount, required, addresses, window in (
                ('pending-floating', 'pending', 2, '["172.24.4.10"]',
                 ['172.24.4.10', '172.24.4.11'], (12 * DAY, 13 * DAY)),
                ('active-floating', 'active', 1, None, ['172.24.4.12'],
                 (-HOUR, 20 * DAY))):
            ids = self.blazar.lease(name)
            reservation, = self.rows(tables.RESERVATIONS,
                                     lease_id=ids['lease'])
            self.assertEqual(
                (ids['reservation'], 'virtual:floatingip', status),
                (reservation['id'], reservation['resource_type'],
                 reservation['status']))
            request, = self.rows(tables.FLOATINGIP_RESERVATIONS,
                                 reservation_id=ids['reservation'])
            self.assertEqual(('ext-net', amount, required),
                             (request['network_id'], request['amount'],
                              request['required_floatingips']))
            booked = self.rows(tables.FLOATINGIP_ALLOCATIONS,
                               reservation_id=ids['reservation'])
            self.assertEqual(
                sorted((fips[address], NOW + window[0], NOW + window[1],
                        None) for address in addresses),
                sorted((row['floatingip_id'], row['start_date'],
                        row['end_date'], row['proposal_id'])
                       for row in booked))

    def test_a_floating_ip_here_already_stays_and_is_booked(self):
        ours = self.add_floatingip('ours', '172.24.4.11')
        report = self.run_import()
        self.assertEqual((3, 1), (report.floatingips,
                                  report.floatingips_present))
        row, = self.rows(tables.FLOATINGIPS, floating_ip_address='172.24.4.11')
        # Only its generation moved (a booking's), with updated_at.
        self.assertEqual(dict(ours, generation=1, updated_at=NOW), row)
        ids = self.blazar.lease('pending-floating')
        self.assertIn('ours', [row['floatingip_id'] for row in self.rows(
            tables.FLOATINGIP_ALLOCATIONS,
            reservation_id=ids['reservation'])])

    def test_a_lease_on_a_floating_ip_that_stays_behind_stays_too(self):
        # Blazar's id of 172.24.4.12 is another address's here.
        fip_id = self.blazar.made['floatingips']['172.24.4.12']
        self.add_floatingip(fip_id, '172.24.4.50')
        report = self.run_import()
        active = self.blazar.lease('active-floating')
        starting = self.blazar.lease('starting')['lease']
        self.assertEqual(
            [('floating IP %s (172.24.4.12)' % fip_id,
              "its id is another address's here"),
             ('lease %s (active-floating)' % active['lease'],
              'its reservation %s is booked on floating IP %s, which did '
              'not come over' % (active['reservation'], fip_id))],
            [refused for refused in report.refused
             if starting not in refused[0]])
        self.assertEqual([], self.rows(tables.RESERVATIONS,
                                       lease_id=active['lease']))
        self.assertEqual(8, report.leases)

    def add_floatingip(self, fip_id, address):
        row = {'id': fip_id, 'floating_network_id': 'ext-net',
               'subnet_id': 'our-subnet', 'floating_ip_address': address,
               'reservable': False, 'generation': 0, 'created_at': NOW,
               'updated_at': None}
        with self.engine.begin() as conn:
            conn.execute(sa.insert(tables.FLOATINGIPS).values(row))
        return row

    def test_a_flavor_instance_reservation_keeps_its_source_and_seats(self):
        self.run_import()
        ids = self.blazar.lease('flavor-instances')
        reservation, = self.rows(tables.RESERVATIONS, lease_id=ids['lease'])
        self.assertEqual('flavor:instance', reservation['resource_type'])
        request, = self.rows(tables.INSTANCE_RESERVATIONS,
                             reservation_id=ids['reservation'])
        # The disk is the root, the ephemeral disk and the swap, rounded
        # up, as a flavor:instance request made here counts it.
        self.assertEqual(
            (2, 2, 1024, 16, None, '', ids['reservation'], 29, 'delete'),
            tuple(request[key] for key in (
                'amount', 'vcpus', 'memory_mb', 'disk_gb', 'affinity',
                'resource_properties', 'flavor_id', 'aggregate_id',
                'on_end')))
        self.assertEqual(
            {'id': 'f1a2b3c4', 'public': True, 'disk': 10, 'ephemeral': 5,
             'swap': 512, 'extra_specs': {'hw:cpu_policy': 'shared'}},
            json.loads(request['source_flavor']))
        hosts = {row['id']: row['hypervisor_hostname']
                 for row in self.rows(tables.HOSTS)}
        seats = self.rows(tables.ALLOCATIONS,
                          reservation_id=ids['reservation'])
        self.assertEqual(
            [('compute-3', False, 2, 1024, 16, NOW + 14 * DAY,
              NOW + 15 * DAY)] * 2,
            [(hosts[row['host_id']], row['whole_host'], row['vcpus'],
              row['memory_mb'], row['disk_gb'], row['start_date'],
              row['end_date']) for row in seats])

    def test_what_cannot_come_over_is_reported_with_why(self):
        report = self.run_import()
        starting = self.blazar.lease('starting')
        # Floating IP and flavor:instance leases come over now.
        self.assertEqual(
            [('lease %s (starting)' % starting['lease'],
              "Blazar's manager left it STARTING: let the manager finish, "
              'then import again')],
            report.refused)
        self.assertEqual([], self.rows(tables.LEASES, id=starting['lease']))
        self.assertEqual(9, report.leases)

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
        self.assertEqual((0, 3, 0, 0, 4, 9), (
            report.hosts, report.hosts_present, report.floatingips,
            report.leases, report.floatingips_present,
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
             'Imported 3 host(s) with 6 extra capability(ies), 9 lease(s) '
             'with 9 reservation(s), 27 event(s) and 13 allocation(s).',
             'Already here: 0 host(s), 0 lease(s).',
             'Floating IPs: 4 imported, 0 already here.',
             'Renamed (the project has a lease of that name):'], lines[:5])
        self.assertEqual('Not imported:', lines[6])
        self.assertEqual(8, len(lines))

        result = self._run('import-blazar', '--blazar-connection',
                           self.blazar.url)
        self.assertEqual(0, result.returncode, result.stderr)
        self.assertEqual(['Nothing new to import.',
                          'Already here: 3 host(s), 9 lease(s).',
                          'Floating IPs: 0 imported, 4 already here.'],
                         result.stdout.splitlines()[1:4])

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
