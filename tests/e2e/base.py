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

"""End-to-end tests: a real reservation-sandbox driven by the real CLIs.

:class:`SandboxTestCase` shares one sandbox
(:class:`harness.sandbox.SandboxFixture`) among the tests of a class,
since starting one takes seconds, and runs the unmodified ``openstack``
and ``nova`` clients against it as the admin or the demo user::

    class TestSomething(base.SandboxTestCase):

        def test_it(self):
            out = self.run_cli(['openstack', 'server', 'list', '-f', 'json'])
            self.run_cli(['openstack', 'server', 'list'], user='demo')
"""

import json
import os
import subprocess
import time
import unittest
import uuid

from oslo_db import exception as db_exc
from oslo_db.sqlalchemy import provision
import testtools

from harness import sandbox as sandbox_mod

CLI_TIMEOUT = 120


def listed_objects(value):
    """The dicts of a list field as ``-f json`` prints it.

    python-blazarclient prints each one as JSON text, one after another,
    in one string.
    """
    if not isinstance(value, str):
        return value if isinstance(value, list) else [value]
    decoder, objects, at = json.JSONDecoder(), [], 0
    while value[at:].strip():
        at += len(value[at:]) - len(value[at:].lstrip())
        found, at = decoder.raw_decode(value, at)
        objects.append(found)
    return objects


class ProvisionedDatabase:
    """A mixin of SandboxTestCase: the leases DB on a database server.

    The class gets a database of its own from oslo.db's provisioning
    (user ``openstack_citest`` on localhost, as the DB tests), given to
    the sandbox with ``--db-url``; without a server the class is
    skipped, unless the variable ``REQUIRED`` names is ``1``. Its
    subclasses :class:`MariaDB` and :class:`PostgreSQL` say which.
    """

    # oslo.db's name of the database type; the variable that requires it.
    DATABASE = None
    REQUIRED = None
    # Added to the URL's query (the client character set on MySQL).
    QUERY = {}

    @classmethod
    def setUpClass(cls):
        try:
            cls.backend = provision.Backend.backend_for_database_type(
                cls.DATABASE)
        except db_exc.BackendNotAvailable:
            if os.environ.get(cls.REQUIRED) == '1':
                raise
            raise unittest.SkipTest('no %s server' % cls.DATABASE)
        cls.database = 'sandbox_' + uuid.uuid4().hex[:12]
        cls.backend.create_named_database(cls.database)
        url = cls.backend.provisioned_database_url(cls.database)
        cls.OPTIONS = tuple(cls.OPTIONS) + (
            '--db-url', url.update_query_dict(cls.QUERY).render_as_string(
                hide_password=False))
        try:
            super().setUpClass()
        except BaseException:
            cls.backend.drop_named_database(cls.database)
            raise

    @classmethod
    def tearDownClass(cls):
        try:
            super().tearDownClass()
        finally:
            cls.backend.drop_named_database(cls.database)


class MariaDB(ProvisionedDatabase):
    DATABASE = 'mysql'
    REQUIRED = 'RESERVATION_REQUIRE_MYSQL'
    # oslo.db asks PyMySQL for utf8 (three bytes at most) unless the URL
    # names a character set; the tables are utf8mb4.
    QUERY = {'charset': 'utf8mb4'}


class PostgreSQL(ProvisionedDatabase):
    DATABASE = 'postgresql'
    REQUIRED = 'RESERVATION_REQUIRE_POSTGRESQL'


def created(output):
    """The object of a blazarclient create's ``-f json`` output.

    The client writes "Created a new ...:" on the line before it.
    """
    first, rest = output.split('\n', 1)
    assert first.startswith('Created a new'), output
    return json.loads(rest)


class SandboxTestCase(testtools.TestCase):
    """Tests sharing one sandbox per class (``cls.sandbox``)."""

    HOSTS = 4
    # More reservation-sandbox options of the class's sandbox.
    OPTIONS = ()

    @classmethod
    def setUpClass(cls):
        super().setUpClass()
        cls.sandbox = sandbox_mod.SandboxFixture(hosts=cls.HOSTS,
                                                 options=cls.OPTIONS)
        cls.sandbox.setUp()

    @classmethod
    def tearDownClass(cls):
        cls.sandbox.cleanUp()
        super().tearDownClass()

    def run_cli(self, argv, user='admin', expect_failure=False):
        """Run a client as ``user``; its stdout (stderr if it failed).

        :raises AssertionError: the client exits non-zero (or zero, with
            ``expect_failure``), with its output.
        """
        env = dict(os.environ, **self.sandbox.env[user])
        result = subprocess.run(
            [sandbox_mod.executable(argv[0])] + list(argv[1:]), env=env,
            stdin=subprocess.DEVNULL, capture_output=True, text=True,
            timeout=CLI_TIMEOUT)
        if bool(result.returncode) != expect_failure:
            raise AssertionError('%s exited with status %d as %s\n'
                                 'stdout:\n%s\nstderr:\n%s' % (
                                     ' '.join(argv), result.returncode, user,
                                     result.stdout, result.stderr))
        return result.stderr if expect_failure else result.stdout

    def add_reservable_hosts(self, gpu_of):
        """Make the hosts ``{name: 'true' or 'false'}`` reservable.

        Each with the extra capability ``gpu``; once per sandbox.
        """
        existing = {host['hypervisor_hostname'] for host in self.run_json(
            ['openstack', 'reservation', 'host', 'list'])}
        for name, gpu in sorted(gpu_of.items()):
            if name not in existing:
                out = self.run_cli(['openstack', 'reservation', 'host',
                                    'create', '--extra', 'gpu=' + gpu, name])
                self.assertIn('Created a new host', out)

    def run_json(self, argv, user='admin'):
        """Run an openstack command with ``-f json``; the parsed output."""
        return json.loads(self.run_cli(list(argv) + ['-f', 'json'], user))

    def wait_for(self, predicate, timeout=60, interval=1):
        """Call ``predicate`` until it returns a true value; return it."""
        deadline = time.monotonic() + timeout
        while True:
            result = predicate()
            if result:
                return result
            if time.monotonic() > deadline:
                self.fail('not done in %d s: %s' % (timeout, predicate))
            time.sleep(interval)
