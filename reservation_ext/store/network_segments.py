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

"""The one writer of the network segments, their requests and bookings.

``network_segments`` (:data:`db.tables.NETWORK_SEGMENTS`) and
``network_extra_capabilities``: the inventory adds, changes and removes
segments, the planner moves their generations (its compare-and-swap).
``network_reservations``: what a ``network`` reservation asked for, and
the Neutron network its start made. ``network_allocations``: the
bookings of the segments, and their holds by schedule proposals.
"""

import sqlalchemy as sa

from db import api as db_api
from db import tables
from reservation_ext.store import hosts as store_hosts

NETWORK_SEGMENTS = tables.NETWORK_SEGMENTS
NETWORK_CAPABILITIES = tables.NETWORK_CAPABILITIES
NETWORK_RESERVATIONS = tables.NETWORK_RESERVATIONS
NETWORK_ALLOCATIONS = tables.NETWORK_ALLOCATIONS


def add_segment(session, values, capabilities):
    """Add a reservable segment (``values``: its columns and ``id``)."""
    session.execute(sa.insert(NETWORK_SEGMENTS).values(generation=0, **values))
    set_capabilities(session, values['id'], capabilities)


def set_capabilities(session, network_id, capabilities):
    """Replace the extra capabilities of a segment by ``{name: value}``."""
    session.execute(sa.delete(NETWORK_CAPABILITIES).where(
        NETWORK_CAPABILITIES.c.network_id == network_id))
    rows = [{'network_id': network_id, 'name': name, 'value': str(value),
             'num_value': store_hosts.as_number(str(value))}
            for name, value in sorted(capabilities.items())]
    if rows:
        session.execute(sa.insert(NETWORK_CAPABILITIES), rows)


def mark_updated(session, network_id, now):
    """Record that an admin changed a segment's extra capabilities."""
    session.execute(sa.update(NETWORK_SEGMENTS)
                    .where(NETWORK_SEGMENTS.c.id == network_id)
                    .values(updated_at=now))


def remove_segment(session, network_id):
    """Delete a segment, its capabilities and its past bookings."""
    session.execute(sa.delete(NETWORK_ALLOCATIONS).where(
        NETWORK_ALLOCATIONS.c.network_id == network_id))
    session.execute(sa.delete(NETWORK_SEGMENTS).where(
        NETWORK_SEGMENTS.c.id == network_id))


def bump_generations_if_unchanged(session, generations):
    """Bump segments still at the read generation (the planner's CAS).

    See :func:`db.api.bump_if_unchanged`.

    :param generations: ``{network_id: generation}`` as the caller read.
    :returns: whether every segment matched.
    """
    return db_api.bump_if_unchanged(session, sa.update(NETWORK_SEGMENTS),
                                    generations)


def record_request(session, values):
    """Record what a ``network`` reservation asked for (its columns)."""
    session.execute(sa.insert(NETWORK_RESERVATIONS).values(**values))


def record_network(session, reservation_id, network_id):
    """Record the Neutron network a reservation's start made (or None)."""
    session.execute(sa.update(NETWORK_RESERVATIONS).where(
        NETWORK_RESERVATIONS.c.reservation_id == reservation_id).values(
            network_id=network_id))


def book(session, row):
    """Write one booking of a segment (a network_allocations row)."""
    session.execute(sa.insert(NETWORK_ALLOCATIONS).values(**row))


def hold(session, rows):
    """Write proposals' holds of segments (rows, in one statement)."""
    session.execute(sa.insert(NETWORK_ALLOCATIONS), rows)


def reschedule(session, reservation_id, start, end):
    """Move a reservation's booking to ``[start, end)``."""
    session.execute(sa.update(NETWORK_ALLOCATIONS).where(
        NETWORK_ALLOCATIONS.c.reservation_id == reservation_id).values(
            start_date=start, end_date=end))


def drop_holds(session, proposal_ids):
    """Delete the holds of proposals (ids, or a SELECT of them).

    Their segments' generations move first: a planner that read them
    held loses its compare-and-swap, as for a released booking.
    """
    which = NETWORK_ALLOCATIONS.c.proposal_id.in_(proposal_ids)
    session.execute(
        sa.update(NETWORK_SEGMENTS).where(NETWORK_SEGMENTS.c.id.in_(
            sa.select(NETWORK_ALLOCATIONS.c.network_id).where(which)))
        .values(generation=NETWORK_SEGMENTS.c.generation + 1))
    session.execute(sa.delete(NETWORK_ALLOCATIONS).where(which))


def drop_expired_holds(session, proposal_ids):
    """Delete the holds of expired proposals (a list of their ids).

    They count for nothing already: no generation moves.
    """
    session.execute(sa.delete(NETWORK_ALLOCATIONS).where(
        NETWORK_ALLOCATIONS.c.proposal_id.in_(proposal_ids)))
