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

"""The migrations against the models, on SQLite, PostgreSQL and MariaDB."""

import datetime
import os
import subprocess
import sys

import fixtures
from oslo_db.sqlalchemy import test_fixtures
from oslo_db.sqlalchemy import test_migrations
import sqlalchemy as sa

from db import api as db_api
from db import host_gaps
from db import migration
from db import models
from tests import base

HOSTS = models.ComputeHost.__table__
CAPS = models.HostCapability.__table__


class _EmptySQLite(test_fixtures.OpportunisticDbFixture):
    """A database without tables: the migrations build the schema."""

    def get_enginefacade(self):
        return db_api.context_manager


class _EmptyPostgreSQL(_EmptySQLite):
    DRIVER = 'postgresql'


class _EmptyMySQL(_EmptySQLite):
    DRIVER = 'mysql'


class _ModelsSync(test_migrations.ModelsMigrationsSync):
    """The schema the migrations build is the schema of the models."""

    def db_sync(self, engine):
        migration.upgrade(engine)

    def get_engine(self):
        return self.engine

    def get_metadata(self):
        return models.Base.metadata

    def include_object(self, object_, name, type_, reflected, compare_to):
        # The version table is the migrations' own, not a model's; the
        # gap index (SQLite) is the triggers' (db.host_gaps).
        return not (type_ == 'table' and (name == migration.VERSION_TABLE
                                          or name in host_gaps.TABLES))

    def test_migrated_values_compare_exactly(self):
        # What MariaDB's defaults would lose: case in strings, the
        # microseconds of datetimes, double precision.
        migration.upgrade(self.engine)
        stamp = datetime.datetime(2030, 1, 2, 3, 4, 5, 123456)
        with self.engine.begin() as conn:
            for host_id, name in ((1, 'compute-1'), (2, 'COMPUTE-1')):
                conn.execute(HOSTS.insert().values(
                    id=host_id, hypervisor_hostname=name, vcpus=1,
                    memory_mb=1, local_gb=1, created_at=stamp))
            conn.execute(CAPS.insert().values(host_id=1, name='speed',
                                              value='B', num_value=5.1))
        with self.engine.connect() as conn:
            self.assertEqual([1], conn.scalars(sa.select(HOSTS.c.id).where(
                HOSTS.c.hypervisor_hostname == 'compute-1')).all())
            self.assertEqual([stamp, stamp], conn.scalars(
                sa.select(HOSTS.c.created_at)).all())
            self.assertEqual([1], conn.scalars(
                sa.select(CAPS.c.host_id).where(CAPS.c.num_value == 5.1,
                                                CAPS.c.value < 'a')).all())


class _NamedForeignKeys(fixtures.Fixture):
    """PostgreSQL DDL that names foreign keys, whatever Nova's tests did.

    Nova's initial migration, which Nova's functional harness imports into
    the test process, registers a compile hook that drops the name of
    every foreign key created on PostgreSQL; after a Nova test, the
    migrations here would create unnamed ones and could not drop them by
    name. The hook is taken away for the test and put back after it.
    """

    def _setUp(self):
        dispatcher = sa.ForeignKeyConstraint.__dict__.get(
            '_compiler_dispatcher')
        hook = dispatcher.specs.pop('postgresql', None) if dispatcher \
            else None
        if hook is not None:
            self.addCleanup(dispatcher.specs.__setitem__, 'postgresql', hook)


class _RoundTrip:
    """Every migration can be undone, and redone on what it left."""

    def setUp(self):
        super().setUp()
        self.useFixture(_NamedForeignKeys())

    def _tables(self):
        # The gap index is no model's: the test of db.host_gaps has it.
        return set(sa.inspect(self.engine).get_table_names()) - \
            host_gaps.TABLES

    def test_upgrade_downgrade_upgrade(self):
        model_tables = set(models.Base.metadata.tables)

        migration.upgrade(self.engine)
        self.assertEqual(migration.head(), migration.current(self.engine))
        self.assertEqual(model_tables | {migration.VERSION_TABLE},
                         self._tables())

        migration.downgrade(self.engine, 'base')
        self.assertIsNone(migration.current(self.engine))
        self.assertEqual({migration.VERSION_TABLE}, self._tables())

        migration.upgrade(self.engine)
        self.assertEqual(migration.head(), migration.current(self.engine))
        self.assertEqual(model_tables | {migration.VERSION_TABLE},
                         self._tables())


class ModelsSyncSQLite(_ModelsSync, base.DBTestCase):
    FIXTURE = _EmptySQLite


class ModelsSyncPostgreSQL(_ModelsSync, base.PostgreSQLTestCase):
    FIXTURE = _EmptyPostgreSQL


class ModelsSyncMySQL(_ModelsSync, base.MySQLTestCase):
    FIXTURE = _EmptyMySQL


class RoundTripSQLite(_RoundTrip, base.DBTestCase):
    FIXTURE = _EmptySQLite


class RoundTripPostgreSQL(_RoundTrip, base.PostgreSQLTestCase):
    FIXTURE = _EmptyPostgreSQL


class RoundTripMySQL(_RoundTrip, base.MySQLTestCase):
    FIXTURE = _EmptyMySQL


class DBManageMixin:
    """Runs reservation-db-manage with a config file of its own."""

    def write_config(self, tmp, db_file):
        """``tmp``/reservation.conf, on the SQLite file ``db_file``."""
        self.config_file = os.path.join(tmp, 'reservation.conf')
        with open(self.config_file, 'w') as f:
            f.write('[reservation_database]\nconnection = sqlite:///%s\n'
                    % db_file)

    def _run(self, *args):
        command = os.path.join(os.path.dirname(sys.executable),
                               'reservation-db-manage')
        return subprocess.run(
            [command, '--config-file', self.config_file] + list(args),
            stdin=subprocess.DEVNULL, capture_output=True, text=True,
            timeout=120)


class DBManageCommand(DBManageMixin, base.TestCase):
    """reservation-db-manage, run as the operator runs it."""

    def setUp(self):
        super().setUp()
        tmp = self.useFixture(fixtures.TempDir()).path
        # The command creates the missing directory of the SQLite file.
        self.db_file = os.path.join(tmp, 'state', 'reservation.sqlite')
        self.write_config(tmp, self.db_file)

    def test_upgrade_then_current(self):
        result = self._run('current')
        self.assertEqual(0, result.returncode, result.stderr)
        self.assertEqual('base (no migration applied)\n', result.stdout)

        result = self._run('upgrade')
        self.assertEqual(0, result.returncode, result.stderr)
        self.assertTrue(os.path.exists(self.db_file))

        result = self._run('current')
        self.assertEqual(0, result.returncode, result.stderr)
        self.assertEqual('%s (head)\n' % migration.head(), result.stdout)

    def test_unknown_revision(self):
        result = self._run('downgrade', 'no-such-revision')
        self.assertEqual(1, result.returncode)
        self.assertIn("reservation-db-manage: error: Can't locate revision",
                      result.stderr)
        self.assertNotIn('Traceback', result.stderr)

    def test_missing_config_file(self):
        os.unlink(self.config_file)
        result = self._run('upgrade')
        self.assertEqual(1, result.returncode)
        self.assertIn('Failed to find some config files', result.stderr)
