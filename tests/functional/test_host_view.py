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

"""The host view keeps Blazar's keys that this service has no value for.

Blazar shows ``status`` (always null) and ``trust_id`` (the trust of the
host's operator); the service acts as its service user, with no trust,
and keeps neither in the DB.
"""

import datetime

import sqlalchemy as sa

from db import api as db_api
from db import models
from reservation_ext import clock as clock_mod
from reservation_ext import exceptions
from reservation_ext.hosts import inventory
from reservation_ext.store import hosts as store_hosts
from tests import base

HOSTS = models.ComputeHost.__table__


class HostViewTest(base.DBTestCase):

    def setUp(self):
        super().setUp()
        with db_api.writer(self.ctx, clock_mod.SYSTEM) as session:
            store_hosts.add_host(session, {
                'hypervisor_hostname': 'compute-1', 'vcpus': 8,
                'memory_mb': 8192, 'local_gb': 100}, {'gpu': 'true'})
        self.inventory = inventory.HostInventory(None, None, None)

    def test_status_and_trust_id_are_shown_null(self):
        [host] = self.inventory.list(self.ctx)
        self.assertIsNone(host['status'])
        self.assertIsNone(host['trust_id'])
        self.assertEqual('true', host['gpu'])

    def test_the_hosts_table_has_no_unused_columns(self):
        self.assertNotIn('status', HOSTS.c)
        self.assertNotIn('trust_id', HOSTS.c)
        columns = {column['name'] for column in sa.inspect(
            self.engine).get_columns('computehosts')}
        self.assertFalse({'status', 'trust_id'} & columns)


class HostPowerViewTest(base.DBTestCase):
    """The power keys of the host view, and the admin's power_managed."""

    def setUp(self):
        super().setUp()
        with db_api.writer(self.ctx, clock_mod.SYSTEM) as session:
            self.host_id = store_hosts.add_host(session, {
                'hypervisor_hostname': 'compute-1', 'vcpus': 8,
                'memory_mb': 8192, 'local_gb': 100}, {})
        self.inventory = inventory.HostInventory(None, clock_mod.SYSTEM,
                                                 None)

    def test_a_new_host_is_on_managed_and_has_no_transition_planned(self):
        [host] = self.inventory.list(self.ctx)
        self.assertEqual(
            {'power_state': 'on', 'power_managed': True,
             'power_next_transition': None,
             'power_next_transition_at': None, 'power_failure': None,
             'power_state_since': None},
            {key: host[key] for key in (
                'power_state', 'power_managed', 'power_next_transition',
                'power_next_transition_at', 'power_failure',
                'power_state_since')})

    def test_power_managed_is_set_as_the_hosts_own_flag(self):
        host = self.inventory.update(self.ctx, self.host_id,
                                     {'power_managed': False, 'rack': 'b7'})
        self.assertFalse(host['power_managed'])
        self.assertEqual('b7', host['rack'])
        self.assertEqual([{'property': 'rack'}],
                         self.inventory.properties(self.ctx))

    def test_power_managed_is_also_taken_as_the_text_the_client_sends(self):
        host = self.inventory.update(self.ctx, self.host_id,
                                     {'power_managed': 'false'})
        self.assertFalse(host['power_managed'])
        host = self.inventory.update(self.ctx, self.host_id,
                                     {'power_managed': 'True'})
        self.assertTrue(host['power_managed'])

    def test_power_managed_other_than_a_boolean_is_refused(self):
        for value in ('no', 'yes', '', 0, 1, None):
            error = self.assertRaises(
                exceptions.InvalidInput, self.inventory.update, self.ctx,
                self.host_id, {'power_managed': value})
            self.assertEqual('power_managed', error.field)
        self.assertTrue(self.inventory.get(self.ctx,
                                           self.host_id)['power_managed'])

    def test_the_power_keys_are_no_extra_capabilities(self):
        error = self.assertRaises(
            exceptions.InvalidInput, self.inventory.update, self.ctx,
            self.host_id, {'power_state': 'off'})
        self.assertEqual('power_state', error.field)

    def test_a_host_that_is_not_on_cannot_be_removed(self):
        with db_api.writer(self.ctx, clock_mod.SYSTEM) as session:
            session.execute(sa.update(HOSTS).values(power_state='off'))
        error = self.assertRaises(exceptions.Conflict, self.inventory.delete,
                                  self.ctx, self.host_id)
        self.assertIn('is off by the power manager', str(error))
        self.assertEqual(1, len(self.inventory.list(self.ctx)))

    def test_a_host_an_engine_is_switching_cannot_be_removed(self):
        with db_api.writer(self.ctx, clock_mod.SYSTEM) as session:
            session.execute(sa.update(HOSTS).values(
                power_claimed_by='engine-1:token',
                power_claimed_until=clock_mod.SYSTEM.now() +
                datetime.timedelta(minutes=5)))
        error = self.assertRaises(exceptions.Conflict, self.inventory.delete,
                                  self.ctx, self.host_id)
        self.assertIn('is being switched by the power manager', str(error))
