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

"""Free network segments for a window, and their bookings, in SQL.

A segment is free for ``[start, end)`` when none of its bookings overlaps
``[start - cleaning_time, end + cleaning_time)``, as a host. The search
is one statement: the request's capability queries compiled against the
segments (:data:`reservation_ext.planning.capabilities.NETWORK_SEGMENTS`)
and the busy test on network_allocations, served by its (network_id,
start_date, end_date) index. The lowest segment id of the first network
type and physical network comes first.

No segment is ever booked twice, also with concurrent writers: a booking
bumps ``network_segments.generation`` with an UPDATE that only matches
the generation the search read, as the planner does for hosts
(:mod:`reservation_ext.planning.planner`); a writer that lost the race
raises :class:`~reservation_ext.exceptions.ConcurrentUpdate` and its
transaction is rerun.
"""

import dataclasses
import uuid

import sqlalchemy as sa

from db import tables
from reservation_ext import exceptions
from reservation_ext.store import network_segments as store

NETWORK_SEGMENTS = tables.NETWORK_SEGMENTS
NETWORK_ALLOCATIONS = tables.NETWORK_ALLOCATIONS


def overlapping(start, end, busy):
    """Return SQL conditions: a booking of the segment row overlaps.

    :param busy: the planner's :class:`~reservation_ext.planning.planner.
        Busy`: its cleaning time, and the reservation it ignores.
    """
    conditions = [NETWORK_ALLOCATIONS.c.network_id == NETWORK_SEGMENTS.c.id,
                  NETWORK_ALLOCATIONS.c.start_date < end + busy.margin,
                  NETWORK_ALLOCATIONS.c.end_date > start - busy.margin]
    if busy.ignore_reservation is not None:
        conditions.append(
            NETWORK_ALLOCATIONS.c.reservation_id != busy.ignore_reservation)
    return conditions


def find_free(session, start, end, busy, conditions=(), network_ids=None):
    """Return ``(network_id, generation)`` of the free matching segments.

    :param conditions: SQL conditions on network_segments (the compiled
        ``network_properties`` and ``resource_properties``).
    :param network_ids: only consider these segments.
    """
    where = [*conditions, ~sa.exists().where(*overlapping(start, end, busy))]
    if network_ids is not None:
        where.append(NETWORK_SEGMENTS.c.id.in_(network_ids))
    return [tuple(row) for row in session.execute(
        sa.select(NETWORK_SEGMENTS.c.id, NETWORK_SEGMENTS.c.generation)
        .where(*where)
        .order_by(NETWORK_SEGMENTS.c.network_type,
                  NETWORK_SEGMENTS.c.physical_network,
                  NETWORK_SEGMENTS.c.segment_id))]


def allocate(session, reservation_id, start, end, busy, conditions=()):
    """Book the first free matching segment for ``[start, end)``.

    :returns: the id of the booked segment.
    :raises NotEnoughResources: none is free; nothing is written.
    :raises ConcurrentUpdate: another writer booked it first.
    """
    free = find_free(session, start, end, busy, conditions)
    if not free:
        raise exceptions.NotEnoughResources(
            'No network segment matching the request is free from %s to '
            '%s.' % (start, end))
    network_id, generation = free[0]
    _bump(session, {network_id: generation})
    store.book(session, {'id': str(uuid.uuid4()), 'network_id': network_id,
                         'reservation_id': reservation_id,
                         'start_date': start, 'end_date': end})
    return network_id


def move(session, reservation_id, start, end, busy):
    """Move a reservation's booking to ``[start, end)`` on its segment.

    ``busy`` need not ignore the reservation: this does.

    :raises NotEnoughResources: another booking holds the segment then.
    """
    booked = booked_segment(session, reservation_id)
    free = find_free(session, start, end, _ignoring(busy, reservation_id),
                     network_ids=[booked])
    if not free:
        raise exceptions.NotEnoughResources(
            'Cannot move the reservation to %s - %s: its network segment '
            'is booked then.' % (start, end))
    _bump(session, dict(free))
    store.reschedule(session, reservation_id, start, end)


def latest_end(session, reservation_id, busy):
    """Return how far a reservation's booking can be extended, or None.

    The first other booking of its segment that starts at or after its
    end, minus the cleaning time; None when there is none.
    """
    mine = session.execute(
        sa.select(NETWORK_ALLOCATIONS.c.network_id,
                  NETWORK_ALLOCATIONS.c.end_date)
        .where(NETWORK_ALLOCATIONS.c.reservation_id == reservation_id)).first()
    if mine is None:
        return None
    first = session.scalar(
        sa.select(sa.func.min(NETWORK_ALLOCATIONS.c.start_date)).where(
            NETWORK_ALLOCATIONS.c.network_id == mine[0],
            NETWORK_ALLOCATIONS.c.start_date >= mine[1],
            NETWORK_ALLOCATIONS.c.reservation_id != reservation_id))
    return None if first is None else first - busy.margin


def booked_segment(session, reservation_id):
    """Return the id of the segment a reservation booked (or None)."""
    return session.scalar(sa.select(NETWORK_ALLOCATIONS.c.network_id).where(
        NETWORK_ALLOCATIONS.c.reservation_id == reservation_id))


def is_held(session, network_id, now):
    """Return how many bookings hold a segment now or later."""
    return session.scalar(sa.select(sa.func.count()).where(
        NETWORK_ALLOCATIONS.c.network_id == network_id,
        NETWORK_ALLOCATIONS.c.end_date > now))


def _ignoring(busy, reservation_id):
    return dataclasses.replace(busy, ignore_reservation=reservation_id)


def _bump(session, generations):
    if not store.bump_generations_if_unchanged(session, generations):
        raise exceptions.ConcurrentUpdate()
