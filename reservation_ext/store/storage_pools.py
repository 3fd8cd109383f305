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

"""The one writer of the storage pools, their requests and their bookings.

``storage_pools`` (:data:`db.tables.STORAGE_POOLS`): the Cinder pools the
inventory registers, with what Cinder reported for them then (also one
``storage_pool_reported_capabilities`` row per scalar key, for queries),
and removes. ``storage_pool_extra_capabilities``: the extra capabilities
an admin gives a pool, replaced as a whole. ``storage_pool_reservations``
and ``storage_pool_allocations``: what a ``storage:pool`` reservation
asked for, and the pools booked for its window (or held by schedule
proposals).
"""

import sqlalchemy as sa

from db import api as db_api
from db import tables
from reservation_ext.store import hosts as store_hosts

STORAGE_POOLS = tables.STORAGE_POOLS
STORAGE_POOL_CAPABILITIES = tables.STORAGE_POOL_CAPABILITIES
STORAGE_POOL_REPORTED = tables.STORAGE_POOL_REPORTED
STORAGE_POOL_RESERVATIONS = tables.STORAGE_POOL_RESERVATIONS
STORAGE_POOL_ALLOCATIONS = tables.STORAGE_POOL_ALLOCATIONS

# The longest name and value a capability row holds.
_NAME_MAX, _VALUE_MAX = 64, 255


def register_pool(session, values, capabilities, reported):
    """Add a reservable pool (``values``: its columns and ``id``).

    :param capabilities: its extra capabilities, ``{name: value}``.
    :param reported: what Cinder reported for it, ``{name: value}``: its
        scalar values whose name and text fit are kept for queries.
    """
    session.execute(sa.insert(STORAGE_POOLS).values(**values))
    set_capabilities(session, values['id'], capabilities)
    # Booleans as Cinder's own capability filters write them: "True".
    rows = _rows(values['id'], {
        name: str(value) for name, value in reported.items()
        if isinstance(value, (str, int, float)) and len(name) <= _NAME_MAX
        and len(str(value)) <= _VALUE_MAX})
    if rows:
        session.execute(sa.insert(STORAGE_POOL_REPORTED), rows)


def set_capabilities(session, pool_id, capabilities):
    """Replace the extra capabilities of a pool by ``{name: value}``."""
    session.execute(sa.delete(STORAGE_POOL_CAPABILITIES).where(
        STORAGE_POOL_CAPABILITIES.c.pool_id == pool_id))
    rows = _rows(pool_id, {name: str(value)
                           for name, value in capabilities.items()})
    if rows:
        session.execute(sa.insert(STORAGE_POOL_CAPABILITIES), rows)


def mark_updated(session, pool_id, now):
    """Record that an admin changed a pool's extra capabilities."""
    session.execute(sa.update(STORAGE_POOLS)
                    .where(STORAGE_POOLS.c.id == pool_id)
                    .values(updated_at=now))


def unregister_pool(session, pool_id):
    """Remove a pool, its capabilities and its past bookings.

    The inventory refuses (409) a pool that current or future bookings
    hold before it calls this.
    """
    session.execute(sa.delete(STORAGE_POOL_ALLOCATIONS).where(
        STORAGE_POOL_ALLOCATIONS.c.pool_id == pool_id))
    session.execute(sa.delete(STORAGE_POOL_CAPABILITIES).where(
        STORAGE_POOL_CAPABILITIES.c.pool_id == pool_id))
    session.execute(sa.delete(STORAGE_POOL_REPORTED).where(
        STORAGE_POOL_REPORTED.c.pool_id == pool_id))
    session.execute(sa.delete(STORAGE_POOLS).where(
        STORAGE_POOLS.c.id == pool_id))


def bump_generations_if_unchanged(session, generations):
    """Bump pools still at the read generation (the planner's CAS).

    See :func:`db.api.bump_if_unchanged`.

    :param generations: ``{pool_id: generation}`` as the caller read.
    :returns: whether every pool matched.
    """
    return db_api.bump_if_unchanged(session, sa.update(STORAGE_POOLS),
                                    generations)


def record_request(session, values):
    """Record what a ``storage:pool`` reservation asked for (its columns)."""
    session.execute(sa.insert(STORAGE_POOL_RESERVATIONS).values(**values))


def book(session, rows):
    """Write bookings or holds of pools (storage_pool_allocations rows)."""
    session.execute(sa.insert(STORAGE_POOL_ALLOCATIONS), rows)


def drop_holds(session, proposal_ids):
    """Delete the holds of proposals (ids, or a SELECT of them).

    Their pools' generations move first: a planner that read them held
    loses its compare-and-swap, as for a released booking.
    """
    which = STORAGE_POOL_ALLOCATIONS.c.proposal_id.in_(proposal_ids)
    session.execute(
        sa.update(STORAGE_POOLS).where(STORAGE_POOLS.c.id.in_(
            sa.select(STORAGE_POOL_ALLOCATIONS.c.pool_id).where(which)))
        .values(generation=STORAGE_POOLS.c.generation + 1))
    session.execute(sa.delete(STORAGE_POOL_ALLOCATIONS).where(which))


def drop_expired_holds(session, proposal_ids):
    """Delete the holds of expired proposals (a list of their ids).

    They count for nothing already: no generation moves.
    """
    session.execute(sa.delete(STORAGE_POOL_ALLOCATIONS).where(
        STORAGE_POOL_ALLOCATIONS.c.proposal_id.in_(proposal_ids)))


def reschedule(session, reservation_id, start, end):
    """Move a reservation's bookings to ``[start, end)``."""
    session.execute(sa.update(STORAGE_POOL_ALLOCATIONS).where(
        STORAGE_POOL_ALLOCATIONS.c.reservation_id == reservation_id).values(
            start_date=start, end_date=end))


def _rows(pool_id, capabilities):
    return [{'pool_id': pool_id, 'name': name, 'value': value,
             'num_value': store_hosts.as_number(value)}
            for name, value in sorted(capabilities.items())]
