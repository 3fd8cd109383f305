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

import sqlalchemy as sa

from db import api as db_api
from db import models
from reservation_ext import clock as clock_mod
from reservation_ext.hosts import inventory
from reservation_ext.hosts import records
from tests import base

HOSTS = models.ComputeHost.__table__


class HostViewTest(base.DBTestCase):

    def setUp(self):
        super().setUp()
        with db_api.writer(self.ctx, clock_mod.SYSTEM) as session:
            records.add_host(session, {
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
