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

"""Plugins get the same lease and reservation dicts from every caller.

The lease service (API) and the engine build them with the same
functions of :mod:`reservation_ext.leases.views`.
"""

import datetime

import fixtures

from db import models
from reservation_ext import clock as clock_mod
from reservation_ext import context
from reservation_ext.engine import runner
from reservation_ext.leases import notifications
from reservation_ext.leases import service as lease_service
from reservation_ext import plugins
from reservation_ext.states import LeaseStatus
from tests import base
from tests import fixtures as test_fixtures
from tests import plugins as test_plugins
from tests.unit import test_engine


class PluginDictsTest(base.DBTestCase):

    def setUp(self):
        super().setUp()
        self.useFixture(test_fixtures.TestPlugins())
        self.clock = clock_mod.ManualClock(test_engine.T0 - test_engine.HOUR)
        conf = test_engine.make_conf(self)
        found = plugins.load_plugins(conf, self.clock)
        notifier = notifications.get_notifier(conf)
        self.engine = runner.Engine(conf, self.clock, found, notifier)
        self.service = lease_service.LeaseService(conf, self.clock, found,
                                                  notifier)
        self.calls = []

    def record(self, ctx, lease, reservation):
        self.calls.append((lease, reservation))

    def test_the_engine_gives_plugins_the_reservations_the_api_shows(self):
        lease_id, _ = test_engine.create_lease()
        view = self.service.get(context.get_admin_context(), lease_id)
        self.useFixture(fixtures.MockPatchObject(
            test_plugins.JournalPlugin, 'on_start', self.record))
        self.clock.set(test_engine.T0)
        self.engine.run_once()

        [(lease, reservation)] = self.calls
        self.assertEqual(view['reservations'], [reservation])
        self.assertEqual(
            set(models.Lease.__table__.c.keys()) | {'projects'}, set(lease))
        self.assertEqual(LeaseStatus.STARTING, lease['status'])
        self.assertIsInstance(lease['start_date'], datetime.datetime)

    def test_a_delete_gives_plugins_what_the_engine_gives(self):
        lease_id, _ = test_engine.create_lease()
        self.useFixture(fixtures.MockPatchObject(
            test_plugins.JournalPlugin, 'on_start', self.record))
        self.useFixture(fixtures.MockPatchObject(
            test_plugins.JournalPlugin, 'on_delete', self.record))
        self.clock.set(test_engine.T0)
        self.engine.run_once()
        self.service.delete(context.get_admin_context(), lease_id)

        [(started, at_start), (deleted, at_delete)] = self.calls
        self.assertEqual(set(started), set(deleted))
        self.assertEqual(LeaseStatus.DELETING, deleted['status'])
        self.assertEqual(set(at_start), set(at_delete))
        self.assertEqual(at_start['id'], at_delete['id'])
