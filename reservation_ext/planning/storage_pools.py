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

"""Free storage pools for a window, their bookings, and the active ones.

A pool is booked whole by one lease at a time
(:class:`~reservation_ext.planning.exclusive.Bookable`). A request's
``pool_properties`` select on what Cinder reported for the pool and
``resource_properties`` on its extra capabilities
(:data:`~reservation_ext.planning.capabilities.REPORTED_POOL_TARGET`,
:data:`~reservation_ext.planning.capabilities.POOL_TARGET`). Free pools
come by name; a request gets ``max`` of them when that many are free,
else as many as are, and none (409) when fewer than ``min`` are. Its
pools' capacity leaves the reservable GB of volume reservations for the
window (:func:`reservation_ext.planning.volume_capacity.check_pools`).

A schedule proposal holds the pools a booking would take then
(:func:`timeline`, :class:`Pools`: as many free pools, whose GB leave the
volume reservations room) until it expires (:func:`write_holds`); the
holds count against volume reservations as bookings do, and a lease made
from the proposal books the pools held (:func:`book_held`).
"""

import bisect
import itertools
import uuid

import sqlalchemy as sa

from db import tables
from reservation_ext import exceptions
from reservation_ext.planning import exclusive
from reservation_ext.planning import timelines
from reservation_ext.planning import volume_capacity
from reservation_ext.states import ReservationStatus
from reservation_ext.store import storage_pools as store

STORAGE_POOLS = tables.STORAGE_POOLS
STORAGE_POOL_ALLOCATIONS = tables.STORAGE_POOL_ALLOCATIONS
LEASES = tables.LEASES
LEASE_PROJECTS = tables.LEASE_PROJECTS
RESERVATIONS = tables.RESERVATIONS

POOLS = exclusive.Bookable(
    STORAGE_POOLS, STORAGE_POOL_ALLOCATIONS,
    STORAGE_POOL_ALLOCATIONS.c.pool_id, (STORAGE_POOLS.c.name,),
    store.bump_generations_if_unchanged, store.reschedule)


def allocate(session, reservation_id, window, busy, conditions, wanted,
             reservable_gb):
    """Book ``wanted`` (``(min, max)``) free matching pools for ``window``.

    :param window: ``(start, end)``
    :param conditions: SQL conditions on the pools (compiled queries)
    :param reservable_gb: ``[reservation] volume_reservable_gb``
    :returns: the ids of the booked pools.
    :raises NotEnoughResources: fewer than ``min`` are free, or their
        capacity is promised to volume reservations; nothing is written.
    :raises ConcurrentUpdate: another writer booked one first.
    """
    (start, end), (minimum, maximum) = window, wanted
    free = POOLS.find_free(session, start, end, busy, conditions,
                           columns=[STORAGE_POOLS.c.total_capacity_gb])
    if len(free) < minimum:
        raise exceptions.NotEnoughResources(
            '%d of the %d storage pools wanted (min) are not free from %s '
            'to %s: %d registered pools match the request and are free '
            'then.' % (minimum - len(free), minimum, start, end, len(free)))
    chosen = free[:maximum]
    volume_capacity.check_pools(session, reservable_gb, start, end,
                                sum(row[2] or 0 for row in chosen), busy)
    POOLS.claim(session, chosen)
    store.book(session, [{'id': str(uuid.uuid4()), 'pool_id': row[0],
                          'reservation_id': reservation_id,
                          'start_date': start, 'end_date': end}
                         for row in chosen])
    return [row[0] for row in chosen]


def book_held(session, reservation_id, window, busy, pool_ids):
    """Book the pools a proposal holds, ``pool_ids``, for ``window``.

    No check of the volume reservations: the holds have counted against
    them since the proposal was made (as bookings, in
    :func:`reservation_ext.planning.volume_capacity.read_held`), so none
    could take their GB since.

    :param busy: ignores the proposal's holds.
    :raises NotEnoughResources: one is not free (the proposal expired).
    :raises ConcurrentUpdate: as for :func:`allocate`.
    """
    start, end = window
    free = POOLS.find_free(session, start, end, busy, item_ids=pool_ids)
    if not pool_ids or len(free) < len(pool_ids):
        raise exceptions.NotEnoughResources(
            'The storage pools the proposal held are not free from %s to '
            '%s.' % (start, end))
    POOLS.claim(session, free)
    store.book(session, [{'id': str(uuid.uuid4()), 'pool_id': row[0],
                          'reservation_id': reservation_id,
                          'start_date': start, 'end_date': end}
                         for row in free])
    return [row[0] for row in free]


def check_capacity(session, reservation_id, window, busy, reservable_gb):
    """Check a reservation's pools against volume reservations in ``window``.

    As :func:`allocate` does, for the pools it booked (an update that
    moves them); ``busy`` ignores the reservation.

    :raises NotEnoughResources: volume reservations count on their GB.
    """
    gigabytes = session.scalar(
        sa.select(sa.func.coalesce(sa.func.sum(
            STORAGE_POOLS.c.total_capacity_gb), 0))
        .where(STORAGE_POOLS.c.id.in_(POOLS.booked(session,
                                                   reservation_id))))
    volume_capacity.check_pools(session, reservable_gb, *window, gigabytes,
                                busy)


def pools_of(session, reservation_ids):
    """Return ``{reservation_id: [pool name]}``, names in order; one query."""
    bookings = STORAGE_POOL_ALLOCATIONS.c
    found = {reservation_id: [] for reservation_id in reservation_ids}
    for reservation_id, name in session.execute(
            sa.select(bookings.reservation_id, STORAGE_POOLS.c.name)
            .join(STORAGE_POOLS, STORAGE_POOLS.c.id == bookings.pool_id)
            .where(bookings.reservation_id.in_(reservation_ids))
            .order_by(STORAGE_POOLS.c.name)):
        found[reservation_id].append(name)
    return found


