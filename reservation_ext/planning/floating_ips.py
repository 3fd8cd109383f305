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

"""Free reservable floating IPs for a window, and their bookings.

An address is free for ``[start, end)`` when none of its allocations that
count (:class:`~reservation_ext.planning.planner.Busy`: bookings, and
proposal holds until they expire) overlaps ``[start - cleaning_time, end
+ cleaning_time)``. The search is one statement over the
(floatingip_id, start_date, end_date, expires_at) index.

No address is ever in two overlapping leases, also with concurrent
writers: every booking moves the booked addresses' generations with a
compare-and-swap (:func:`reservation_ext.store.floating_ips.
bump_generations_if_unchanged`), as the planner does for hosts; a writer
that lost the race raises
:class:`~reservation_ext.exceptions.ConcurrentUpdate` and its transaction
is rerun. Nothing here calls Neutron.
"""

import dataclasses
import uuid

import sqlalchemy as sa

from db import tables
from reservation_ext import dates
from reservation_ext import exceptions
from reservation_ext.planning import timelines
from reservation_ext.store import floating_ips as store

FLOATINGIPS = tables.FLOATINGIPS
FLOATINGIP_ALLOCATIONS = tables.FLOATINGIP_ALLOCATIONS
_JOIN = FLOATINGIPS.c.id == FLOATINGIP_ALLOCATIONS.c.floatingip_id


class Addresses(timelines.WholeHosts):
    """A network's addresses as a timeline: each address is one "host".

    What :func:`read_schedule` read; availability shows the counts of free
    addresses only, not which. A proposal's holds of them are written by
    :meth:`write_holds`, not as hosts.
    """

    def write_holds(self, session, holds, generations):
        """Write proposals' holds of the addresses (the module's function)."""
        write_holds(session, holds, generations)

    def timeline(self, start, end):
        """Return the steps of free addresses over ``[start, end)``."""
        steps, _by_address = super().timeline(start, end)
        return steps, {}


@dataclasses.dataclass(frozen=True)
class Address:
    """A reservable floating IP as the planner reads it."""

    id: str
    address: str
    generation: int


def _overlapping(start, end, busy, allocations=FLOATINGIP_ALLOCATIONS):
    """SQL conditions: an allocation that counts overlaps the window."""
    return [allocations.c.floatingip_id == FLOATINGIPS.c.id,
            allocations.c.start_date < end + busy.margin,
            allocations.c.end_date > start - busy.margin,
            *busy.counted(allocations)]


def free_addresses(session, network_id, start, end, busy, addresses=None,
                   limit=None):
    """Return the reservable addresses of a network free in ``[start, end)``.

    :param addresses: only these addresses (text), when given.
    :param limit: at most this many.
    :returns: :class:`Address` es, in the order of their address text.
    """
    query = (sa.select(FLOATINGIPS.c.id, FLOATINGIPS.c.floating_ip_address,
                       FLOATINGIPS.c.generation)
             .where(FLOATINGIPS.c.floating_network_id == network_id,
                    FLOATINGIPS.c.reservable,
                    ~sa.exists().where(*_overlapping(start, end, busy)))
             .order_by(FLOATINGIPS.c.floating_ip_address,
                       FLOATINGIPS.c.id).limit(limit))
    if addresses is not None:
        query = query.where(FLOATINGIPS.c.floating_ip_address.in_(addresses))
    return [Address(*row) for row in session.execute(query)]


def count_registered(session, network_id):
    """Count the reservable addresses of a network, busy or not."""
    return session.scalar(
        sa.select(sa.func.count()).select_from(FLOATINGIPS).where(
            FLOATINGIPS.c.floating_network_id == network_id,
            FLOATINGIPS.c.reservable))


def allocate(session, owner, network_id, start, end, amount, required,
             busy):
    """Book ``amount`` addresses of a network, ``required`` among them.

    :param owner: a :class:`~reservation_ext.planning.planner.Owner`.
    :param required: addresses (text) that must be among those booked.
    :returns: the booked :class:`Address` es.
    :raises NotEnoughResources: a required address is not free (or not
        reservable), or fewer than ``amount`` are; nothing is written.
    :raises ConcurrentUpdate: another writer booked one of them first.
    """
    chosen = free_addresses(session, network_id, start, end, busy,
                            addresses=required) if required else []
    missing = sorted(set(required) - {row.address for row in chosen})
    if missing:
        raise exceptions.NotEnoughResources(
            'required_floatingips: %s %s not free on network %s from %s '
            'to %s.' % (', '.join(missing), 'is' if len(missing) == 1
                        else 'are', network_id, _text(start), _text(end)))
    more = amount - len(chosen)
    if more > 0:
        others = [row for row in free_addresses(
            session, network_id, start, end, busy,
            limit=more + len(chosen)) if row.address not in required]
        chosen += others[:more]
    if len(chosen) < amount:
        raise exceptions.NotEnoughResources(
            'amount: %d floating IP(s) wanted on network %s from %s to %s, '
            '%d free.' % (amount, network_id, _text(start), _text(end),
                          len(chosen)))
    _book(session, owner, chosen, start, end)
    return chosen


def booked(session, reservation_id):
    """Return the addresses a reservation books, by address text.

    ``(allocation_id, Address)`` pairs.
    """
    rows = session.execute(
        sa.select(FLOATINGIP_ALLOCATIONS.c.id, FLOATINGIPS.c.id,
                  FLOATINGIPS.c.floating_ip_address,
                  FLOATINGIPS.c.generation)
        .join(FLOATINGIPS, _JOIN)
        .where(FLOATINGIP_ALLOCATIONS.c.reservation_id == reservation_id)
        .order_by(FLOATINGIPS.c.floating_ip_address))
    return [(row[0], Address(*row[1:])) for row in rows]


