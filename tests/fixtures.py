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

"""Test fixtures shared by the unit and functional tests."""

import hashlib
import os
import shutil
import sys
import tempfile
import unittest
import uuid

import fixtures
import kombu
from oslo_config import cfg
from oslo_db.sqlalchemy import test_fixtures as db_fixtures
from oslo_messaging import conffixture
import sqlalchemy as sa

from db import api as db_api
from db import models
from reservation_ext import conf as conf_mod
from reservation_ext import plugins as plugins_mod
from reservation_ext.sandbox.neutron import schema
from tests import nova_auth
from tests import plugins as test_plugins


class Database(fixtures.Fixture):
    """A fresh SQLite file DB with the current schema, used by db.api."""

    def _setUp(self):
        tmp = self.useFixture(fixtures.TempDir()).path
        self.url = 'sqlite:///' + os.path.join(tmp, 'reservation.sqlite')
        facade = db_api.new_context_manager(connection=self.url)
        self.useFixture(db_fixtures.ReplaceEngineFacadeFixture(
            db_api.context_manager, facade))
        self.engine = facade.writer.get_engine()
        models.Base.metadata.create_all(self.engine)
        self.addCleanup(self.engine.dispose)


class Statements(fixtures.Fixture):
    """The SQL statements sent on ``engine`` while in use (``statements``)."""

    def __init__(self, engine):
        super().__init__()
        self.engine = engine

    def _setUp(self):
        self.statements = []
        sa.event.listen(self.engine, 'before_cursor_execute', self._record)
        self.addCleanup(sa.event.remove, self.engine,
                        'before_cursor_execute', self._record)

    def _record(self, conn, cursor, statement, *args):
        self.statements.append(statement)

    def reading(self, table):
        """The statements that name ``table``."""
        return [statement for statement in self.statements
                if table in statement]


class ReservationConf(fixtures.Fixture):
    """A ConfigOpts of its own with reservation-ext's options (``conf``).

    ``overrides``: ``{(group, name): value}`` set on it; oslo.config's
    fixture undoes them at cleanup.
    """

    def __init__(self, overrides=None):
        super().__init__()
        self.overrides = overrides or {}

    def _setUp(self):
        self.conf = cfg.ConfigOpts()
        conf_mod.register_opts(self.conf)
        self.conf([], project='reservation')
        self.useFixture(conffixture.ConfFixture(self.conf))
        for (group, name), value in self.overrides.items():
            self.conf.set_override(name, value, group=group)


# Read at import: the harnesses give each test a home and a temporary
# directory of its own.
_CACHE_DIR = schema.cache_dir()


def distribution(name, entry_points):
    """The directory of a distribution ``name`` of ``entry_points``.

    Made once, in the user's cache directory as the sandbox's Neutron
    template, and the same for every test and process: stevedore keys its
    entry-point cache on the paths of ``sys.path`` and their times, so a
    new directory per test would rebuild that cache (0.4 s of CPU) and
    write it anew. Made aside and renamed, so that a concurrent maker is
    harmless.

    :param entry_points: the text of its ``entry_points.txt``.
    """
    digest = hashlib.sha256((name + entry_points).encode()).hexdigest()[:16]
    path = os.path.join(_CACHE_DIR, '%s-%s' % (name, digest))
    if os.path.isdir(path):
        return path
    os.makedirs(_CACHE_DIR, exist_ok=True)
    work = tempfile.mkdtemp(dir=_CACHE_DIR)
    dist = os.path.join(work, name.replace('-', '_') + '-1.0.dist-info')
    os.mkdir(dist)
    with open(os.path.join(dist, 'METADATA'), 'w') as f:
        f.write('Metadata-Version: 2.1\nName: %s\nVersion: 1.0\n' % name)
    with open(os.path.join(dist, 'entry_points.txt'), 'w') as f:
        f.write(entry_points)
    try:
        os.rename(work, path)
    except OSError:
        # Another process made it first.
        shutil.rmtree(work)
    return path


class TestPlugins(fixtures.Fixture):
    """Install the test plugins as entry points of a real distribution.

    A ``.dist-info`` directory on ``sys.path`` (and on ``PYTHONPATH``, for
    engine processes started by the test) declares ``test:journal`` in the
    ``reservation_ext.plugins`` namespace and the keystoneauth1 plugin of
    :mod:`tests.nova_auth`, so stevedore finds them as it finds installed
    plugins. The journal goes to a temporary file of the test's.
    """

    def _setUp(self):
        path = distribution(
            'reservation-ext-test-plugins',
            '[%s]\n%s = tests.plugins:JournalPlugin\n'
            '[keystoneauth1.plugin]\n%s = tests.nova_auth:%s\n' % (
                plugins_mod.NAMESPACE, test_plugins.RESOURCE_TYPE,
                nova_auth.NAME, nova_auth.HeaderAuthLoader.__name__))
        self.useFixture(fixtures.MonkeyPatch('sys.path', [path] + sys.path))
        # stevedore keeps each namespace's entry points for the life of the
        # process: without a fresh cache, a namespace read before this
        # fixture (or with it, after) would miss (or keep) the test plugins.
        self.useFixture(fixtures.MonkeyPatch(
            'stevedore.extension.ExtensionManager.ENTRY_POINT_CACHE', {}))
        top = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
        self.useFixture(fixtures.EnvironmentVariable(
            'PYTHONPATH', os.pathsep.join(
                [path, top] + [p for p in [os.environ.get('PYTHONPATH')]
                               if p])))
        self.journal = os.path.join(
            self.useFixture(fixtures.TempDir()).path, 'journal')
        self.useFixture(fixtures.EnvironmentVariable(
            test_plugins.JOURNAL_ENV, self.journal))


class RabbitMQ(fixtures.Fixture):
    """A notification topic of its own on a real RabbitMQ broker.

    The broker is ``RESERVATION_RABBITMQ_URL`` (an oslo.messaging
    transport URL; default: the ``guest`` user on localhost, which
    RabbitMQ lets in from the loopback only). When no broker answers, the
    test is skipped, unless ``RESERVATION_REQUIRE_RABBITMQ=1`` (as
    ``.ci/run`` sets it) makes that a failure. ``topic`` is new for every
    test, so that runs never see each other's messages; its queue is
    deleted afterwards.
    """

    DEFAULT_URL = 'rabbit://guest:guest@localhost:5672/'

    def setUp(self):
        # Checked before the fixture's own setUp, which would turn the
        # skip into a SetupError.
        self.url = os.environ.get('RESERVATION_RABBITMQ_URL',
                                  self.DEFAULT_URL)
        self._check_broker()
        super().setUp()

    def _setUp(self):
        self.topic = 'reservation-test-' + uuid.uuid4().hex
        self.addCleanup(self._delete_queue)

    def _check_broker(self):
        try:
            with self._connection() as connection:
                connection.connect()
        except Exception as exc:
            reason = 'no RabbitMQ broker answers at %s: %s' % (
                self._connection().as_uri(), exc)
            if os.environ.get('RESERVATION_REQUIRE_RABBITMQ') == '1':
                raise AssertionError(
                    reason + ' (RESERVATION_REQUIRE_RABBITMQ=1)') from exc
            raise unittest.SkipTest(reason)

    def _connection(self):
        # kombu spells oslo.messaging's rabbit:// as amqp://.
        return kombu.Connection('amqp' + self.url[len('rabbit'):],
                                connect_timeout=5)

    def _delete_queue(self):
        # The queue of the INFO notifications, which the tests listen to.
        with self._connection() as connection:
            connection.default_channel.queue_delete(self.topic + '.info')
