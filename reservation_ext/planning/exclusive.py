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

"""Items booked whole for a window, each by one booking at a time, in SQL.

Network segments and storage pools are booked so: an item is free for
``[start, end)`` when none of its allocations that count (bookings, and
the holds of schedule proposals until they expire:
:meth:`~reservation_ext.planning.planner.Busy.counted`) overlaps
``[start - cleaning_time, end + cleaning_time)``, as a host. The search
is one statement: the request's capability queries compiled against the
items (:mod:`reservation_ext.planning.capabilities`) and the busy test
on the allocations, served by their (item, start_date, end_date) index.
The timelines of proposals and availability read the same allocations
(:meth:`Bookable.read_schedule`).

No item is ever booked twice, also with concurrent writers: a booking
bumps the item's ``generation`` with an UPDATE that only matches the
generation the search read, as the planner does for hosts
(:mod:`reservation_ext.planning.planner`); a writer that lost the race
raises :class:`~reservation_ext.exceptions.ConcurrentUpdate` and its
transaction is rerun.
"""

import dataclasses
import typing
import uuid

import sqlalchemy as sa

from reservation_ext import exceptions
from reservation_ext.planning import timelines


@dataclasses.dataclass(frozen=True)
class Bookable:
    """One kind of item booked whole: its tables, and who writes them.

    :param items: the items' table (``id``, ``generation``)
    :param bookings: the bookings' table (``reservation_id``,
        ``start_date``, ``end_date`` and the item's column)
    :param item: the bookings' column naming the item
    :param order: the columns of ``items`` the free ones come in
    :param bump: the store's compare-and-swap of generations,
        ``bump(session, {id: generation})`` returning whether all matched
    :param reschedule: the store's move of a reservation's bookings,
        ``reschedule(session, reservation_id, start, end)``
    """

    items: sa.Table
    bookings: sa.Table
    item: sa.Column
    order: tuple
    bump: typing.Callable
    reschedule: typing.Callable

    def overlapping(self, start, end, busy):
        """Return SQL conditions: an allocation of the item row overlaps.

        :param busy: the planner's :class:`~reservation_ext.planning.
            planner.Busy`: its cleaning time, which holds are live, and
            the reservation or proposal it ignores.
        """
        bookings = self.bookings.c
        return [self.item == self.items.c.id,
                bookings.start_date < end + busy.margin,
                bookings.end_date > start - busy.margin,
                *busy.counted(self.bookings)]

    def find_free(self, session, start, end, busy, conditions=(),
                  item_ids=None, columns=()):
        """Return ``(id, generation, *columns)`` of the free matching items.

        :param conditions: SQL conditions on the items (compiled queries)
        :param item_ids: only consider these items
        :param columns: more columns of the items to return
        """
        where = [*conditions,
                 ~sa.exists().where(*self.overlapping(start, end, busy))]
        if item_ids is not None:
            where.append(self.items.c.id.in_(item_ids))
        return [tuple(row) for row in session.execute(
            sa.select(self.items.c.id, self.items.c.generation, *columns)
            .where(*where).order_by(*self.order))]

    def claim(self, session, free):
        """Bump the generations of the ``free`` rows found, or raise.

        :raises ConcurrentUpdate: another writer booked one since.
        """
        if not self.bump(session, {row[0]: row[1] for row in free}):
            raise exceptions.ConcurrentUpdate()

    def write_holds(self, session, holds, generations, write):
        """Write proposals' holds of items, CAS on the generations read.

        :param holds: ``(owner, item_id, start, end)`` tuples, ``owner``
            a :class:`~reservation_ext.planning.planner.Owner`.
        :param generations: ``{item_id: generation}`` as the search read
            them.
        :param write: the store's writer of the rows (the table's one
            owner).
        :raises ConcurrentUpdate: another writer changed one of them
            since.
        """
        self.claim(session, [(item, generations[item])
                             for item in sorted({hold[1] for hold in holds})])
        write(session, [
            {'id': str(uuid.uuid4()), self.item.key: item,
             'reservation_id': None, 'proposal_id': owner.proposal_id,
             'proposal_item': owner.proposal_item,
             'expires_at': owner.expires_at, 'start_date': start,
             'end_date': end}
            for owner, item, start, end in holds])

    def booked(self, session, reservation_id):
        """Return the ids of the items a reservation booked, in order."""
        return list(session.scalars(
            sa.select(self.item)
            .where(self.bookings.c.reservation_id == reservation_id)
            .order_by(self.item)))

    def move(self, session, reservation_id, start, end, busy):
        """Move a reservation's bookings to ``[start, end)`` on its items.

        ``busy`` need not ignore the reservation: this does.

        :raises NotEnoughResources: another booking holds one of its
            items then.
        """
        booked = self.booked(session, reservation_id)
        free = self.find_free(
            session, start, end,
            dataclasses.replace(busy, ignore_reservation=reservation_id),
            item_ids=booked)
        if len(free) < len(booked):
            raise exceptions.NotEnoughResources(
                'Cannot move the reservation to %s - %s: what it booked '
                'is booked then.' % (start, end))
        self.claim(session, free)
        self.reschedule(session, reservation_id, start, end)

    def latest_end(self, session, reservation_id, busy):
        """Return how far a reservation's bookings can be extended, or None.

        The first other booking of one of its items that starts at or
        after its end, minus the cleaning time; None when there is none.
        """
        bookings = self.bookings.c
        mine = session.execute(
            sa.select(self.item, bookings.end_date)
            .where(bookings.reservation_id == reservation_id)).all()
        if not mine:
            return None
        # The live holds of proposals stop it too.
        others = dataclasses.replace(busy, ignore_reservation=reservation_id)
        first = session.scalar(
            sa.select(sa.func.min(bookings.start_date)).where(
                self.item.in_([item for item, _ in mine]),
                bookings.start_date >= mine[0][1],
                *others.counted(self.bookings)))
        return None if first is None else first - busy.margin

    def is_held(self, session, item_id, now):
        """Return how many bookings and live holds hold an item from now."""
        expires_at = self.bookings.c.expires_at
        return session.scalar(sa.select(sa.func.count()).where(
            self.item == item_id, self.bookings.c.end_date > now,
            sa.or_(expires_at.is_(None), expires_at > now)))

    def count_matching(self, session, conditions=()):
        """Return how many items match ``conditions``, free or not."""
        return session.scalar(sa.select(sa.func.count()).select_from(
            self.items).where(*conditions))

    def read_schedule(self, session, lower, upper, busy, conditions=(),
                      columns=()):
        """Read the matching items and their allocations in a period.

        For the timelines of proposals and availability: two statements,
        the allocations those that count (``busy``) and overlap ``[lower,
        upper)``.

        :param columns: more columns of the items to read.
        :returns: ``(items, allocations)``: ``{item_id: (generation,
            *columns)}`` and ``{item_id: [timelines.Allocation]}``, both
            with every matching item, in the order free ones are taken.
        """
        items = {row[0]: tuple(row[1:]) for row in session.execute(
            sa.select(self.items.c.id, self.items.c.generation, *columns)
            .where(*conditions).order_by(*self.order))}
        allocations = {item: [] for item in items}
        bookings = self.bookings.c
        for item, start, end in session.execute(
                sa.select(self.item, bookings.start_date, bookings.end_date)
                .where(self.item.in_(
                    sa.select(self.items.c.id).where(*conditions)),
                    bookings.start_date < upper, bookings.end_date > lower,
                    *busy.counted(self.bookings))):
            # The timeline widens them by the cleaning time itself.
            allocations[item].append(timelines.Allocation(start, end))
        return items, allocations

    def held(self, session, proposal_id, proposal_item):
        """Return the ids of the items a proposal's item holds, in order."""
        return list(session.scalars(
            sa.select(self.item)
            .where(self.bookings.c.proposal_id == proposal_id,
                   self.bookings.c.proposal_item == proposal_item)
            .order_by(self.item)))


class Schedule(timelines.WholeHosts):
    """Items booked whole as a timeline: each item is one "host".

    What :meth:`Bookable.read_schedule` read; availability shows the
    counts of free items only, not which. A proposal's holds of them are
    written by ``write_holds(session, holds, generations)``, with
    ``holds`` ``(owner, item_id, start, end)`` tuples, rather than as
    hosts.
    """

    def __init__(self, span, allocations, need, most, generations,
                 write_holds):
        super().__init__(span, allocations, need, most,
                         generations=generations)
        self.write_holds = write_holds

    def timeline(self, start, end):
        """Return the steps of free items over ``[start, end)``."""
        steps, _by_item = super().timeline(start, end)
        return steps, {}
