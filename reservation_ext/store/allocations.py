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


"""The one writer of ``host_allocations``: bookings, holds, seats, moves.

A row of :data:`db.tables.ALLOCATIONS` is a whole host or a slice of one
for a window, owned by a reservation (a booking) or by a proposal (a
hold, until it expires). The planner books, moves and releases them
(:mod:`reservation_ext.planning.planner`); an instance-capacity
reservation's rows are seats that boots claim and servers take
(:mod:`reservation_ext.planning.seats`); the host monitor moves bookings
off failed hosts (:mod:`reservation_ext.planning.healing`) and keeps the
moves' claims; the reclaim claims bookings and records them reclaimed
(:mod:`reservation_ext.engine.reclaim`); proposals drop their holds.

Deleting allocations frees capacity: the hosts' generations move first
(:func:`reservation_ext.store.hosts.bump_generations`), as for every
change of a host's allocations, except for the holds of expired
proposals, which count for nothing already.
"""

import sqlalchemy as sa

from db import api as db_api
from db import tables
from reservation_ext.store import hosts as store_hosts

ALLOCATIONS = tables.ALLOCATIONS


def book(session, rows):
    """Write allocations: the bookings of a reservation, or holds.

    :param rows: host_allocations rows (dicts with every column the
        table needs), written in one statement.
    """
    session.execute(sa.insert(ALLOCATIONS), rows)


def reschedule(session, reservation_id, start, end):
    """Move every allocation of a reservation to ``[start, end)``."""
    session.execute(
        sa.update(ALLOCATIONS)
        .where(ALLOCATIONS.c.reservation_id == reservation_id)
        .values(start_date=start, end_date=end))


def release(session, reservation_id):
    """Delete a reservation's allocations; its hosts become free."""
    _release(session, ALLOCATIONS.c.reservation_id == reservation_id)


def release_gained(session, reservation_id, start):
    """Delete the allocations of a reservation that start after ``start``.

    The hosts it gained in an extension, when it moves back.
    """
    _release(session, sa.and_(ALLOCATIONS.c.reservation_id == reservation_id,
                              ALLOCATIONS.c.start_date > start))


def drop_holds(session, proposal_ids):
    """Delete the holds of proposals; their hosts become free.

    :param proposal_ids: ids, or a SELECT of them.
    """
    _release(session, ALLOCATIONS.c.proposal_id.in_(proposal_ids))


def drop_expired_holds(session, proposal_ids):
    """Delete the holds of expired proposals (a list of their ids).

    They count for nothing already: no host generation moves. The ids
    are a list, not a SELECT: with one, the database may scan every
    allocation rather than use the index of the few that are holds.
    """
    session.execute(sa.delete(ALLOCATIONS).where(
        ALLOCATIONS.c.proposal_id.in_(proposal_ids)))


def forget_host(session, host_id):
    """Delete every allocation of a host that is being removed.

    Past ones only: the caller checked that none counts any more.
    """
    session.execute(sa.delete(ALLOCATIONS).where(
        ALLOCATIONS.c.host_id == host_id))


def _release(session, which):
    store_hosts.bump_generations(
        session, sa.select(ALLOCATIONS.c.host_id).where(which))
    session.execute(sa.delete(ALLOCATIONS).where(which))


def claim_seats(session, reservation_id, seat_ids, token):
    """Take the seats ``seat_ids`` of a reservation for a boot's claim.

    Each seat only if it is still free: a seat another boot took since
    it was read is not taken twice.

    :returns: how many seats this call took.
    """
    return session.execute(
        sa.update(ALLOCATIONS).where(
            ALLOCATIONS.c.id.in_(seat_ids),
            ALLOCATIONS.c.reservation_id == reservation_id,
            ALLOCATIONS.c.server_id.is_(None))
        .values(server_id=token)).rowcount


def seat_server(session, token, seat_id, server_id):
    """Give a seat claimed under ``token`` to the server that takes it."""
    session.execute(sa.update(ALLOCATIONS).where(
        ALLOCATIONS.c.id == seat_id, ALLOCATIONS.c.server_id == token)
        .values(server_id=server_id))


def free_seats(session, holder):
    """Free the seats that ``holder`` (a claim's token or a server) has."""
    session.execute(sa.update(ALLOCATIONS).where(
        ALLOCATIONS.c.server_id == holder).values(server_id=None))


def move_booking(session, allocation_id, from_host, to_host, start,
                 claimed_until=None):
    """Move a booking from a failed host to its replacement from ``start``.

    Only if it is still on ``from_host``: of two healers, one moves it.

    :param claimed_until: for a started reservation, the claim on the
        Nova side of the move: the row keeps ``moved_from`` until
        :func:`finish_moves`.
    :returns: whether this call moved it.
    """
    values = {'host_id': to_host, 'start_date': start}
    if claimed_until is not None:
        values.update(moved_from=from_host, move_claimed_until=claimed_until)
    return session.execute(
        sa.update(ALLOCATIONS)
        .where(ALLOCATIONS.c.id == allocation_id,
               ALLOCATIONS.c.host_id == from_host)
        .values(**values)).rowcount == 1


def expired_moves(now):
    """Return SQL: a moved booking whose Nova side's claim expired."""
    return sa.and_(ALLOCATIONS.c.moved_from.is_not(None),
                   ALLOCATIONS.c.move_claimed_until < now)


def claim_expired_moves(session, now, until):
    """Take over the moves whose claim expired at ``now``, until ``until``.

    Row by row, so that of two engines each move is one's
    (:func:`db.api.update_each`).

    :returns: the ids of the bookings this call claimed.
    """
    return db_api.update_each(session, sa.update(ALLOCATIONS).where(
        expired_moves(now)).values(move_claimed_until=until))


def finish_moves(session, allocation_ids):
    """Record that Nova saw the moves of these bookings (claims dropped)."""
    session.execute(
        sa.update(ALLOCATIONS)
        .where(ALLOCATIONS.c.id.in_(allocation_ids))
        .values(moved_from=None, move_claimed_until=None))


def claim_for_reclaim(session, booking_ids, recheck, until):
    """Hold bookings for the reclaim until ``until``; return them.

    :param booking_ids: a SELECT of the bookings' ids.
    :param recheck: an SQL condition on host_allocations that the UPDATE
        checks again: on PostgreSQL a concurrent claimer waits for our
        row locks and then tests it against what we committed.
    :returns: rows of ``(id, host_id, start_date, reservation_id)``.
    """
    return db_api.update_returning(
        session, sa.update(ALLOCATIONS)
        .where(ALLOCATIONS.c.id.in_(booking_ids), recheck)
        .values(reclaim_claimed_until=until),
        ALLOCATIONS.c.id, ALLOCATIONS.c.host_id, ALLOCATIONS.c.start_date,
        ALLOCATIONS.c.reservation_id).all()


def mark_reclaimed(session, allocation_id, start):
    """Record a booking reclaimed for its start ``start``; drop its claim.

    Not if it moved to another start since: it is reclaimed again.
    """
    session.execute(
        sa.update(ALLOCATIONS)
        .where(ALLOCATIONS.c.id == allocation_id,
               ALLOCATIONS.c.start_date == start)
        .values(reclaimed_for=start, reclaim_claimed_until=None))