def reservable_names(session):
    """Return the names of every registered pool."""
    return set(session.scalars(sa.select(STORAGE_POOLS.c.name)))


def open_to(session, reservation_id, project_id, now):
    """Return the names of the pools a volume of ``reservation_id`` may use.

    Those booked by the active reservation for a window that holds
    ``now``, when ``project_id`` owns its lease or shares it; none
    otherwise (a reservation of another project, or not active).
    """
    bookings = STORAGE_POOL_ALLOCATIONS.c
    shared = sa.exists().where(
        LEASE_PROJECTS.c.lease_id == RESERVATIONS.c.lease_id,
        LEASE_PROJECTS.c.project_id == project_id)
    return set(session.scalars(
        sa.select(STORAGE_POOLS.c.name)
        .select_from(STORAGE_POOL_ALLOCATIONS)
        .join(STORAGE_POOLS, STORAGE_POOLS.c.id == bookings.pool_id)
        .join(RESERVATIONS, RESERVATIONS.c.id == bookings.reservation_id)
        .join(LEASES, LEASES.c.id == RESERVATIONS.c.lease_id)
        .where(bookings.reservation_id == reservation_id,
               RESERVATIONS.c.status == ReservationStatus.ACTIVE,
               bookings.start_date <= now, bookings.end_date > now,
               sa.or_(LEASES.c.project_id == project_id, shared))))


class Pools(exclusive.Schedule):
    """Pools as a timeline: ``need`` free, and their GB leave volumes room.

    As :func:`allocate` books them: the first ``most`` free pools (at
    least ``need``), refused where the volume reservations that overlap
    the window would hold more than the reservable GB left beside the
    pools booked or held then, these included
    (:func:`~reservation_ext.planning.volume_capacity.check_pools`).

    :param gigabytes: ``{pool_id: GB}`` of the matching pools.
    :param reservable_gb: ``[reservation] volume_reservable_gb``.
    :param held: ``(everything, pools)``: what holds GB over the span
        (:func:`~reservation_ext.planning.volume_capacity.read_held`),
        and of that what the pools booked or held (every pool's) do,
        both ``[timelines.Allocation]`` of GB.
    """

    def __init__(self, span, allocations, wanted, generations, gigabytes,
                 reservable_gb, held):
        super().__init__(span, allocations, *wanted, generations,
                         write_holds)
        self.gigabytes, self.reservable_gb = gigabytes, reservable_gb
        self._everything, self._pools = (list(part) for part in held)

    def _ends(self):
        """Return where pools are freed, and where GB are (no margin)."""
        return itertools.chain(super()._ends(), (
            a.end for a in self._everything))

    def _gb(self, allocations, start):
        """Return the GB of ``allocations`` that overlap a window at start.

        Windows that only touch do not overlap, as in
        :mod:`~reservation_ext.planning.volume_capacity`.
        """
        end = start + self.span.duration
        return sum(a.size for a in allocations
                   if a.start < end and a.end > start)

    def fits(self, start):
        """Return whether the pools a booking takes at ``start`` fit."""
        free = self.free_hosts(start)
        if len(free) < self.need:
            return False
        wanted = sum(self.gigabytes[pool] for pool in free[:self.most])
        pools = self._gb(self._pools, start)
        volumes = self._gb(self._everything, start) - pools
        return volumes <= max(0, self.reservable_gb - pools - wanted)

    def earliest(self, start):
        """Return the earliest fit at ``start`` or at a boundary after it.

        Every candidate is tried: more free pools may take more GB than
        volume reservations leave, so a fit is not found by counting
        free pools alone.
        """
        boundaries = self.boundaries()
        for candidate in [start] + boundaries[
                bisect.bisect_right(boundaries, start):]:
            if candidate > self.span.last:
                return None
            if self.fits(candidate):
                return candidate
        return None

    def take(self, start):
        """Hold the first ``most`` free pools at ``start``, and their GB."""
        pools = super().take(start)
        window = timelines.Allocation(
            start, start + self.span.duration,
            sum(self.gigabytes[pool] for pool in pools))
        self._everything.append(window)
        self._pools.append(window)
        self._freed_at(window.end)
        return pools


def timeline(session, span, busy, request, reservable_gb):
    """Return the timeline of the pools a request may use (:class:`Pools`).

    :param request: ``(conditions, (min, max))``.
    """
    conditions, wanted = request
    lower, upper = span.reach
    pools, allocations = POOLS.read_schedule(
        session, lower, upper, busy, conditions,
        columns=[STORAGE_POOLS.c.total_capacity_gb])
    bookings = STORAGE_POOL_ALLOCATIONS.c
    pools_held = [timelines.Allocation(*row) for row in session.execute(
        sa.select(bookings.start_date, bookings.end_date, sa.func.coalesce(
            STORAGE_POOLS.c.total_capacity_gb, 0))
        .join(STORAGE_POOLS, STORAGE_POOLS.c.id == bookings.pool_id)
        .where(bookings.start_date < upper, bookings.end_date > lower,
               *busy.counted(STORAGE_POOL_ALLOCATIONS)))]
    return Pools(
        span, allocations, wanted,
        {pool: row[0] for pool, row in pools.items()},
        {pool: row[1] or 0 for pool, row in pools.items()}, reservable_gb,
        (volume_capacity.read_held(session, lower, upper, busy),
         pools_held))


def write_holds(session, holds, generations):
    """Write proposals' holds of pools (:meth:`.Bookable.write_holds`)."""
    POOLS.write_holds(session, holds, generations, store.book)
