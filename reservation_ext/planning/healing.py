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

"""Healing: the bookings on failed hosts moved to free replacements, in SQL.

A host is failed while ``computehosts.failed_at`` is set (the engine's
host monitor, :mod:`reservation_ext.engine.host_monitor`, sets it with
``reservable`` false, so no search of the planner finds the host). A
booking of a reservation on a failed host is *due* for healing when it
has not ended and starts within the healing interval. Its replacement is
a reservable host that matches the reservation's request (a
:class:`Request`, from the reservation's plugin) and is free, as the
planner counts, from ``max(start, now)`` to its end: a whole host for a
whole-host booking, the room of the slice for a slice.

The move is the booking's own row: ``host_id`` changes (and the start of
a started booking becomes now, the replacement's part of it), so the
row's seat, server and reclaim state go with it. It never double-books:
in one writer transaction, the row is moved with an UPDATE conditioned
on its failed host (two healers of one booking: the second moves no row)
and the replacement's generation is bumped with the planner's
compare-and-swap (two healers of two bookings onto one host: the second
fails); either failure raises
:class:`~reservation_ext.exceptions.ConcurrentUpdate` and the transaction
rolls back, to be rerun by :func:`db.api.retry_on_conflict`.
"""

import collections
import dataclasses
import datetime

import sqlalchemy as sa

from db import tables
from reservation_ext import exceptions
from reservation_ext.planning import planner
from reservation_ext.store import allocations as store_allocations

HOSTS = tables.HOSTS
ALLOCATIONS = tables.ALLOCATIONS

# A booking on a failed host: the row's columns the move needs.
Booking = collections.namedtuple(
    'Booking', 'id host_id start_date end_date whole_host size')
# A booking moved: its row, the failed host and the replacement.
Move = collections.namedtuple('Move', 'allocation_id from_host to_host')


@dataclasses.dataclass(frozen=True)
class Request:
    """What a replacement must be, as a reservation's plugin says.

    :param conditions: SQL conditions on computehosts (the request's
        compiled capability queries and constraints).
    :param usable: the hosts' usable size for slices
        (:class:`~reservation_ext.planning.host_capacity.Usable`).
    :param together: the slices on failed hosts move together, onto one
        host (affinity).
    :param apart: a slice moves to no host that has another of the
        reservation's slices (anti-affinity).
    """

    conditions: tuple = ()
    usable: object = planner.AS_IS
    together: bool = False
    apart: bool = False


def failed_hosts():
    """Return SQL: the ids of the failed hosts."""
    return sa.select(HOSTS.c.id).where(HOSTS.c.failed_at.is_not(None))


def due(now, healing_interval):
    """Return SQL conditions: a booking on a failed host to heal now.

    :param healing_interval: minutes ahead; 0 for every later start.
    """
    conditions = [ALLOCATIONS.c.reservation_id.is_not(None),
                  ALLOCATIONS.c.host_id.in_(failed_hosts()),
                  ALLOCATIONS.c.end_date > now]
    if healing_interval:
        conditions.append(ALLOCATIONS.c.start_date <= now + datetime.timedelta(
            minutes=healing_interval))
    return conditions


def bookings(session, reservation_id, now, healing_interval):
    """Return the reservation's bookings due for healing, by start then id."""
    return [Booking(row.id, row.host_id, row.start_date, row.end_date,
                    row.whole_host, (row.vcpus, row.memory_mb, row.disk_gb))
            for row in session.execute(
                sa.select(ALLOCATIONS)
                .where(ALLOCATIONS.c.reservation_id == reservation_id,
                       *due(now, healing_interval))
                .order_by(ALLOCATIONS.c.start_date, ALLOCATIONS.c.id))]


def groups(due_bookings, request):
    """Group bookings that move together: all (``together``) or one each."""
    if request.together and due_bookings:
        return [list(due_bookings)]
    return [[booking] for booking in due_bookings]


def replace(session, reservation_id, due_bookings, request, busy,
            track_until=None):
    """Move each of ``due_bookings`` to a replacement host when one is free.

    ``session`` is a :func:`db.api.writer` transaction's; ``busy`` the
    planner's busy test as of now.

    :param track_until: for a started reservation, the claim of the caller
        on the Nova side of the moves: the rows keep ``moved_from`` (the
        failed host) and ``move_claimed_until``.
    :returns: ``(moves, missing)``: the :class:`Move` of each booking
        moved, and the failed host ids of the bookings that found none.
    :raises ConcurrentUpdate: another writer moved one of the bookings or
        booked the replacement first.
    """
    moves, missing = [], []
    for group in groups(due_bookings, request):
        found = _find(session, reservation_id, group, request, busy)
        if found is None:
            missing += [booking.host_id for booking in group]
            continue
        host_id, generation = found
        for booking in group:
            _move(session, booking, host_id, busy.now, track_until)
            moves.append(Move(booking.id, booking.host_id, host_id))
        planner.bump_generations(session, [(host_id, generation)])
    return moves, missing


def _find(session, reservation_id, group, request, busy):
    """Find a replacement for ``group``: ``(host_id, generation)``, or None."""
    start = max(min(booking.start_date for booking in group), busy.now)
    end = max(booking.end_date for booking in group)
    conditions = list(request.conditions)
    if request.apart:
        conditions.append(HOSTS.c.id.not_in(
            sa.select(ALLOCATIONS.c.host_id).where(
                ALLOCATIONS.c.reservation_id == reservation_id)))
    if group[0].whole_host:
        free = planner.find_free_hosts(session, start, end, busy,
                                       max_count=1, conditions=conditions)
        return free[0] if free else None
    size = tuple(map(sum, zip(*(booking.size for booking in group))))
    # The tightest gap: a replacement slice takes no empty host that
    # another host can spare, as a new one would not.
    rooms = planner.slice_rooms(session, start, end, size, busy,
                                request.usable, conditions, tightest=True)
    for host_id, (generation, _room) in rooms.items():
        return host_id, generation
    return None


def _move(session, booking, host_id, now, track_until):
    """Move one booking's row, if it is still on its failed host."""
    if not store_allocations.move_booking(
            session, booking.id, booking.host_id, host_id,
            max(booking.start_date, now), track_until):
        raise exceptions.ConcurrentUpdate()


def on_failed_hosts(session, reservation_ids):
    """Map ``{reservation_id: [hypervisor_hostname]}``: failed hosts held.

    Every booking not ended on a host that is failed now, whether due or
    not (the lease view's ``missing_hosts`` of a degraded reservation).
    """
    held = collections.defaultdict(list)
    if not reservation_ids:
        return held
    for reservation_id, hostname in session.execute(
            sa.select(ALLOCATIONS.c.reservation_id,
                      HOSTS.c.hypervisor_hostname).distinct()
            .join(HOSTS, HOSTS.c.id == ALLOCATIONS.c.host_id)
            .where(ALLOCATIONS.c.reservation_id.in_(reservation_ids),
                   HOSTS.c.failed_at.is_not(None))
            .order_by(ALLOCATIONS.c.reservation_id,
                      HOSTS.c.hypervisor_hostname)):
        held[reservation_id].append(hostname)
    return held