def held(session, proposal_id, item):
    """Return the addresses (text) item ``item`` of a proposal holds."""
    return session.scalars(
        sa.select(FLOATINGIPS.c.floating_ip_address)
        .join(FLOATINGIP_ALLOCATIONS, _JOIN)
        .where(FLOATINGIP_ALLOCATIONS.c.proposal_id == proposal_id,
               FLOATINGIP_ALLOCATIONS.c.proposal_item == item)
        .order_by(FLOATINGIPS.c.floating_ip_address)).all()


def move(session, reservation_id, network_id, start, end, busy):
    """Move a reservation's bookings to ``[start, end)``, on its addresses.

    :raises NotEnoughResources: naming the addresses booked by another
        reservation in the new window; nothing is changed.
    :raises ConcurrentUpdate: as for :func:`allocate`.
    """
    mine = [address for _id, address in booked(session, reservation_id)]
    if not mine:
        return
    free = {row.id for row in free_addresses(
        session, network_id, start, end,
        dataclasses.replace(busy, ignore_reservation=reservation_id),
        addresses=[row.address for row in mine])}
    taken = [row.address for row in mine if row.id not in free]
    if taken:
        raise exceptions.NotEnoughResources(
            'Cannot move the reservation to %s - %s: floating IP(s) %s '
            'are booked then.' % (_text(start), _text(end),
                                  ', '.join(taken)))
    _bump(session, mine)
    store.reschedule(session, reservation_id, start, end)


def release(session, allocation_ids):
    """Delete bookings (by allocation id); their addresses are free again."""
    if allocation_ids:
        store.release(session, allocation_ids)


def latest_end(session, reservation_id, busy):
    """Return the latest end a reservation's addresses are free until.

    The first allocation of another owner on one of its addresses that
    starts at or after its end, minus the cleaning time; None when
    nothing is booked after it.
    """
    ours = FLOATINGIP_ALLOCATIONS.alias('ours')
    mine = ours.c.reservation_id == reservation_id
    first = session.scalar(
        sa.select(sa.func.min(FLOATINGIP_ALLOCATIONS.c.start_date)).where(
            FLOATINGIP_ALLOCATIONS.c.floatingip_id.in_(
                sa.select(ours.c.floatingip_id).where(mine)),
            FLOATINGIP_ALLOCATIONS.c.start_date >= sa.select(
                sa.func.max(ours.c.end_date)).where(mine).scalar_subquery(),
            *dataclasses.replace(
                busy, ignore_reservation=reservation_id).counted(
                    FLOATINGIP_ALLOCATIONS)))
    return None if first is None else first - busy.margin


def read_schedule(session, network_id, lower, upper, busy):
    """Read a network's reservable addresses and their allocations.

    For the timelines of proposals and availability: two statements.

    :returns: ``({floatingip_id: generation}, {floatingip_id:
        [timelines.Allocation]})``, every address in both.
    """
    addresses = dict(session.execute(
        sa.select(FLOATINGIPS.c.id, FLOATINGIPS.c.generation)
        .where(FLOATINGIPS.c.floating_network_id == network_id,
               FLOATINGIPS.c.reservable)
        .order_by(FLOATINGIPS.c.floating_ip_address)).all())
    allocations = {fip_id: [] for fip_id in addresses}
    for row in session.execute(
            sa.select(FLOATINGIP_ALLOCATIONS.c.floatingip_id,
                      FLOATINGIP_ALLOCATIONS.c.start_date,
                      FLOATINGIP_ALLOCATIONS.c.end_date)
            .where(FLOATINGIP_ALLOCATIONS.c.floatingip_id.in_(addresses),
                   FLOATINGIP_ALLOCATIONS.c.start_date < upper,
                   FLOATINGIP_ALLOCATIONS.c.end_date > lower,
                   *busy.counted(FLOATINGIP_ALLOCATIONS))):
        # The timeline widens them by the cleaning time itself.
        allocations[row.floatingip_id].append(timelines.Allocation(
            row.start_date, row.end_date))
    return addresses, allocations


def write_holds(session, holds, generations):
    """Write proposals' holds of addresses, CAS on the generations read.

    :param holds: ``(owner, floatingip_id, start, end)`` tuples.
    :param generations: ``{floatingip_id: generation}`` as the search
        read them.
    :raises ConcurrentUpdate: another writer changed one of them since.
    """
    fip_ids = {fip_id for _owner, fip_id, _start, _end in holds}
    if not store.bump_generations_if_unchanged(
            session, {fip_id: generations[fip_id] for fip_id in fip_ids}):
        raise exceptions.ConcurrentUpdate()
    store.book(session, [_allocation(owner, fip_id, start, end)
                         for owner, fip_id, start, end in holds])


def _book(session, owner, chosen, start, end):
    _bump(session, chosen)
    store.book(session, [_allocation(owner, row.id, start, end)
                         for row in chosen])


def _bump(session, addresses):
    if not store.bump_generations_if_unchanged(
            session, {row.id: row.generation for row in addresses}):
        raise exceptions.ConcurrentUpdate()


def _allocation(owner, fip_id, start, end):
    return {'id': str(uuid.uuid4()), 'floatingip_id': fip_id,
            'reservation_id': owner.reservation_id,
            'proposal_id': owner.proposal_id,
            'proposal_item': owner.proposal_item,
            'expires_at': owner.expires_at,
            'start_date': start, 'end_date': end}


def _text(when):
    return when.strftime(dates.BLAZAR_DATE_FORMAT)
