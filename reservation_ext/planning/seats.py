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

"""Seats: the slices of an instance-capacity reservation, one per server.

An instance-capacity reservation (``virtual:instance`` with ``amount``,
or ``flavor:instance``) books ``amount`` slices with the planner: one
host_allocations row each, a *seat*. Its ``server_id`` says who sits
there:

``NULL``
    the seat is free;
a claim token (a fresh UUID that is no server's)
    a boot is taking it (:func:`claim`);
a server UUID
    the server booted with the reservation's flavor sits there
    (:func:`bind`), and the scheduler pins it to the seat's host.

Claiming is a compare-and-swap: the free seats are read (skipping those
a concurrent claim has locked, so that concurrent boots do not fail
while seats are free), then one UPDATE takes them only if they are still
free, and a claim that got fewer than it asked for rolls back: two boots
never share a seat and never exceed ``amount``. Freeing a claim
(:func:`free`) or a server's seat (:func:`free_server`) sets it back to
NULL. The functions take the session of the caller's transaction;
those that write need a writer's.
"""

import collections
import math
import uuid

import sqlalchemy as sa

from db import tables
from reservation_ext import exceptions
from reservation_ext.store import allocations as store_allocations

ALLOCATIONS = tables.ALLOCATIONS
HOSTS = tables.HOSTS
INSTANCE_RESERVATIONS = tables.INSTANCE_RESERVATIONS
RESERVATIONS = tables.RESERVATIONS
LEASES = tables.LEASES
LEASE_PROJECTS = tables.LEASE_PROJECTS
STACK_RESERVATIONS = tables.STACK_RESERVATIONS
# The extra spec of a reservation's private flavor: the reservation id.
FLAVOR_SPEC = 'reservation:id'
# Blazar 18's, on the flavors of the reservations imported from Blazar
# once started, which keep Blazar's flavor until they end.
BLAZAR_FLAVOR_SPEC = 'aggregate_instance_extra_specs:reservation'
# The scheduler hint nova-api sets on the builds of one boot: the seats
# they took (the scheduler passes their hosts).
HINT = 'reservation_seats'

# The name of the stack a heat:stack reservation's start makes, and the
# scheduler hint in which Heat (stack_scheduler_hints) names the stacks
# of a server's path, the root stack's first.
STACK_NAME = 'reservation-%s'
STACK_HINT = 'heat_path_in_stack'
_STACK_PREFIX = STACK_NAME % ''

# What a boot with a reservation's flavor needs to know of it.
Capacity = collections.namedtuple('Capacity', (
    'reservation_id', 'lease_id', 'lease_status', 'start_date', 'end_date',
    'amount', 'server_group_id', 'projects'))


def capacity(session, reservation_id):
    """Get the :class:`Capacity` of an instance-capacity reservation, or None.

    A primary-key lookup; None for any other id (a one-server
    reservation, another type, or no reservation at all).
    """
    row = session.execute(
        sa.select(RESERVATIONS.c.id, LEASES.c.id, LEASES.c.status,
                  LEASES.c.start_date, LEASES.c.end_date,
                  INSTANCE_RESERVATIONS.c.amount,
                  INSTANCE_RESERVATIONS.c.server_group_id,
                  LEASES.c.project_id)
        .join(LEASES, LEASES.c.id == RESERVATIONS.c.lease_id)
        .join(INSTANCE_RESERVATIONS,
              INSTANCE_RESERVATIONS.c.reservation_id == RESERVATIONS.c.id)
        .where(RESERVATIONS.c.id == reservation_id,
               INSTANCE_RESERVATIONS.c.server_id.is_(None))).first()
    if row is None:
        return None
    shared = session.scalars(sa.select(LEASE_PROJECTS.c.project_id).where(
        LEASE_PROJECTS.c.lease_id == row[1])).all()
    return Capacity(*row[:7], projects=frozenset([row[7], *shared]))


def flavor_disk_gb(root_gb, ephemeral_gb, swap_mb):
    """Return the disk a server of a flavor takes on its host (GB).

    Root and ephemeral disk, and swap rounded up to whole GB, as the
    slices of a flavor's size count it.
    """
    return root_gb + ephemeral_gb + math.ceil(swap_mb / 1024)


def stack_reservation_id(path):
    """Return the reservation whose stack a server is of, or None.

    :param path: the server's ``heat_path_in_stack`` hint, a list of
        stack names from the root (or the root's name alone).
    """
    root = path[0] if isinstance(path, list) and path else path
    if isinstance(root, str) and root.startswith(_STACK_PREFIX):
        return root[len(_STACK_PREFIX):]
    return None


