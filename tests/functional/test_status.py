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

"""reservation-status: each upgrade check, and the engines' heartbeats.

The checks run on real files: a nova.conf, the project's api-paste.ini
(or a broken copy), a policy file and a SQLite leases DB migrated by
alembic. The commands run as the operator runs them, in a process.
"""

import datetime
import json
import os
import subprocess
import sys

import fixtures
import sqlalchemy as sa

from db import api as db_api
from db import migration
from db import tables
from reservation_ext import clock as clock_mod
from reservation_ext.cmd import engine as engine_cmd
from reservation_ext.cmd import status
from reservation_ext.cmd import upgrade_checks
from reservation_ext import context
from reservation_ext.store import engines as store_engines
from tests import base
from tests import fixtures as test_fixtures

TOP = os.path.dirname(os.path.dirname(os.path.dirname(
    os.path.abspath(__file__))))
PASTE = os.path.join(TOP, 'etc', 'nova', 'api-paste.ini')
FILTERS = ('available_filters = nova.scheduler.filters.all_filters\n'
           'available_filters = %s\nenabled_filters = ComputeFilter,%s\n'
           % (upgrade_checks.FILTER_CLASS, upgrade_checks.FILTER_NAME))
Code = upgrade_checks.Code
NOW = datetime.datetime(2026, 5, 4, 3, 2, 1)


class _NovaConf(base.TestCase):
    """A nova.conf in a temporary directory, and a leases DB beside it."""

    def setUp(self):
        super().setUp()
        self.tmp = self.useFixture(fixtures.TempDir()).path
        self.db_url = 'sqlite:///' + os.path.join(self.tmp, 'leases.sqlite')
        self.sections = {
            'wsgi': 'api_paste_config = %s\n' % PASTE,
            'filter_scheduler': FILTERS,
            'reservation': 'event_poll_interval = 10\n',
            'reservation_database': 'connection = %s\n' % self.db_url,
        }

    def write_conf(self):
        """Write nova.conf from ``self.sections``; return its path."""
        path = os.path.join(self.tmp, 'nova.conf')
        with open(path, 'w') as f:
            for name, body in self.sections.items():
                f.write('[%s]\n%s' % (name, body))
        return path

    def conf(self):
        """Return the command's configuration, parsed from nova.conf."""
        return status.parse_args(['--config-file', self.write_conf(),
                                  'upgrade', 'check'])

    def write(self, name, text):
        """Write a file beside nova.conf; return its path."""
        path = os.path.join(self.tmp, name)
        with open(path, 'w') as f:
            f.write(text)
        return path


