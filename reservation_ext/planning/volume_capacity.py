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

"""Reservable volume capacity: how many GB leases may hold at once.

The operator makes ``[reservation] volume_reservable_gb`` GB of the
cloud's block storage reservable. A ``virtual:volume`` reservation of
``size_gb`` for ``[start, end)`` is granted when ``size_gb`` plus the GB
of every other volume reservation (and of the volumes of every stack
reservation, :mod:`reservation_ext.planning.stacks`) whose lease
overlaps the window (windows that only touch do not overlap) is at most
that. Summing every
overlapping reservation, rather than the peak at any one moment, is
conservative: two reservations that overlap the window but not each other
both count. It keeps the check one SQL statement, whatever the number of
leases, and a grant never depends on how the others are spread inside
the window.

A storage pool booked by a ``storage:pool`` lease takes its whole
capacity (Cinder's ``total_capacity_gb`` when the pool was registered;
nothing when Cinder reported no number) out of the reservable GB for its
window, as does one a schedule proposal holds until it expires: it
counts as held here, and a pool is not booked where volume
reservations would then hold more than is left (:func:`check_pools`).

Concurrent writers cannot both fit in the last GB: :func:`check` first
bumps the one row of ``volume_capacity_state``, which on PostgreSQL (and
MySQL) holds its row lock until the transaction ends, so the next writer
waits there and then sums what the first committed. On SQLite the
transaction began as a writer (:func:`db.api.writer`), which serializes
writers already.
"""

import datetime

import sqlalchemy as sa

from db import api as db_api
from db import tables
from reservation_ext import exceptions
from reservation_ext.planning import timelines
from reservation_ext.states import ReservationStatus

VOLUME_RESERVATIONS = tables.VOLUME_RESERVATIONS
RESERVATIONS = tables.RESERVATIONS
LEASES = tables.LEASES
PROPOSALS = tables.PROPOSALS
VOLUME_STATE = tables.VOLUME_STATE
STORAGE_POOLS = tables.STORAGE_POOLS
STACK_RESERVATIONS = tables.STACK_RESERVATIONS
STORAGE_POOL_ALLOCATIONS = tables.STORAGE_POOL_ALLOCATIONS


def reserved_gb(session, start, end, busy):
    """Return the GB held in ``[start, end)``.

    By the volume reservations whose leases overlap it and the live
    holds of proposals that do. Reservations that ended (``deleted``)
    hold nothing any more. ``busy`` (a
    :class:`~reservation_ext.planning.planner.Busy`) says which holds are
    live and what to ignore.
    """
    return sum(allocation.size for allocation in read_held(
        session, start, end, busy))


def read_held(session, lower, upper, busy):
    """Return what holds GB in ``[lower, upper)``: ``[Allocation]``.

    The allocations are :class:`timelines.Allocation`.

    One statement: the volume reservations of the leases that overlap,
    the proposals whose live holds do, and the storage pools booked then.
    """
    return [timelines.Allocation(*row) for row in session.execute(
        sa.union_all(*_volume_holds(lower, upper, busy),
                     _pool_holds(lower, upper, busy)))]


def _volume_holds(lower, upper, busy):
    """SELECTs of what holds volume GB in a window, but for storage pools.

    The volume reservations and the stack reservations (their volumes'
    GB) whose leases overlap it, and the live proposal holds that do.
    """
    conditions = [LEASES.c.start_date < upper, LEASES.c.end_date > lower,
                  RESERVATIONS.c.status != ReservationStatus.DELETED]
    if busy.ignore_reservation is not None:
        conditions.append(RESERVATIONS.c.id != busy.ignore_reservation)
    reservations = [
        sa.select(LEASES.c.start_date, LEASES.c.end_date, size)
        .select_from(size.table)
        .join(RESERVATIONS, RESERVATIONS.c.id == size.table.c.reservation_id)
        .join(LEASES, LEASES.c.id == RESERVATIONS.c.lease_id)
        .where(*conditions, size > 0)
        for size in (VOLUME_RESERVATIONS.c.size_gb,
                     STACK_RESERVATIONS.c.volume_gb)]
    holds = (sa.select(PROPOSALS.c.start_date, PROPOSALS.c.end_date,
                       PROPOSALS.c.volume_gb)
             .where(PROPOSALS.c.start_date < upper,
                    PROPOSALS.c.end_date > lower,
                    PROPOSALS.c.expires_at > busy.now,
                    PROPOSALS.c.volume_gb > 0,
                    PROPOSALS.c.id != (busy.ignore_proposal or '')))
    return (*reservations, holds)


