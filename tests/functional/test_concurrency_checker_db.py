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

"""The concurrency checker's DB checks, on rows written to break them.

The run they judge is ``tests/e2e/test_api_concurrency.py``; the history
checks are seen to fail in ``tests/unit/test_concurrency_checker.py``.
"""

import datetime

import sqlalchemy as sa

from harness.concurrency import checker
from harness.concurrency import scenario
from harness.concurrency import workload
from tests import base


class TestCheckerOnCraftedRows(base.DBTestCase):
    """The DB checks find what was written to break them."""

    START = datetime.datetime(2027, 1, 10, 10, 0)

    def setUp(self):
        super().setUp()
        scenario.add_hosts(self.engine, 2, self.START)
        with self.engine.connect() as conn:
            self.limits = checker.read_limits(
                conn, 30, scenario.NOVA_RATIOS, scenario.NOVA_RESERVED, 100)
        self.hosts = sorted(self.limits.hosts)

    def lease(self, conn, hours=(0, 2), **allocation):
        """A lease with one allocation, the lease id."""
        lease_id = 'l-%d' % len(self.leases)
        self.leases.append(lease_id)
        start, end = (self.START + datetime.timedelta(hours=h)
                      for h in hours)
        conn.execute(sa.text(
            "INSERT INTO leases (id, name, project_id, start_date, end_date, "
            "status, degraded, created_at) VALUES (:id, :id, 'p', :start, "
            ":end, 'PENDING', false, :now)"),
            {'id': lease_id, 'start': start, 'end': end, 'now': self.START})
        conn.execute(sa.text(
            "INSERT INTO reservations (id, lease_id, resource_type, status, "
            "missing_resources, resources_changed, created_at) VALUES "
            "(:id, :id, 'physical:host', 'pending', false, false, :now)"),
            {'id': lease_id, 'now': self.START})
        values = dict({'whole_host': True, 'vcpus': 0, 'memory_mb': 0,
                       'disk_gb': 0, 'host_id': self.hosts[0]}, **allocation)
        conn.execute(sa.text(
            'INSERT INTO host_allocations (id, host_id, reservation_id, '
            'start_date, end_date, whole_host, vcpus, memory_mb, disk_gb) '
            'VALUES (:id, :host_id, :id, :start, :end, :whole_host, :vcpus, '
            ':memory_mb, :disk_gb)'),
            dict(values, id=lease_id, start=start, end=end))
        return lease_id

    def violations(self):
        records = [_created(lease_id) for lease_id in self.leases]
        with self.engine.connect() as conn:
            return checker.db_violations(conn, records, self.limits,
                                         self.START)

    def test_separate_whole_hosts_pass(self):
        self.leases = []
        with self.engine.begin() as conn:
            self.lease(conn, (0, 2))
            self.lease(conn, (3, 5))
            self.lease(conn, (0, 2), host_id=self.hosts[1])
        self.assertEqual([], self.violations())

    def test_a_host_in_two_leases_within_the_cleaning_time_is_found(self):
        self.leases = []
        with self.engine.begin() as conn:
            self.lease(conn, (0, 2))
            # 2:00 to 2:20 would need 30 minutes of cleaning in between.
            self.lease(conn, (2, 4))
        found = self.violations()
        self.assertTrue(found)
        self.assertIn('two overlapping allocations', found[0])

    def test_slices_over_the_capacity_are_found(self):
        self.leases = []
        # The first host: 16 vCPUs at 4.0, 32768 MB less Nova's 512 MB.
        with self.engine.begin() as conn:
            self.lease(conn, whole_host=False, vcpus=8, memory_mb=16384,
                       disk_gb=10)
            self.lease(conn, whole_host=False, vcpus=8, memory_mb=15872,
                       disk_gb=10)
        self.assertEqual([], self.violations())
        with self.engine.begin() as conn:
            self.lease(conn, (1, 3), whole_host=False, vcpus=1,
                       memory_mb=1, disk_gb=1)
        found = self.violations()
        self.assertTrue(found)
        self.assertIn('carries slices', found[0])

    def test_a_lease_no_create_made_is_found(self):
        self.leases = []
        with self.engine.begin() as conn:
            self.lease(conn)
        self.leases.pop()
        self.assertIn('no create made it', self.violations()[0])


def _created(lease_id):
    return workload.Record(client=0, op='create', kind='host', send=0.0,
                           receive=1.0, status=201, lease=lease_id)
