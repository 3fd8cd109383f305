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

"""The gap index (SQLite) names every host free of bookings, whatever wrote.

Rows written straight into the tables, as any writer (a cascade, a test)
may: bookings at odd seconds and microseconds, overlapping slices, holds,
deletions, moves, a hold made a booking, hosts added and deleted. After
each step, every host free of bookings in a window is among those the
index names; and a full pool's search, which reads it, finds exactly the
free hosts.
"""

import contextlib
import datetime
import random
import uuid

import sqlalchemy as sa

from db import host_gaps
from db import models
from reservation_ext import clock
from reservation_ext.planning import planner
from tests import base
from tests.functional import test_planner

T0 = datetime.datetime(2030, 1, 1)
HOSTS = models.ComputeHost.__table__
ALLOCATIONS = models.HostAllocation.__table__
PROPOSALS = models.Proposal.__table__


def at(seconds):
    """T0 plus ``seconds`` (a float: microseconds count)."""
    return T0 + datetime.timedelta(seconds=seconds)


class TestHostGaps(base.DBTestCase):

    def setUp(self):
        super().setUp()
        self.rng = random.Random(7)
        self.hosts = []
        self.add_hosts(12)
        with self.begin() as conn:
            conn.execute(sa.insert(PROPOSALS).values(
                id='proposal', request_id='request', project_id='p',
                start_date=T0, end_date=T0, expires_at=at(86400),
                reservations='[]', created_at=T0))

    @contextlib.contextmanager
    def begin(self):
        """A transaction that writes the rows straight, with a clock."""
        with self.engine.begin() as conn:
            conn.execution_options(**{models.CLOCK: clock.SYSTEM})
            yield conn

    def add_hosts(self, count):
        with self.begin() as conn:
            for _ in range(count):
                name = 'host-%s' % uuid.uuid4().hex[:8]
                self.hosts.append(conn.execute(sa.insert(HOSTS).values(
                    hypervisor_hostname=name, vcpus=8, memory_mb=8192,
                    local_gb=100, created_at=T0)).inserted_primary_key[0])

    def window(self):
        """A random window, in seconds from T0 (microseconds and all)."""
        start = self.rng.uniform(0, 40 * 3600)
        return start, start + self.rng.uniform(1, 8 * 3600)

    def book(self, count, hold=False):
        rows = []
        for _ in range(count):
            start, end = self.window()
            rows.append(dict(
                id=str(uuid.uuid4()), host_id=self.rng.choice(self.hosts),
                start_date=at(start), end_date=at(end),
                whole_host=self.rng.random() < 0.5,
                **({'proposal_id': 'proposal', 'proposal_item': 0,
                    'expires_at': at(3600)} if hold else
                   {'reservation_id': self.reservation()})))
        with self.begin() as conn:
            conn.execute(sa.insert(ALLOCATIONS), rows)

    def reservation(self):
        with self.begin() as conn:
            return test_planner.add_reservation(conn)

    def some_allocations(self, count):
        with self.engine.connect() as conn:
            ids = conn.scalars(sa.select(ALLOCATIONS.c.id)
                               .order_by(ALLOCATIONS.c.id)).all()
        return self.rng.sample(ids, min(count, len(ids)))

    def free_of_bookings(self, conn, start, end):
        """The hosts without a booking overlapping the window (the model)."""
        busy = set(conn.scalars(sa.select(ALLOCATIONS.c.host_id).where(
            ALLOCATIONS.c.expires_at.is_(None),
            ALLOCATIONS.c.start_date < at(end),
            ALLOCATIONS.c.end_date > at(start))))
        return set(conn.scalars(sa.select(HOSTS.c.id))) - busy

    def assert_every_free_host_is_named(self):
        with self.engine.connect() as conn:
            for _ in range(60):
                start, end = self.window()
                named = set(host_gaps.candidates(
                    conn, at(start), at(end), 10000))
                free = self.free_of_bookings(conn, start, end)
                self.assertEqual(set(), free - named, (start, end))

    def test_every_free_host_is_named_after_every_write(self):
        self.book(60)
        self.book(10, hold=True)
        self.assert_every_free_host_is_named()
        with self.begin() as conn:
            conn.execute(sa.delete(ALLOCATIONS).where(
                ALLOCATIONS.c.id.in_(self.some_allocations(15))))
        self.assert_every_free_host_is_named()
        with self.begin() as conn:
            for allocation_id in self.some_allocations(15):
                start, end = self.window()
                conn.execute(sa.update(ALLOCATIONS).where(
                    ALLOCATIONS.c.id == allocation_id).values(
                    host_id=self.rng.choice(self.hosts),
                    start_date=at(start), end_date=at(end)))
            # Holds made bookings.
            conn.execute(sa.update(ALLOCATIONS).where(
                ALLOCATIONS.c.proposal_id.is_not(None)).values(
                expires_at=None))
        self.assert_every_free_host_is_named()
        self.add_hosts(3)
        with self.begin() as conn:
            idle = conn.scalars(sa.select(HOSTS.c.id).where(
                ~sa.exists().where(ALLOCATIONS.c.host_id == HOSTS.c.id))
            ).first()
            if idle is not None:
                conn.execute(sa.delete(HOSTS).where(HOSTS.c.id == idle))
                self.hosts.remove(idle)
        self.book(30)
        self.assert_every_free_host_is_named()

    def test_made_again_for_the_rows_there(self):
        self.book(40)
        with self.begin() as conn:
            host_gaps.drop(conn)
        # Rows written while there is no index: making it reads them.
        self.book(20)
        with self.begin() as conn:
            host_gaps.create(conn)
        self.assert_every_free_host_is_named()

    def test_a_full_pool_search_finds_exactly_the_free_hosts(self):
        self.book(150)
        self.book(20, hold=True)
        busy = planner.Busy(T0)
        for _ in range(40):
            start, end = self.window()
            with self.engine.connect() as conn:
                expected = sorted(
                    self.free_of_bookings(conn, start, end) - set(
                        conn.scalars(sa.select(ALLOCATIONS.c.host_id).where(
                            ALLOCATIONS.c.expires_at > T0,
                            ALLOCATIONS.c.start_date < at(end),
                            ALLOCATIONS.c.end_date > at(start)))))
            with self.engine.connect() as conn:
                session = sa.orm.Session(bind=conn)
                found = [host for host, _generation in
                         planner.find_free_hosts(session, at(start), at(end),
                                                 busy)]
            self.assertEqual(expected, found, (start, end))