def _pool_holds(lower, upper, busy):
    """A SELECT of the storage pools booked or held in ``[lower, upper)``.

    Bookings, and the holds of schedule proposals until they expire
    (NULL-safe on the reservation and proposal ``busy`` ignores).
    """
    bookings = STORAGE_POOL_ALLOCATIONS.c
    conditions = [bookings.start_date < upper, bookings.end_date > lower,
                  *busy.counted(STORAGE_POOL_ALLOCATIONS)]
    return (sa.select(bookings.start_date, bookings.end_date,
                      sa.func.coalesce(STORAGE_POOLS.c.total_capacity_gb, 0))
            .select_from(STORAGE_POOL_ALLOCATIONS)
            .join(STORAGE_POOLS, STORAGE_POOLS.c.id == bookings.pool_id)
            .where(*conditions))


def check_pools(session, reservable_gb, start, end, pools_gb, busy):
    """Make sure pools of ``pools_gb`` leave the volume reservations room.

    Volume reservations overlapping ``[start, end)`` may hold at most
    what the pools booked then, these included, leave of the reservable
    GB. Takes the capacity lock first, as :func:`check`.

    :raises NotEnoughResources: they would not; the message says why.
    """
    lock(session)
    volumes = sum(row[2] for row in session.execute(
        sa.union_all(*_volume_holds(start, end, busy))))
    pools = sum(row[2] for row in session.execute(
        _pool_holds(start, end, busy)))
    left = max(0, reservable_gb - pools - pools_gb)
    if volumes > left:
        raise exceptions.NotEnoughResources(
            'The storage pools would take %d GB of the %d GB reservable '
            '([reservation] volume_reservable_gb) from %s to %s, where '
            'volume reservations already hold %d GB of it.'
            % (pools_gb, reservable_gb, start, end, volumes))


def check(session, reservable_gb, start, end, size_gb, busy):
    """Make sure ``size_gb`` more fit in ``[start, end)``.

    Takes the capacity lock first; call it before writing the
    reservation, in the same :func:`db.api.writer` transaction.

    :raises NotEnoughResources: they do not fit; the message says why.
    """
    lock(session)
    held = reserved_gb(session, start, end, busy)
    if held + size_gb > reservable_gb:
        raise exceptions.NotEnoughResources(
            'Not enough volume capacity: %d GB wanted from %s to %s, but '
            'reservations overlapping that window already hold %d of the '
            '%d GB reservable ([reservation] volume_reservable_gb).'
            % (size_gb, start, end, held, reservable_gb))


def latest_end(session, reservable_gb, start, size_gb, busy):
    """Return the latest end that ``size_gb`` from ``start`` can have.

    As :func:`check` counts (every reservation and hold that overlaps the
    window), a window grows until the first of them whose start it
    reaches would not fit with the others. ``start`` if nothing fits;
    None if every end does.
    """
    held = sorted(read_held(session, start, datetime.datetime.max, busy))
    used = size_gb + sum(a.size for a in held if a.start <= start)
    if used > reservable_gb:
        return start
    for allocation in (a for a in held if a.start > start):
        used += allocation.size
        if used > reservable_gb:
            return allocation.start
    return None


def lock(session):
    """Serialize the capacity checks of concurrent transactions."""
    db_api.bump_counter(session, VOLUME_STATE)
