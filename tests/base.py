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

"""Base test cases.

``DBTestCase`` runs on SQLite; ``PostgreSQLTestCase`` and
``MySQLTestCase`` run the same tests on a real PostgreSQL and a real
MariaDB (or MySQL) through oslo.db's opportunistic fixtures (user and
password ``openstack_citest`` on localhost; a fresh database per test
class). Without a reachable server those tests skip, unless the
environment sets ``RESERVATION_REQUIRE_POSTGRESQL=1`` or
``RESERVATION_REQUIRE_MYSQL=1`` (as ``.ci/run`` does), which turns the skip
into a failure.
"""

import os
import threading
import time

from oslo_config import cfg
from oslo_config import fixture as config_fixture
from oslo_db.sqlalchemy import provision
from oslo_db.sqlalchemy import test_fixtures
from oslo_policy import opts as policy_opts
from oslotest import base
import sqlalchemy as sa
from testtools import content

from db import api as db_api
from db import host_gaps
from db import models
from reservation_ext import context
from reservation_ext import policy


# oslo.policy's own option defaults, read at import, before any test runs.
# Placement's functional fixture, which Nova's harness runs, sets the
# default of enforce_new_defaults to False on oslo.policy's option objects
# for the rest of the process; without a reset, every later test in that
# process would check the deprecated defaults of the rules.
_POLICY_DEFAULTS = {opt.dest: opt.default
                    for opt in policy_opts.list_opts()[0][1]}


def _drop_the_gap_index_first(drop_all_objects):
    """Wrap oslo.db's SQLite drop of every table: the gap index first.

    oslo.db drops the tables it reflects in name order: the R*Tree of
    db.host_gaps, whose drop takes its shadow tables (host_gaps_node...)
    with it, comes before them, and their own drop then fails.
    """
    def drop(self, engine):
        with engine.begin() as conn:
            host_gaps.drop(conn)
        drop_all_objects(self, engine)
    return drop


# The class oslo.db registered for SQLite (its module name is bound to
# the dialect dispatcher).
_SQLITE_IMPL = type(provision.BackendImpl.impl('sqlite'))
_SQLITE_IMPL.drop_all_objects = _drop_the_gap_index_first(
    _SQLITE_IMPL.drop_all_objects)


class _SchemaFixture(test_fixtures.GeneratesSchema,
                     test_fixtures.OpportunisticDbFixture):

    def get_enginefacade(self):
        return db_api.context_manager

    def generate_schema_create_all(self, engine):
        models.Base.metadata.create_all(engine)


class SQLiteFixture(_SchemaFixture):
    DRIVER = 'sqlite'


class PostgreSQLFixture(_SchemaFixture):
    DRIVER = 'postgresql'


class MySQLFixture(_SchemaFixture):
    DRIVER = 'mysql'


# subunit, which carries each test's result to stestr, refuses a packet
# over 4 MiB, and stestr then stops the whole run. A log captured on a slow
# machine can outgrow that; its end is where a failure shows.
DETAIL_LIMIT = 1024 * 1024


def wait_until(predicate, what, timeout):
    """Wait until ``predicate()`` is true; fail after ``timeout`` seconds.

    The timeout is a hang guard, not a performance expectation.
    """
    deadline = time.monotonic() + timeout
    while not predicate():
        if time.monotonic() > deadline:
            raise AssertionError('timed out waiting for ' + what)
        time.sleep(0.05)


def run_together(target, argses, timeout=60):
    """Run ``target(*args)`` for each of ``argses`` in threads at once.

    Returns once all are done; ``timeout`` (seconds, each) is a hang
    guard.
    """
    threads = [threading.Thread(target=target, args=args)
               for args in argses]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout)


def kill_if_running(process):
    """Kill a child process if it still runs, and reap it."""
    if process.poll() is None:
        process.kill()
        process.wait()


def bound_details(test):
    """Have ``test`` report at most DETAIL_LIMIT bytes of each detail.

    The details are cut when they are read, after the test: the part
    kept is the last one, with a line saying how much went. Call it
    before the test uses any fixture: testtools copies a fixture's
    details to the test in a cleanup of its own, which must run before
    this one.
    """
    def bound():
        details = test.getDetails()
        for name, detail in list(details.items()):
            details[name] = content.Content(
                detail.content_type, _tail_reader(detail))
    test.addCleanup(bound)


def _tail_reader(detail):
    def read():
        data = b''.join(detail.iter_bytes())
        if len(data) <= DETAIL_LIMIT:
            return [data]
        cut = len(data) - DETAIL_LIMIT
        return [b'[the first %d bytes are cut]\n' % cut, data[cut:]]
    return read


class TestCase(base.BaseTestCase):
    """Base of all tests: a parsed, clean CONF and a fresh policy."""

    def setUp(self):
        bound_details(self)
        super().setUp()
        self.useFixture(config_fixture.Config(cfg.CONF))
        policy_opts.set_defaults(cfg.CONF, **_POLICY_DEFAULTS)
        cfg.CONF([], project='reservation-ext', default_config_files=[])
        policy.reset()
        self.addCleanup(policy.reset)


class DBTestCase(test_fixtures.OpportunisticDBTestMixin, TestCase):
    """A test with an empty leases DB (SQLite in memory by default)."""

    FIXTURE = SQLiteFixture
    SKIP_ON_UNAVAILABLE_DB = True

    def setUp(self):
        super().setUp()
        self.ctx = context.get_admin_context()
        self.engine = db_api.get_engine()
        self.addCleanup(_empty_tables, self.engine)


class PostgreSQLTestCase(DBTestCase):
    """The same, on PostgreSQL."""

    FIXTURE = PostgreSQLFixture
    SKIP_ON_UNAVAILABLE_DB = (
        os.environ.get('RESERVATION_REQUIRE_POSTGRESQL') != '1')


class MySQLTestCase(DBTestCase):
    """The same, on MariaDB or MySQL."""

    FIXTURE = MySQLFixture
    SKIP_ON_UNAVAILABLE_DB = (
        os.environ.get('RESERVATION_REQUIRE_MYSQL') != '1')


def _empty_tables(engine):
    # oslo.db drops the tables in no particular order, which foreign keys
    # without ON DELETE CASCADE refuse while rows refer to others.
    with engine.begin() as conn:
        existing = set(sa.inspect(conn).get_table_names())
        for table in reversed(models.Base.metadata.sorted_tables):
            if table.name in existing:
                conn.execute(table.delete())
