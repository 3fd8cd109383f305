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

"""How engines share the work after host leases end.

On SQLite, PostgreSQL and MariaDB, the end of a grace period and the
check of a recycling host are claimed with one conditional UPDATE each (see
:mod:`reservation_ext.plugins.host_end_policies`): one engine wins, and the
work comes back when its claim runs out. These tests claim as engines do,
without acting on Nova (the Nova harness tests act).
"""

import datetime
import uuid

import sqlalchemy as sa

from db import api as db_api
from db import models
from reservation_ext import clock as clock_mod
from reservation_ext import conf as conf_mod
from reservation_ext.plugins import physical_host
from reservation_ext.store import hosts as store_hosts
from tests import base

NOW = datetime.datetime(2030, 1, 1, 12, 0)
CLAIM = datetime.timedelta(
    seconds=conf_mod.CONF.reservation.event_claim_timeout)
POLL = datetime.timedelta(
    seconds=conf_mod.CONF.reservation.event_poll_interval)


class _ClaimTests:

    def setUp(self):
        super().setUp()
        self.clock = clock_mod.ManualClock(NOW)
        # Two engines' plugins over the same DB.
        self.engines = [physical_host.PhysicalHostPlugin(
            conf_mod.CONF, self.clock) for _ in range(2)]
        with db_api.writer(self.ctx, self.clock) as session:
            self.host_id = store_hosts.add_host(session, {
                'hypervisor_hostname': 'compute-1', 'service_name':
                'compute-1', 'vcpus': 8, 'memory_mb': 8192,
                'local_gb': 100})

    def add_reservation(self, **request):
        lease_id, reservation_id = str(uuid.uuid4()), str(uuid.uuid4())
        with db_api.writer(self.ctx, self.clock) as session:
            session.execute(sa.insert(models.Lease.__table__).values(
                id=lease_id, name=lease_id, project_id='p',
                start_date=NOW, end_date=NOW, status='TERMINATED'))
            session.execute(sa.insert(models.Reservation.__table__).values(
                id=reservation_id, lease_id=lease_id,
                resource_type='physical:host', status='deleted'))
            session.execute(sa.insert(models.HostReservation.__table__)
                            .values(id=reservation_id,
                                    reservation_id=reservation_id, min=1,
                                    max=1, on_end='recycle', **request))
        return reservation_id

    def claims(self, method):
        """Return what each engine claims, one after the other, as of now."""
        return [getattr(engine.end_policies, method)(self.ctx)
                for engine in self.engines]

    def test_one_engine_claims_the_end_of_a_grace_period(self):
        reservation_id = self.add_reservation(
            end_phase='grace', act_at=NOW + datetime.timedelta(hours=1))
        self.assertEqual([[], []], self.claims('_claim_graces'))
        self.clock.set(NOW + datetime.timedelta(hours=1))
        first, second = self.claims('_claim_graces')
        self.assertEqual([(reservation_id, 'recycle')],
                         [tuple(row) for row in first])
        self.assertEqual([], second)
        # The winner died: the claim runs out and the work comes back.
        self.clock.set(self.clock.now() + CLAIM)
        self.assertEqual([1, 0], [len(claimed) for claimed in
                                  self.claims('_claim_graces')])

    def test_an_ended_grace_period_is_claimed_no_more(self):
        reservation_id = self.add_reservation(end_phase='grace', act_at=NOW)
        self.engines[0].end_policies.phases.set_end_phase(
            self.ctx, reservation_id, 'done')
        self.clock.set(NOW + CLAIM)
        self.assertEqual([[], []], self.claims('_claim_graces'))

    def test_a_recycling_host_is_checked_once_per_poll_interval(self):
        reservation_id = self.add_reservation()
        with db_api.writer(self.ctx, self.clock) as session:
            session.execute(sa.insert(
                models.HostAllocation.__table__).values(
                    id=str(uuid.uuid4()), host_id=self.host_id,
                    reservation_id=reservation_id, start_date=NOW,
                    end_date=NOW))
        self.engines[0].end_policies._start_recycling(self.ctx,
                                                      reservation_id)
        # Again, as an engine that re-runs the end: still one row.
        self.engines[1].end_policies._start_recycling(self.ctx,
                                                      reservation_id)
        first, second = self.claims('_claim_recycling')
        self.assertEqual([(self.host_id, 'compute-1')],
                         [tuple(row) for row in first])
        self.assertEqual([], second)
        self.clock.set(NOW + POLL)
        self.assertEqual([1, 0], [len(claimed) for claimed in
                                  self.claims('_claim_recycling')])


class ClaimSQLiteTest(_ClaimTests, base.DBTestCase):
    pass


class ClaimPostgreSQLTest(_ClaimTests, base.PostgreSQLTestCase):
    pass


class ClaimMySQLTest(_ClaimTests, base.MySQLTestCase):
    pass