class UpgradeChecksTest(_NovaConf):
    """Each check passes on a good deployment and says what is wrong."""

    def test_a_migrated_leases_db_passes_and_an_old_one_fails(self):
        self.assertEqual(Code.FAILURE,
                         upgrade_checks.check_database(self.conf()).code)
        migration.upgrade(self.db_url, '0a7b3c5d9e21')
        result = upgrade_checks.check_database(self.conf())
        self.assertEqual(Code.FAILURE, result.code)
        self.assertIn('is at 0a7b3c5d9e21', result.details)
        self.assertIn('reservation-db-manage upgrade', result.details)
        migration.upgrade(self.db_url)
        self.assertEqual(Code.SUCCESS,
                         upgrade_checks.check_database(self.conf()).code)

    def test_a_leases_db_that_does_not_answer_fails(self):
        self.sections['reservation_database'] = (
            'connection = sqlite:///%s\n'
            % os.path.join(self.tmp, 'no', 'such', 'dir', 'leases.sqlite'))
        result = upgrade_checks.check_database(self.conf())
        self.assertEqual(Code.FAILURE, result.code)
        self.assertIn('does not answer', result.details)

    def test_the_filter_must_be_enabled_and_available(self):
        self.assertEqual(Code.SUCCESS,
                         upgrade_checks.check_filter(self.conf()).code)
        self.sections['filter_scheduler'] = (
            'enabled_filters = ComputeFilter\n')
        result = upgrade_checks.check_filter(self.conf())
        self.assertEqual(Code.FAILURE, result.code)
        self.assertIn('enabled_filters lacks ReservationFilter',
                      result.details)
        self.assertIn('available_filters lacks', result.details)

    def test_without_nova_conf_the_filter_check_warns(self):
        del self.sections['filter_scheduler']
        result = upgrade_checks.check_filter(self.conf())
        self.assertEqual(Code.WARNING, result.code)
        self.assertIn('pass nova.conf', result.details)

    def test_the_documented_paste_file_passes(self):
        self.assertEqual(Code.SUCCESS,
                         upgrade_checks.check_paste(self.conf()).code)

    def test_a_paste_file_without_the_middleware_or_healthcheck_fails(self):
        with open(PASTE) as f:
            text = f.read()
        text = text.replace(' reservation osapi_compute_app_v21',
                            ' osapi_compute_app_v21')
        text = text.replace('/healthcheck: healthcheck\n', '')
        self.sections['wsgi'] = 'api_paste_config = %s\n' % self.write(
            'api-paste.ini', text)
        result = upgrade_checks.check_paste(self.conf())
        self.assertEqual(Code.FAILURE, result.code)
        self.assertIn('/v2.1/+ lacks the reservation filter', result.details)
        self.assertIn('/healthcheck is not', result.details)

    def test_a_missing_paste_file_fails(self):
        self.sections['wsgi'] = 'api_paste_config = %s\n' % os.path.join(
            self.tmp, 'nowhere.ini')
        result = upgrade_checks.check_paste(self.conf())
        self.assertEqual(Code.FAILURE, result.code)
        self.assertIn('not found', result.details)

    def test_the_installed_nova_serves_the_microversion_needed(self):
        self.assertEqual(
            Code.SUCCESS, upgrade_checks.check_microversion(self.conf()).code)
        self.useFixture(fixtures.MonkeyPatch(
            'reservation_ext.cmd.upgrade_checks.NEEDED_MICROVERSION',
            '2.999'))
        result = upgrade_checks.check_microversion(self.conf())
        self.assertEqual(Code.FAILURE, result.code)
        self.assertIn('needs 2.999', result.details)

    def test_no_policy_file_passes(self):
        self.assertEqual(Code.SUCCESS,
                         upgrade_checks.check_policy(self.conf()).code)

    def test_a_policy_file_with_an_unknown_reservation_rule_warns(self):
        path = self.write('policy.yaml', (
            '"reservation:leases:get": "role:admin"\n'
            '"reservation:leases:gett": "role:admin"\n'
            '"os_compute_api:servers:index": "role:admin"\n'))
        self.sections['oslo_policy'] = 'policy_file = %s\n' % path
        result = upgrade_checks.check_policy(self.conf())
        self.assertEqual(Code.WARNING, result.code)
        self.assertIn('reservation:leases:gett', result.details)
        self.assertNotIn('os_compute_api', result.details)

    def test_a_json_policy_file_fails_the_format_check(self):
        path = self.write('policy.json',
                          '{"reservation:leases:get": "role:admin"}\n')
        self.sections['oslo_policy'] = 'policy_file = %s\n' % path
        self.assertEqual(Code.SUCCESS,
                         upgrade_checks.check_policy(self.conf()).code)
        result = upgrade_checks.check_policy_format(self.conf())
        self.assertEqual(Code.FAILURE, result.code)
        self.assertIn('oslopolicy-convert-json-to-yaml', result.details)

    def test_a_policy_file_that_does_not_parse_fails(self):
        path = self.write('policy.yaml', '"reservation:leases:get": [\n')
        self.sections['oslo_policy'] = 'policy_file = %s\n' % path
        self.assertEqual(Code.FAILURE,
                         upgrade_checks.check_policy(self.conf()).code)


def _run(*argv):
    """Run reservation-status with ``argv``; the completed process."""
    return subprocess.run(
        [sys.executable, '-m', 'reservation_ext.cmd.status'] + list(argv),
        stdin=subprocess.DEVNULL, capture_output=True, text=True,
        timeout=120)


