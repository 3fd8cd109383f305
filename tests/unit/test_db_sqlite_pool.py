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

"""The leases DB on a SQLite file keeps its connections between transactions.

A kept connection must behave as a new one did: its settings stay, every
transaction on it begins (IMMEDIATE for a writer) and one that fails
leaves nothing behind.
"""

import datetime

import sqlalchemy as sa

from db import api as db_api
from db import tables
from reservation_ext import clock as clock_mod
from reservation_ext import context
from tests import base
from tests import fixtures

PROPERTIES = tables.HOST_PROPERTIES


class SQLiteFilePoolTest(base.TestCase):

    def setUp(self):
        super().setUp()
        self.db = self.useFixture(fixtures.Database())
        self.ctx = context.get_admin_context()
        self.clock = clock_mod.ManualClock(datetime.datetime(2030, 1, 1))

    def connection_of_a_reader(self):
        with db_api.context_manager.reader.using(self.ctx) as session:
            return session.connection().connection.driver_connection

    def test_two_transactions_one_after_the_other_share_a_connection(self):
        self.assertIs(self.connection_of_a_reader(),
                      self.connection_of_a_reader())

    def test_a_kept_connection_keeps_its_settings(self):
        self.connection_of_a_reader()
        with db_api.context_manager.reader.using(self.ctx) as session:
            pragma = lambda name: session.execute(  # noqa: E731
                sa.text('PRAGMA ' + name)).scalar()
            self.assertEqual(1, pragma('foreign_keys'))
            self.assertEqual('wal', pragma('journal_mode'))
            self.assertEqual(db_api.SQLITE_BUSY_TIMEOUT_MS,
                             pragma('busy_timeout'))
            self.assertEqual(-db_api.SQLITE_CACHE_KIB, pragma('cache_size'))

    def test_each_writer_on_a_kept_connection_begins_immediate(self):
        statements = self.useFixture(fixtures.Statements(self.db.engine))
        for name in ('gpu', 'rack'):
            with db_api.writer(self.ctx, self.clock) as session:
                session.execute(sa.insert(PROPERTIES).values(name=name))
        self.assertEqual(2, statements.statements.count('BEGIN IMMEDIATE'))

    def test_a_failed_writer_on_a_kept_connection_leaves_nothing(self):
        def insert_then_fail():
            with db_api.writer(self.ctx, self.clock) as session:
                session.execute(sa.insert(PROPERTIES).values(name='gpu'))
                raise RuntimeError('rolled back')

        self.connection_of_a_reader()
        self.assertRaises(RuntimeError, insert_then_fail)
        with db_api.writer(self.ctx, self.clock) as session:
            session.execute(sa.insert(PROPERTIES).values(name='rack'))
        with db_api.context_manager.reader.using(self.ctx) as session:
            names = session.execute(sa.select(PROPERTIES.c.name)).scalars()
            self.assertEqual(['rack'], list(names))