def stack_capacity(session, reservation_id):
    """Get the :class:`Capacity` of a heat:stack reservation, or None.

    It has no ``amount`` (its seats are of several sizes) and no server
    group.
    """
    row = session.execute(
        sa.select(RESERVATIONS.c.id, LEASES.c.id, LEASES.c.status,
                  LEASES.c.start_date, LEASES.c.end_date,
                  LEASES.c.project_id)
        .join(LEASES, LEASES.c.id == RESERVATIONS.c.lease_id)
        .join(STACK_RESERVATIONS,
              STACK_RESERVATIONS.c.reservation_id == RESERVATIONS.c.id)
        .where(RESERVATIONS.c.id == reservation_id)).first()
    if row is None:
        return None
    return Capacity(*row[:5], amount=None, server_group_id=None,
                    projects=frozenset([row[5]]))


def claim(session, reservation_id, count, size=None):
    """Take ``count`` free seats of a reservation for one boot.

    :param size: only seats of this ``(vcpus, memory_mb, disk_gb)``
        (a stack's seats are of its servers' several flavors).

    :returns: ``(token, seat_ids)``: the claim's token, to :func:`bind`
        and :func:`free` with, and the seats taken.
    :raises Conflict: fewer than ``count`` seats are free; nothing is
        kept (the caller's writer transaction rolls back).
    """
    token = str(uuid.uuid4())
    free = (ALLOCATIONS.c.reservation_id == reservation_id,
            ALLOCATIONS.c.server_id.is_(None),
            *(column == value for column, value in zip(
                (ALLOCATIONS.c.vcpus, ALLOCATIONS.c.memory_mb,
                 ALLOCATIONS.c.disk_gb), size or ())))
    # SKIP LOCKED: concurrent boots pick different free seats instead of
    # all racing for the first (SQLite has no row locks; it serializes
    # writers anyway).
    chosen = session.scalars(
        sa.select(ALLOCATIONS.c.id).where(*free).order_by(ALLOCATIONS.c.id)
        .limit(count).with_for_update(skip_locked=True)).all()
    taken = store_allocations.claim_seats(
        session, reservation_id, chosen, token) if chosen else 0
    if taken != count:
        raise exceptions.Conflict(_in_use(session, reservation_id, count,
                                          taken))
    seat_ids = session.scalars(sa.select(ALLOCATIONS.c.id).where(
        ALLOCATIONS.c.server_id == token).order_by(ALLOCATIONS.c.id)).all()
    return token, seat_ids


def _in_use(session, reservation_id, count, taken):
    """Say why a claim failed; ``taken``: the seats it took (rolled back)."""
    amount, used = session.execute(
        sa.select(sa.func.count(), sa.func.count(ALLOCATIONS.c.server_id))
        .where(ALLOCATIONS.c.reservation_id == reservation_id)).one()
    used -= taken
    if used >= amount:
        return ('All %d instances of reservation %s are in use.'
                % (amount, reservation_id))
    return ('Reservation %s has %d of its %d instances free, %d asked for.'
            % (reservation_id, amount - used, amount, count))


def bind(session, token, seat_id, server_id):
    """Give a claimed seat to the server that takes it."""
    store_allocations.seat_server(session, token, seat_id, server_id)


def free(session, token):
    """Free the seats of a claim that no server took."""
    store_allocations.free_seats(session, token)


def free_server(session, server_id):
    """Free the seat of a deleted server (if it had one)."""
    store_allocations.free_seats(session, server_id)


def seat_hosts(session, reservation_id, server_id, seat_ids=()):
    """Return the hypervisor hostnames of a server's seat and of ``seat_ids``.

    Only seats of ``reservation_id`` that a server took count.
    """
    return set(session.scalars(
        sa.select(HOSTS.c.hypervisor_hostname)
        .join(ALLOCATIONS, ALLOCATIONS.c.host_id == HOSTS.c.id)
        .where(ALLOCATIONS.c.reservation_id == reservation_id,
               ALLOCATIONS.c.server_id.is_not(None),
               sa.or_(ALLOCATIONS.c.server_id == server_id,
                      ALLOCATIONS.c.id.in_(list(seat_ids))))))


def servers(session, reservation_id):
    """List the ids in a reservation's taken seats (servers or live claims)."""
    return session.scalars(
        sa.select(ALLOCATIONS.c.server_id).where(
            ALLOCATIONS.c.reservation_id == reservation_id,
            ALLOCATIONS.c.server_id.is_not(None))
        .order_by(ALLOCATIONS.c.id)).all()


def hosts(session, reservation_id):
    """Return ``{hypervisor_hostname: seats}`` of a reservation."""
    return dict(session.execute(
        sa.select(HOSTS.c.hypervisor_hostname, sa.func.count())
        .join(ALLOCATIONS, ALLOCATIONS.c.host_id == HOSTS.c.id)
        .where(ALLOCATIONS.c.reservation_id == reservation_id)
        .group_by(HOSTS.c.hypervisor_hostname)).all())
