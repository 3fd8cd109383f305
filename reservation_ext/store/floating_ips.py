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

"""The one writer of the floating IP tables.

``floatingips`` (:data:`db.tables.FLOATINGIPS`): the reservable addresses
the inventory registers and removes (or an import of Blazar's brings
over), and their generations, which the
planner moves with a compare-and-swap for every booking, as it does for
hosts. ``floatingip_reservations``: what a ``virtual:floatingip``
reservation asked for. ``floatingip_allocations``: the bookings of the
addresses by reservations and their holds by schedule proposals.
"""

import json

import sqlalchemy as sa

from db import api as db_api
from db import tables

FLOATINGIPS = tables.FLOATINGIPS
FLOATINGIP_RESERVATIONS = tables.FLOATINGIP_RESERVATIONS
FLOATINGIP_ALLOCATIONS = tables.FLOATINGIP_ALLOCATIONS


def register(session, values):
    """Add a reservable floating IP (a ``floatingips`` row's columns)."""
    session.execute(sa.insert(FLOATINGIPS).values(
        reservable=True, generation=0, **values))


def import_floatingips(session, rows):
    """Register the addresses an import brings over, ids kept (one INSERT).

    :param rows: ``floatingips`` rows, each with the same keys.
    """
    if rows:
        session.execute(sa.insert(FLOATINGIPS),
                        [dict(row, generation=0) for row in rows])


def unregister(session, floatingip_id):
    """Remove a floating IP and its past bookings; none counts any more.

    :returns: whether the address was there.
    """
    session.execute(sa.delete(FLOATINGIP_ALLOCATIONS).where(
        FLOATINGIP_ALLOCATIONS.c.floatingip_id == floatingip_id))
    return session.execute(sa.delete(FLOATINGIPS).where(
        FLOATINGIPS.c.id == floatingip_id)).rowcount == 1


def bump_generations_if_unchanged(session, generations):
    """Bump addresses still at the read generation: the compare-and-swap.

    See :func:`db.api.bump_if_unchanged`.

    :param generations: ``{floatingip_id: generation}`` as read.
    :returns: whether every address matched.
    """
    return db_api.bump_if_unchanged(session, sa.update(FLOATINGIPS),
                                    generations)


def add_request(session, reservation_id, network_id, amount, required):
    """Record what a floating IP reservation asks for.

    :param required: the addresses asked for by name (a list).
    """
    session.execute(sa.insert(FLOATINGIP_RESERVATIONS).values(
        id=reservation_id, reservation_id=reservation_id,
        network_id=network_id, amount=amount,
        required_floatingips=json.dumps(required) if required else None))


def import_requests(session, rows):
    """Record what imported floating IP reservations asked for (one INSERT).

    :param rows: ``floatingip_reservations`` rows, each with the same keys
        (``required_floatingips`` as :func:`add_request` writes it).
    """
    if rows:
        session.execute(sa.insert(FLOATINGIP_RESERVATIONS), rows)


def change_request(session, reservation_id, amount, required):
    """Record a reservation's new amount and required addresses."""
    session.execute(
        sa.update(FLOATINGIP_RESERVATIONS)
        .where(FLOATINGIP_RESERVATIONS.c.reservation_id == reservation_id)
        .values(amount=amount, required_floatingips=json.dumps(required)
                if required else None))


def book(session, rows):
    """Write bookings or holds of addresses (rows, in one statement)."""
    session.execute(sa.insert(FLOATINGIP_ALLOCATIONS), rows)


def import_bookings(session, rows):
    """Write imported bookings; their addresses' generations move first.

    As for every booking: a planner that read these addresses before
    loses its compare-and-swap.
    """
    if rows:
        session.execute(
            sa.update(FLOATINGIPS)
            .where(FLOATINGIPS.c.id.in_({row['floatingip_id']
                                         for row in rows}))
            .values(generation=FLOATINGIPS.c.generation + 1))
        book(session, rows)


def reschedule(session, reservation_id, start, end):
    """Move every booking of a reservation to ``[start, end)``."""
    session.execute(
        sa.update(FLOATINGIP_ALLOCATIONS)
        .where(FLOATINGIP_ALLOCATIONS.c.reservation_id == reservation_id)
        .values(start_date=start, end_date=end))


def release(session, allocation_ids):
    """Delete bookings; their addresses' generations move first."""
    _release(session, FLOATINGIP_ALLOCATIONS.c.id.in_(allocation_ids))


def drop_holds(session, proposal_ids):
    """Delete the holds of proposals (ids, or a SELECT of them)."""
    _release(session, FLOATINGIP_ALLOCATIONS.c.proposal_id.in_(
        proposal_ids))


def _release(session, which):
    session.execute(
        sa.update(FLOATINGIPS).where(FLOATINGIPS.c.id.in_(
            sa.select(FLOATINGIP_ALLOCATIONS.c.floatingip_id).where(which)))
        .values(generation=FLOATINGIPS.c.generation + 1))
    session.execute(sa.delete(FLOATINGIP_ALLOCATIONS).where(which))
