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

"""A lease delete cut short by a dead process can be done again.

A child process deletes a lease whose ``test:journal`` clean-up sleeps, and
is killed while the lease is DELETING. Another delete runs the (idempotent)
clean-up again and removes the lease.
"""

import subprocess
import sys
import textwrap
import time
from unittest import mock

import sqlalchemy as sa

from db import api as db_api
from db import models
from reservation_ext import clock as clock_mod
from reservation_ext import context
from reservation_ext import exceptions
from reservation_ext.leases import notifications
from reservation_ext.leases import service as lease_service
from reservation_ext import plugins
from reservation_ext.states import LeaseStatus
from reservation_ext.states import ReservationStatus
from tests import base
from tests import fixtures as test_fixtures
from tests import plugins as test_plugins
from tests.unit import test_engine

# Hang guard for the wait below, not a performance expectation.
WAIT = 60
# Deletes the lease argv[2] of the leases DB argv[1] as an admin.
DELETER = textwrap.dedent('''
    from db import api as db_api
    from reservation_ext import clock, conf, context, plugins
    from reservation_ext.leases import notifications, service
    import sys
    config = conf.CONF
    config([], project='reservation-ext', default_config_files=[])
    config.set_override('connection', sys.argv[1],
                        group='reservation_database')
    db_api.configure(config)
    service.LeaseService(
        config, clock.SYSTEM, plugins.load_plugins(config, clock.SYSTEM),
        notifications.get_notifier(config)).delete(
            context.get_admin_context(), sys.argv[2])
''')


class InterruptedDeleteTest(base.TestCase):

    def setUp(self):
        super().setUp()
        self.useFixture(test_fixtures.TestPlugins())
        self.db_url = self.useFixture(test_fixtures.Database()).url
        conf = test_engine.make_conf(self)
        self.service = lease_service.LeaseService(
            conf, clock_mod.SYSTEM,
            plugins.load_plugins(conf, clock_mod.SYSTEM),
            notifications.get_notifier(conf))
        self.ctx = context.get_admin_context()

    def active_lease(self):
        """An ACTIVE lease whose clean-up (on_end) sleeps for a minute."""
        lease_id, reservation_id = test_engine.create_lease(
            status=LeaseStatus.ACTIVE, sleep=WAIT)
        with db_api.writer(self.ctx, clock_mod.SYSTEM) as session:
            session.execute(sa.update(models.Reservation.__table__).values(
                status=ReservationStatus.ACTIVE))
        return lease_id, reservation_id

    def kill_while_deleting(self, lease_id, reservation_id):
        """Start a delete in a child process; SIGKILL it in the clean-up."""
        child = subprocess.Popen(
            [sys.executable, '-c', DELETER, self.db_url, lease_id],
            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        self.addCleanup(child.wait)
        self.addCleanup(child.kill)
        deadline = time.monotonic() + WAIT
        while ('attempt_on_end', reservation_id) not in (
                test_plugins.read_journal()):
            self.assertIsNone(child.poll(), 'the deleter ended early')
            self.assertLess(time.monotonic(), deadline)
            time.sleep(0.05)
        child.kill()
        child.wait()

    def status(self, lease_id):
        lease, _, _ = test_engine.get_lease(lease_id)
        return lease['status']

    def test_a_lease_left_deleting_by_a_killed_delete_can_be_deleted(self):
        lease_id, reservation_id = self.active_lease()
        self.kill_while_deleting(lease_id, reservation_id)
        self.assertEqual(LeaseStatus.DELETING, self.status(lease_id))

        with mock.patch.object(test_plugins.time, 'sleep'):
            self.service.delete(self.ctx, lease_id)

        self.assertRaises(exceptions.NotFound, self.service.get,
                          self.ctx, lease_id)
        journal = test_plugins.read_journal()
        self.assertEqual(2, journal.count(('attempt_on_end',
                                           reservation_id)))
        self.assertEqual(1, journal.count(('on_end', reservation_id)))