class StatusCommandTest(_NovaConf):
    """reservation-status as the operator runs it."""

    def test_upgrade_check_succeeds_on_a_ready_deployment(self):
        migration.upgrade(self.db_url)
        result = _run('--config-file', self.write_conf(), 'upgrade', 'check',
                      '--json')
        self.assertEqual(0, result.returncode, result.stderr)
        checks = json.loads(result.stdout)['checks']
        self.assertEqual({Code.SUCCESS}, {c['result'] for c in checks})
        self.assertEqual(6, len(checks))

    def test_upgrade_check_exits_2_when_the_db_is_not_migrated(self):
        result = _run('--config-file', self.write_conf(), 'upgrade', 'check')
        self.assertEqual(2, result.returncode, result.stderr)
        self.assertIn('reservation-db-manage upgrade', result.stdout)

    def test_engines_exits_1_when_no_engine_has_recorded_a_poll(self):
        migration.upgrade(self.db_url)
        result = _run('--config-file', self.write_conf(), 'engines')
        self.assertEqual(1, result.returncode, result.stderr)
        self.assertEqual('No engine has recorded a poll.\n', result.stdout)

    def test_engines_shows_each_last_poll_and_the_stale_ones(self):
        migration.upgrade(self.db_url)
        now = clock_mod.SYSTEM.now()
        db = sa.create_engine(self.db_url)
        self.addCleanup(db.dispose)
        with db.begin() as connection:
            for name, last in (('fresh', now),
                               ('dead', now - datetime.timedelta(hours=1))):
                identity = {'engine_id': 'host-%s:1' % name,
                            'host': 'host-' + name, 'pid': 1,
                            'version': '1.0'}
                store_engines.record_start(connection, identity, last)
                store_engines.record_poll(connection, identity, last)
        result = _run('--config-file', self.write_conf(), 'engines')
        self.assertEqual(1, result.returncode, result.stderr)
        lines = {line.split()[0]: line for line in result.stdout.splitlines()
                 if line}
        self.assertTrue(lines['host-fresh:1'].endswith(' up'))
        self.assertTrue(lines['host-dead:1'].endswith(' stale'))
        self.assertIn(now.isoformat(sep=' '), lines['host-fresh:1'])
        self.assertEqual('Events: 0 running, 0 waiting for their results',
                         result.stdout.splitlines()[-1])

    def test_engines_counts_the_events_that_run_and_those_that_wait(self):
        migration.upgrade(self.db_url)
        now = clock_mod.SYSTEM.now().replace(microsecond=0)
        self._engine_polled(now)
        waits = [None, now - datetime.timedelta(minutes=5), now]
        db = sa.create_engine(self.db_url)
        self.addCleanup(db.dispose)
        with db.begin() as connection:
            for number, since in enumerate(waits):
                lease_id = 'lease-%d' % number
                connection.execute(sa.insert(tables.LEASES).values(
                    id=lease_id, name=lease_id, project_id='p',
                    start_date=now, end_date=now, status='STARTING',
                    created_at=now))
                connection.execute(sa.insert(tables.LEASE_EVENTS).values(
                    id='event-%d' % number, lease_id=lease_id,
                    event_type='start_lease', time=now, attempts=0,
                    status='IN_PROGRESS', waits_since=since,
                    wait_deadline=since and now, created_at=now))
        result = _run('--config-file', self.write_conf(), 'engines')
        self.assertEqual(0, result.returncode, result.stderr)
        self.assertEqual(
            'Events: 1 running, 2 waiting for their results (the oldest '
            'since %s UTC)' % waits[1].isoformat(sep=' '),
            result.stdout.splitlines()[-1])

    def _engine_polled(self, when):
        """Record an engine that polled at ``when``."""
        db = sa.create_engine(self.db_url)
        self.addCleanup(db.dispose)
        identity = {'engine_id': 'here:1', 'host': 'here', 'pid': 1,
                    'version': '1.0'}
        with db.begin() as connection:
            store_engines.record_start(connection, identity, when)
            store_engines.record_poll(connection, identity, when)


class HeartbeatTest(base.TestCase):
    """The engine's heartbeat row, written as the engine writes it."""

    def setUp(self):
        super().setUp()
        self.useFixture(test_fixtures.Database())
        self.clock = clock_mod.ManualClock(NOW)
        self.heartbeat = engine_cmd.Heartbeat(self.clock, engine_id='here:42')

    def _rows(self):
        """Return the heartbeat rows."""
        with db_api.context_manager.reader.using(
                context.get_admin_context()) as session:
            return store_engines.list_engines(session)

    def test_an_engine_is_recorded_at_start_and_at_each_poll(self):
        self.heartbeat.start()
        row, = self._rows()
        self.assertEqual(('here:42', NOW, None),
                         (row['engine_id'], row['started_at'],
                          row['last_poll_at']))
        self.clock.advance(seconds=5)
        self.heartbeat.on_poll(ctx=None)
        row, = self._rows()
        self.assertEqual(NOW + datetime.timedelta(seconds=5),
                         row['last_poll_at'])
        self.assertEqual(engine_cmd.Version().version_string_with_package(),
                         row['version'])

    def test_an_engine_removed_while_it_runs_comes_back_at_its_poll(self):
        self.heartbeat.start()
        self.heartbeat.stop()
        self.assertEqual([], self._rows())
        self.heartbeat.on_poll(ctx=None)
        row, = self._rows()
        self.assertEqual(NOW, row['last_poll_at'])

    def test_an_engine_is_stale_after_missing_three_polls(self):
        self.heartbeat.start()
        self.heartbeat.on_poll(ctx=None)
        row, = self._rows()
        self.assertFalse(store_engines.is_stale(
            row, NOW + datetime.timedelta(seconds=30), 10))
        self.assertTrue(store_engines.is_stale(
            row, NOW + datetime.timedelta(seconds=31), 10))
