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

"""ReservationFilter on real nova HostStates.

The pools come from the leases DB (SQLite, PostgreSQL and MariaDB); these
tests also check that every change that matters to the filter reaches a
scheduler that cached the previous pools (the ``pool_state``
generation).
"""

import datetime
import uuid

from nova import objects
from nova.scheduler import host_manager
import sqlalchemy as sa

from db import api as db_api
from db import models
from nova_filters import reservation_filter
from reservation_ext import clock as clock_mod
from reservation_ext import context
from reservation_ext.store import hosts as store_hosts
from tests import base
from tests import fixtures

NOW = datetime.datetime(2030, 1, 1)
LEASES = models.Lease.__table__
RESERVATIONS = models.Reservation.__table__
ALLOCATIONS = models.HostAllocation.__table__
PROJECTS = models.LeaseProject.__table__
RECYCLING = models.RecyclingHost.__table__
NAMES = ['compute-%d' % i for i in range(6)]


class FilterHosts:
    """Six HostStates, four of them reservable, and the filter at ``now``."""

    now = NOW

    def setUp(self):
        super().setUp()
        objects.register_all()
        self.host_states = [host_manager.HostState(name, name, 'cell')
                            for name in NAMES]
        with self.writer() as session:
            self.host_ids = {name: store_hosts.add_host(session, {
                'hypervisor_hostname': name, 'vcpus': 8, 'memory_mb': 8192,
                'local_gb': 100}) for name in NAMES[:4]}
        self.filter = reservation_filter.ReservationFilter(
            clock=clock_mod.ManualClock(self.now))

    def writer(self):
        return db_api.writer(self.ctx, clock_mod.ManualClock(self.now))


class _FilterTests(FilterHosts):

    def add_lease(self, hostnames, project='owner', status='ACTIVE',
                  reservation_status='active', shared=()):
        lease_id, reservation_id = str(uuid.uuid4()), str(uuid.uuid4())
        with self.writer() as session:
            session.execute(sa.insert(LEASES).values(
                id=lease_id, name=lease_id, project_id=project,
                start_date=NOW, end_date=NOW, status='PENDING'))
            session.execute(sa.insert(RESERVATIONS).values(
                id=reservation_id, lease_id=lease_id,
                resource_type='physical:host', status='pending'))
            for name in hostnames:
                session.execute(sa.insert(ALLOCATIONS).values(
                    id=str(uuid.uuid4()), host_id=self.host_ids[name],
                    reservation_id=reservation_id, start_date=NOW,
                    end_date=NOW + datetime.timedelta(days=1)))
            for other in shared:
                session.execute(sa.insert(PROJECTS).values(
                    lease_id=lease_id, project_id=other))
            # As the engine starts a lease: the statuses move the pools.
            session.execute(sa.update(LEASES).where(LEASES.c.id == lease_id)
                            .values(status=status))
            session.execute(sa.update(RESERVATIONS).where(
                RESERVATIONS.c.id == reservation_id).values(
                    status=reservation_status))
        return lease_id, reservation_id

    def passing(self, project='owner', reservation=None):
        hints = {'reservation': [reservation]} if reservation else {}
        spec = objects.RequestSpec(
            project_id=project, scheduler_hints=hints,
            flavor=objects.Flavor(extra_specs={}))
        return [host.host for host in self.filter.filter_all(
            self.host_states, spec)]

    def test_without_hint_only_hosts_outside_the_pools_pass(self):
        self.add_lease(['compute-0'])
        self.assertEqual(['compute-4', 'compute-5'], self.passing())

    def test_hint_passes_the_reservation_hosts_for_owner_and_shared(self):
        _, reservation = self.add_lease(['compute-1', 'compute-2'],
                                        shared=['friend'])
        for project in ('owner', 'friend'):
            self.assertEqual(['compute-1', 'compute-2'],
                             self.passing(project, reservation))
        self.assertEqual([], self.passing('stranger', reservation))

    def test_hint_of_an_unknown_or_inactive_reservation_passes_nothing(self):
        _, pending = self.add_lease(['compute-1'], status='PENDING',
                                    reservation_status='pending')
        _, ending = self.add_lease(['compute-2'], status='TERMINATING')
        for reservation in (pending, ending, str(uuid.uuid4())):
            self.assertEqual([], self.passing('owner', reservation))

    def test_changes_reach_a_filter_that_cached_the_pools(self):
        self.assertEqual(['compute-4', 'compute-5'], self.passing())
        lease_id, reservation = self.add_lease(['compute-3'])
        self.assertEqual(['compute-3'], self.passing('owner', reservation))
        with self.writer() as session:
            session.execute(sa.update(LEASES).where(LEASES.c.id == lease_id)
                            .values(status='TERMINATING'))
        self.assertEqual([], self.passing('owner', reservation))
        with self.writer() as session:
            session.execute(sa.delete(ALLOCATIONS))
            session.execute(sa.delete(models.ComputeHost.__table__).where(
                models.ComputeHost.hypervisor_hostname == 'compute-0'))
        self.assertEqual(['compute-0', 'compute-4', 'compute-5'],
                         self.passing())

    def test_a_recycling_host_passes_no_request(self):
        _, reservation = self.add_lease(['compute-1', 'compute-2'])
        self.assertEqual(['compute-1', 'compute-2'],
                         self.passing('owner', reservation))
        with self.writer() as session:
            session.execute(sa.insert(RECYCLING).values(
                host_id=self.host_ids['compute-1'],
                reservation_id=str(uuid.uuid4()), check_at=NOW))
        # Seen by a filter that cached the pools before.
        self.assertEqual(['compute-2'], self.passing('owner', reservation))
        self.assertEqual(['compute-4', 'compute-5'], self.passing())
        with self.writer() as session:
            session.execute(sa.delete(RECYCLING))
        self.assertEqual(['compute-1', 'compute-2'],
                         self.passing('owner', reservation))

    def test_the_pools_are_read_once_until_they_change(self):
        self.passing()
        snapshot = self.filter._pools.get()
        self.passing()
        self.assertIs(snapshot, self.filter._pools.get())
        with self.writer() as session:
            store_hosts.add_host(session, {
                'hypervisor_hostname': 'compute-4', 'vcpus': 8,
                'memory_mb': 8192, 'local_gb': 100})
        self.assertIsNot(snapshot, self.filter._pools.get())


class FilterSQLiteTest(_FilterTests, base.DBTestCase):
    pass


class FilterSQLiteFileTest(_FilterTests, base.TestCase):
    """A SQLite file, where the filter checks on a connection of its own."""

    def setUp(self):
        self.useFixture(fixtures.Database())
        self.ctx = context.get_admin_context()
        super().setUp()


class FilterPostgreSQLTest(_FilterTests, base.PostgreSQLTestCase):
    pass


class FilterMySQLTest(_FilterTests, base.MySQLTestCase):
    pass
