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

"""The reservation pools as the scheduler sees them.

Every reservable host is in a pool: the free pool, or the pool of the
active lease that holds it. A scheduling request without a reservation
hint may only use hosts outside every pool; a request that names an
active reservation may only use that reservation's hosts, and only for the
lease's owner and the projects it is shared with. A host that recycles
(its reservation ended with ``on_end`` ``recycle`` and instances are still
on it) takes no new instance at all: it is in no pool, not even in that of
a later lease that already holds it.

:class:`Snapshot` holds all of that in sets, so that a filter decides per
host with one set lookup. :class:`SnapshotCache` keeps one snapshot per
process and reloads it only when the ``pool_state`` generation moved:
every writer transaction (:func:`db.api.writer`) that changes what
:func:`load` reads (a host added or removed, a lease's or reservation's
status or a lease's projects changed, a lease deleted) bumps it when it
commits, as :data:`db.models.POOL_WRITES` says. Bookings do not.
"""

import collections
import threading

import sqlalchemy as sa

from db import api as db_api
from db import tables
from reservation_ext import context
from reservation_ext.states import LeaseStatus
from reservation_ext.states import ReservationStatus

POOL_STATE = tables.POOL_STATE
HOSTS = tables.HOSTS
ALLOCATIONS = tables.ALLOCATIONS
RESERVATIONS = tables.RESERVATIONS
LEASES = tables.LEASES
LEASE_PROJECTS = tables.LEASE_PROJECTS
RECYCLING = tables.RECYCLING

# Lease statuses in which the hosts of its active reservations take
# instances: not while it starts, ends or is being deleted.
_USABLE = (LeaseStatus.ACTIVE,)

_EMPTY = frozenset()


_GENERATION = sa.select(POOL_STATE.c.generation).where(POOL_STATE.c.id == 1)


def generation(session):
    """Return the current pool generation (0 before the first change)."""
    return session.execute(_GENERATION).scalar() or 0


Pool = collections.namedtuple('Pool', 'hosts projects')


class Snapshot:
    """Hold the pools as they were at one generation.

    :ivar reservable: hypervisor hostnames of every reservable host.
    :ivar pools: ``{reservation_id: Pool(hosts, projects)}`` of the
        reservations whose hosts take instances now.
    :ivar recycling: hypervisor hostnames of the hosts that recycle; in
        no pool.
    """

    def __init__(self, generation, reservable, pools, recycling=_EMPTY):
        self.generation = generation
        self.reservable = reservable
        self.pools = pools
        self.recycling = recycling

    def hosts_for(self, reservation_id, project_id):
        """Return the hosts a request of ``project_id`` may use by the hint.

        Empty when the reservation is not active or the project may not
        use it.
        """
        pool = self.pools.get(reservation_id)
        if pool is None or project_id not in pool.projects:
            return _EMPTY
        return pool.hosts


def load(session):
    """Read a :class:`Snapshot` of the pools."""
    current = generation(session)
    reservable = frozenset(session.scalars(
        sa.select(HOSTS.c.hypervisor_hostname)))
    active = (sa.select(RESERVATIONS.c.id, LEASES.c.id.label('lease_id'),
                        LEASES.c.project_id)
              .join(LEASES, LEASES.c.id == RESERVATIONS.c.lease_id)
              .where(RESERVATIONS.c.status == ReservationStatus.ACTIVE,
                     LEASES.c.status.in_(_USABLE))
              .subquery())
    recycling = frozenset(session.scalars(
        sa.select(HOSTS.c.hypervisor_hostname)
        .join(RECYCLING, RECYCLING.c.host_id == HOSTS.c.id)))
    hosts = collections.defaultdict(set)
    for reservation_id, hostname in session.execute(
            sa.select(active.c.id, HOSTS.c.hypervisor_hostname)
            .join(ALLOCATIONS, ALLOCATIONS.c.reservation_id == active.c.id)
            .join(HOSTS, HOSTS.c.id == ALLOCATIONS.c.host_id)):
        hosts[reservation_id].add(hostname)
    projects = collections.defaultdict(set)
    for lease_id, project_id in session.execute(
            sa.select(LEASE_PROJECTS.c.lease_id, LEASE_PROJECTS.c.project_id)
            .where(LEASE_PROJECTS.c.lease_id.in_(
                sa.select(active.c.lease_id)))):
        projects[lease_id].add(project_id)
    pools = {
        row.id: Pool(frozenset(hosts[row.id]) - recycling,
                     frozenset(projects[row.lease_id] | {row.project_id}))
        for row in session.execute(sa.select(active))}
    return Snapshot(current, reservable, pools, recycling)


class SnapshotCache:
    """Keep the latest :class:`Snapshot`; reload it when the generation moves.

    Costs one small SELECT per call while nothing changed.
    """

    def __init__(self):
        self._snapshot = Snapshot(-1, _EMPTY, {})
        self._lock = threading.Lock()

    def get(self):
        """Return the current snapshot, reloaded if the generation moved."""
        current = db_api.read_generation(POOL_STATE)
        if current == self._snapshot.generation:
            return self._snapshot
        ctx = context.get_admin_context()
        with self._lock, db_api.context_manager.reader.using(ctx) as session:
            if generation(session) != self._snapshot.generation:
                self._snapshot = load(session)
            return self._snapshot
