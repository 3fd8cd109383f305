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

"""The planner: finds free hosts for a window and books them.

A host is free for ``[start, end)`` when none of its live allocations
(whole host or instance slice) overlaps ``[start - cleaning_time, end +
cleaning_time)``; windows that only touch do not overlap. An allocation
is a reservation's booking, or the hold of a schedule proposal, which is
live until it expires (:class:`Busy` says at which time the test is made
and which allocations it ignores). The search is one SQL statement
whatever the number of hosts and leases: the request's conditions on
computehosts (its capability queries compiled by
:func:`reservation_ext.planning.capabilities.compile`) and a busy test on
host_allocations (served by its (host_id, start_date, end_date,
expires_at) index) in one WHERE clause, ordered by the preference of
:mod:`reservation_ext.planning.preference` (``[power]`` host weights, the
hosts that are on first near the start; by host id when unset). On
SQLite a lookup of the gap index (:mod:`db.host_gaps`) comes first: when
it names few hosts (a full pool), the statement tests those only rather
than every host.

No host is ever booked twice, also with concurrent writers, as in
Placement: every change to a host's allocations bumps
``computehosts.generation`` with one UPDATE that only matches the hosts
still at the generation the search read. A writer that lost the race
updates fewer rows than it wants and raises :class:`ConcurrentUpdate`, and
its transaction rolls back; :func:`db.api.retry_on_conflict` reruns it.
Holds are allocations like the others, so a hold and a booking never
overlap either; a hold that expired is ignored by every test, so its
capacity is free again at once, and its row goes with its proposal. The
functions that book take the ``session`` of a :func:`db.api.writer`
transaction, which on SQLite also serializes the writers.
"""

import collections.abc
import dataclasses
import datetime
import math
import uuid

import sqlalchemy as sa

from db import host_gaps
from db import tables
from reservation_ext import exceptions
from reservation_ext.planning import host_capacity
from reservation_ext.planning import preference
from reservation_ext.planning import timelines
from reservation_ext.store import allocations as store_allocations
from reservation_ext.store import hosts as store_hosts

HOSTS = tables.HOSTS
ALLOCATIONS = tables.ALLOCATIONS
# A host counted as it is: no reserve, allocation ratios 1.
AS_IS = host_capacity.Usable()
# How many of the preferred hosts the first read of a whole-host schedule
# reads (:class:`Schedules`): a proposal takes a few hosts a few times.
FIRST_HOSTS = 256
# Fewer hosts than this with a gap that holds the window (a full pool):
# the search tests only them (:func:`_maybe_free`). More: it tests the
# hosts in the order of preference, and stops at the ones it wants.
GAP_HOSTS = 512


@dataclasses.dataclass(frozen=True)
class Busy:
    """What makes a host busy: the allocations that count, and the margin.

    :param now: holds that expired at this time do not count.
    :param cleaning_time: minutes kept free before and after a window.
    :param ignore_reservation: the bookings of this reservation do not
        count (to move it).
    :param ignore_proposal: the holds of this proposal do not count (to
        book what it holds).
    :param prefer: a :class:`~reservation_ext.planning.preference.
        Preference`: which free hosts a search takes first (by id by
        default).
    """

    now: datetime.datetime
    cleaning_time: int = 0
    ignore_reservation: str = None
    ignore_proposal: str = None
    prefer: preference.Preference = preference.Preference()

    @classmethod
    def from_conf(cls, now, conf, **ignore):
        """Return the busy test as ``conf`` sets it, as of ``now``.

        ``[reservation] cleaning_time`` and the ``[power]`` preference;
        ``ignore`` as for the constructor (``ignore_reservation``,
        ``ignore_proposal``).
        """
        return cls(now, conf.reservation.cleaning_time,
                   prefer=preference.Preference.from_conf(conf), **ignore)

    @property
    def margin(self):
        """Return the cleaning time as a timedelta."""
        return datetime.timedelta(minutes=self.cleaning_time)

    def counted(self, allocations=ALLOCATIONS):
        """Return SQL conditions: a row of ``allocations`` counts."""
        conditions = [sa.or_(allocations.c.expires_at.is_(None),
                             allocations.c.expires_at > self.now)]
        for column, ignored in ((allocations.c.reservation_id,
                                 self.ignore_reservation),
                                (allocations.c.proposal_id,
                                 self.ignore_proposal)):
            if ignored is not None:
                # NULL-safe: the other kind of allocation still counts.
                conditions.append(sa.func.coalesce(column, '') != ignored)
        return conditions

    def order_by(self, start, then=()):
        """Order computehosts (ORDER BY terms): the preferred free host first.

        For a window at ``start``; ``then`` are the caller's terms, before
        the host weight (:meth:`.preference.Preference.order_by`).
        """
        return self.prefer.order_by(self.now, start, then)


@dataclasses.dataclass(frozen=True)
class Owner:
    """Whose allocations the planner writes: a booking or a hold."""

    reservation_id: str = None
    proposal_id: str = None
    proposal_item: int = None
    expires_at: datetime.datetime = None

    @classmethod
    def hold(cls, proposal_id, item, expires_at):
        """Hold item ``item`` of a proposal's reservations until it expires."""
        return cls(proposal_id=proposal_id, proposal_item=item,
                   expires_at=expires_at)

    def columns(self):
        """Return the owner's columns of a host_allocations row."""
        return dataclasses.asdict(self)


def find_free_hosts(session, start, end, busy, max_count=None,
                    host_ids=None, conditions=()):
    """Find reservable hosts matching ``conditions``, free in ``[start, end)``.

    :param busy: a :class:`Busy`: which allocations count.
    :param max_count: return at most this many hosts.
    :param host_ids: only consider these hosts.
    :param conditions: SQL conditions on computehosts (a resource
        plugin's compiled constraints and capability queries).
    :returns: ``(host_id, generation)`` tuples, the preferred first
        (``busy.prefer``).
    """
    lower, upper = start - busy.margin, end + busy.margin
    starts_before = [ALLOCATIONS.c.host_id == HOSTS.c.id,
                     ALLOCATIONS.c.start_date < upper, *busy.counted()]
    # Of the host's allocations that start before the window ends (an
    # index range), the latest is the one that overlaps when any does
    # (unless instance slices nest). Testing it first proves a busy host
    # busy in one index step; only the hosts that pass it get their
    # history read by the exact test. coalesce: a host without
    # allocations passes. (Not coalesce(latest_end, lower): MariaDB types
    # a DATETIME coalesced with a parameter as a string, and compares
    # it as one.)
    latest_end = (sa.select(ALLOCATIONS.c.end_date).where(*starts_before)
                  .order_by(ALLOCATIONS.c.start_date.desc()).limit(1)
                  .scalar_subquery())
    is_busy = sa.or_(
        sa.func.coalesce(latest_end > lower, sa.false(), type_=sa.Boolean),
        sa.exists().where(*starts_before, ALLOCATIONS.c.end_date > lower))
    where = [HOSTS.c.reservable, *conditions, ~is_busy]
    if host_ids is None:
        host_ids = _maybe_free(session, lower, upper, busy)
    if host_ids is not None:
        where.insert(0, HOSTS.c.id.in_(host_ids))
    return [tuple(row) for row in session.execute(busy.prefer.first(
        (HOSTS.c.id, HOSTS.c.generation), where, max_count, busy.now,
        start))]


def _maybe_free(session, lower, upper, busy):
    """Return the hosts that may be free in ``[lower, upper)``, or None.

    From the gap index (:mod:`db.host_gaps`, SQLite), a superset of the
    hosts free of bookings, when it names fewer than :data:`GAP_HOSTS`:
    a full pool's search then tests those few instead of every host.
    None (test every host) without the index, when it names more (the
    search in the order of preference finds its hosts sooner), or when
    ``busy`` ignores a reservation, whose bookings are in the gaps.
    """
    if busy.ignore_reservation is not None or not host_gaps.present(
            session.get_bind()):
        return None
    hosts = host_gaps.candidates(session, lower, upper, GAP_HOSTS)
    return hosts if len(hosts) < GAP_HOSTS else None


def read_slice_schedules(session, span, busy, usable):
    """Read the reservable hosts' usable sizes and allocations, for slices.

    As :func:`read_schedules` with sizes, over what ``span`` reaches.

    :param usable: the hosts' :class:`.host_capacity.Usable` size.
    :returns: ``(capacity, allocations, generations)``: ``{host_id:
        (vcpus, memory_mb, disk_gb)}`` usable, in the order of
        preference; the allocations; ``{host_id: generation}``.
    """
    hosts, allocations = read_schedules(session, *span.reach, busy,
                                        sizes=True)
    # Sizes are whole numbers: a slice fits the usable size when it fits
    # its floor.
    capacity = {host: tuple(math.floor(value)
                            for value in usable.of(*row[1:]))
                for host, row in hosts.items()}
    return capacity, allocations, {host: row[0]
                                   for host, row in hosts.items()}


def read_schedules(session, lower, upper, busy, conditions=(),
                   sizes=False):
    """Read the reservable hosts matching ``conditions`` and their allocations.

    The hosts, and the allocations that count (``busy``) and overlap
    ``[lower, upper)``, for the timelines of
    :mod:`reservation_ext.planning.timelines`.

    :param sizes: also read the hosts' capacities and the slices' sizes.
    :returns: ``(hosts, allocations)``: ``{host_id: (generation, vcpus,
        memory_mb, local_gb)}`` (capacities None without ``sizes``) and
        ``{host_id: [timelines.Allocation]}`` (a slice's size is
        ``(vcpus, memory_mb, disk_gb)``, a whole host's None), both with
        every matching host, the preferred first (``busy.prefer``, for a
        window at the first start, ``lower`` plus the cleaning time).
        Without ``sizes``, the allocations are a :class:`Schedules`, read
        as they are looked up: use it within the session.
    """
    capacities = ((HOSTS.c.vcpus, HOSTS.c.memory_mb, HOSTS.c.local_gb)
                  if sizes else (sa.null(),) * 3)
    hosts = {row[0]: tuple(row[1:]) for row in session.execute(
        sa.select(HOSTS.c.id, HOSTS.c.generation, *capacities)
        .where(HOSTS.c.reservable, *conditions)
        .order_by(*busy.order_by(lower + busy.margin)))}
    schedules = Schedules(session, hosts, lower, upper, busy, conditions,
                          sizes)
    return hosts, schedules.read_all() if sizes else schedules


class Schedules(collections.abc.Mapping):
    """``{host_id: [timelines.Allocation]}`` of hosts, read when looked up.

    A search on a pool with room looks at the few preferred hosts only:
    the first :data:`FIRST_HOSTS` (in the hosts' order, that of
    preference) are read with one statement when one of them is first
    looked up, all the others with a second one when one of those is.
    :meth:`read_all` reads every host with one statement instead, for a
    caller that will look at them all. :meth:`next_end` answers where
    the next allocation ends without reading the hosts. The allocations
    are those :func:`read_schedules` describes; the session must still
    be open when they are looked up.
    """

    def __init__(self, session, hosts, lower, upper, busy, conditions,
                 sizes=False):
        self._session, self._sizes = session, sizes
        self._hosts, self._order = hosts, list(hosts)
        # A pool of few hosts is read with one statement, as by read_all.
        self._first = (frozenset(self._order[:FIRST_HOSTS])
                       if len(self._order) > FIRST_HOSTS else None)
        self._read = {}
        self._window = (lower, upper, busy, tuple(conditions))

    @property
    def complete(self):
        """Return whether every host's allocations have been read."""
        return len(self._read) == len(self._order)

    def __getitem__(self, host):
        """Return the allocations of ``host``, reading them if need be."""
        booked = self._read.get(host)
        if booked is not None:
            return booked
        if host not in self._hosts:
            raise KeyError(host)
        self._fetch(first=self._first is not None and host in self._first)
        return self._read[host]

    def __iter__(self):
        """Iterate over the host ids in the order of preference (no read)."""
        return iter(self._order)

    def __len__(self):
        """Return the number of hosts."""
        return len(self._order)

    def __contains__(self, host):
        """Return whether ``host`` is one of the hosts (no read)."""
        return host in self._hosts

    def read_all(self):
        """Read every host not read yet, with one statement.

        :returns: ``{host_id: [Allocation]}`` of every host, in order.
        """
        if not self.complete:
            self._fetch()
        return self._read

    def _fetch(self, first=False):
        """Read the allocations of the first hosts, or of all not read."""
        lower, upper, busy, conditions = self._window
        if first:
            wanted = self._order[:FIRST_HOSTS]
            which = ALLOCATIONS.c.host_id.in_(sorted(wanted))
        else:
            which = ALLOCATIONS.c.host_id.in_(
                sa.select(HOSTS.c.id).where(HOSTS.c.reservable, *conditions))
            wanted = [host for host in self._order if host not in self._read]
        fresh = {host: [] for host in wanted}
        _collect(fresh, self._session.execute(
            _allocations(which, lower, upper, busy, self._sizes)))
        self._read.update(fresh)

    def next_end(self, after, until):
        """Return the first end of an allocation in ``(after, until]``.

        Of the allocations of every host (read or not), as they were
        read; None if none ends then. One statement on the end_date
        index: the hosts' conditions are tested on the allocations met,
        which are few.
        """
        lower, upper, busy, conditions = self._window
        matching = sa.exists().where(HOSTS.c.id == ALLOCATIONS.c.host_id,
                                     HOSTS.c.reservable, *conditions)
        return self._session.scalar(
            sa.select(ALLOCATIONS.c.end_date).where(
                ALLOCATIONS.c.end_date > max(after, lower),
                ALLOCATIONS.c.end_date <= until,
                ALLOCATIONS.c.start_date < upper, matching,
                *busy.counted())
            .order_by(ALLOCATIONS.c.end_date).limit(1))


def _allocations(which, lower, upper, busy, sizes):
    """Return the SELECT of the allocations that count in ``[lower, upper)``.

    Of the hosts ``which`` (a condition on host_allocations) selects.
    """
    window = (ALLOCATIONS.c.host_id, ALLOCATIONS.c.start_date,
              ALLOCATIONS.c.end_date)
    slices = ((ALLOCATIONS.c.whole_host, ALLOCATIONS.c.vcpus,
               ALLOCATIONS.c.memory_mb, ALLOCATIONS.c.disk_gb)
              if sizes else ())
    return sa.select(*window, *slices).where(
        which, ALLOCATIONS.c.start_date < upper,
        ALLOCATIONS.c.end_date > lower, *busy.counted())


def _collect(allocations, rows):
    """Add ``rows`` of :func:`_allocations` to ``{host_id: [Allocation]}``.

    The rows of hosts not in ``allocations`` are left out: a host that
    stopped matching since the hosts were read, or one read already.
    """
    make = timelines.Allocation._make
    # Schedules have thousands of rows: one plain loop, no calls per row.
    for host, start, end, *slice_ in rows:
        booked = allocations.get(host)
        if booked is not None:
            booked.append(make((start, end, None if not slice_ or slice_[0]
                                else tuple(slice_[1:]))))


def count_matching(session, conditions=()):
    """Count the reservable hosts that match ``conditions``, busy or not."""
    return session.scalar(sa.select(sa.func.count()).select_from(HOSTS)
                          .where(HOSTS.c.reservable, *conditions))


def allocate_hosts(session, owner, start, end, min_count, max_count, busy,
                   host_ids=None, conditions=()):
    """Book between ``min_count`` and ``max_count`` free hosts.

    Writes one whole-host allocation of ``owner`` (an :class:`Owner`) per
    host for ``[start, end)``. ``busy``, ``host_ids`` and ``conditions``
    select the hosts as for :func:`find_free_hosts`. ``session`` is a
    :func:`db.api.writer` transaction's.

    :returns: the ids of the booked hosts.
    :raises NotEnoughResources: fewer than ``min_count`` hosts are free;
        nothing is written.
    :raises ConcurrentUpdate: another writer booked one of the hosts
        first; rerun the transaction (:func:`db.api.retry_on_conflict`).
    """
    free = find_free_hosts(session, start, end, busy, max_count=max_count,
                           host_ids=host_ids, conditions=conditions)
    if len(free) < min_count:
        raise exceptions.NotEnoughResources(
            'Not enough hosts available: %d matching host(s) free from %s '
            'to %s, %d wanted.' % (len(free), start, end, min_count))
    if free:
        _bump_generations(session, free)
        store_allocations.book(session, [
            _allocation(owner, host_id, start, end)
            for host_id, _generation in free])
    return [host_id for host_id, _generation in free]


def write_holds(session, holds, generations):
    """Write the allocations of proposals' holds, the hosts CAS-bumped.

    :param holds: ``(owner, host_id, start, end, size)`` tuples, ``size``
        a slice's ``(vcpus, memory_mb, disk_gb)`` or None for whole hosts.
    :param generations: ``{host_id: generation}`` as the search read them.
    :raises ConcurrentUpdate: as for :func:`allocate_hosts`.
    """
    hosts = {host_id for _owner, host_id, _start, _end, _size in holds}
    _bump_generations(session, [(host_id, generations[host_id])
                                for host_id in sorted(hosts)])
    store_allocations.book(session, [
        _allocation(owner, host_id, start, end, size)
        for owner, host_id, start, end, size in holds])


def allocate_slice(session, owner, start, end, size, busy,
                   usable=AS_IS, conditions=(), tightest=False):
    """Book a slice of one host (an instance's flavor) for ``[start, end)``.

    :func:`allocate_slices` for one slice.

    :param size: ``(vcpus, memory_mb, disk_gb)``.
    :returns: the id of the booked host.
    :raises NotEnoughResources: no host fits; nothing is written.
    :raises ConcurrentUpdate: as for :func:`allocate_hosts`.
    """
    return allocate_slices(session, owner, start, end, size, busy,
                           usable=usable, conditions=conditions,
                           tightest=tightest)[0]


def allocate_slices(session, owner, start, end, size, busy, amount=1,
                    affinity=None, usable=AS_IS, conditions=(),
                    tightest=False):
    """Book ``amount`` slices of ``size`` for ``[start, end)``, one search.

    A host takes slices when no whole-host allocation overlaps the window
    and its usable size (``usable``, a
    :class:`~reservation_ext.planning.host_capacity.Usable`: Nova's
    reserve and allocation ratios applied to ``vcpus``, ``memory_mb``,
    ``local_gb``, as Placement counts) minus the slices that overlap the
    window holds them. Slices that overlap the window but not each
    other still add up: the check may refuse a slice that would fit, but
    never books a host beyond its capacity. One SELECT reads the room of
    every host that fits one slice, in the order of preference of
    ``busy.prefer``; with ``tightest`` the tightest gaps first within it
    (after the power state, before the weight: the hosts that carry
    slices in the window, then the hosts whose next allocation after the
    window, cleaning time included, starts soonest; hosts with none after
    it last), so that a slice takes no empty host that another host can
    spare. The slices are placed by ``affinity``: True, all on
    the first host that holds them all; False, one on each of the
    ``amount`` first hosts; None, as many as fit on each host from the
    first up, so slices fill hosts one after another. One
    host_allocations row per slice.

    :param size: ``(vcpus, memory_mb, disk_gb)``.
    :returns: the ids of the booked hosts, one per slice (repeated when a
        host takes several).
    :raises NotEnoughResources: the slices do not fit; nothing is written.
    :raises ConcurrentUpdate: as for :func:`allocate_hosts`.
    """
    rooms = _slice_rooms(session, start, end, size, busy, usable,
                         conditions, tightest)
    placed = _place(rooms, size, amount, affinity)
    if placed is None:
        raise exceptions.NotEnoughResources(_no_room(
            size, amount, affinity, start, end))
    _bump_generations(session, sorted(
        {host_id: rooms[host_id][0] for host_id in placed}.items()))
    store_allocations.book(session, [
        _allocation(owner, host_id, start, end, size) for host_id in placed])
    return placed


def slice_rooms(session, start, end, size, busy, usable=AS_IS,
                conditions=(), tightest=False):
    """Return ``{host_id: (generation, room)}`` of the hosts a slice fits on.

    As :func:`allocate_slices` searches them, for a caller that books
    with :func:`bump_generations` itself (the healing of
    :mod:`reservation_ext.planning.healing`).
    """
    return _slice_rooms(session, start, end, size, busy, usable,
                        conditions, tightest)


def count_slices(session, start, end, size, busy, usable=AS_IS, most=None):
    """Count the slices of ``size`` free for ``[start, end)``, up to ``most``.

    As many as :func:`allocate_slices` without affinity could book at
    once (its search, one SELECT), for saying how many of a refused
    booking would have fitted.
    """
    rooms = _slice_rooms(session, start, end, size, busy, usable, ())
    fit = sum(_seats(room, size, most or float('inf'))
              for _generation, room in rooms.values())
    return fit if most is None else min(fit, most)


def _slice_rooms(session, start, end, size, busy, usable, conditions,
                 tightest=False):
    """Return ``{host_id: (generation, room)}`` of the hosts one slice fits on.

    ``room`` is the free ``(vcpus, memory_mb, disk_gb)`` in the window;
    the dict is in the order of preference (``busy.prefer``), tightest
    gaps first within it (:func:`_tightest_first`) with ``tightest``.
    """
    overlapping = [ALLOCATIONS.c.host_id == HOSTS.c.id,
                   ALLOCATIONS.c.start_date < end + busy.margin,
                   ALLOCATIONS.c.end_date > start - busy.margin,
                   *busy.counted()]
    rooms = [(capacity - sa.select(
                sa.func.coalesce(sa.func.sum(used), 0))
              .where(*overlapping, ~ALLOCATIONS.c.whole_host)
              .scalar_subquery())
             for capacity, used in zip(
                 usable.of(HOSTS.c.vcpus, HOSTS.c.memory_mb,
                           HOSTS.c.local_gb),
                 (ALLOCATIONS.c.vcpus, ALLOCATIONS.c.memory_mb,
                  ALLOCATIONS.c.disk_gb))]
    rows = session.execute(
        sa.select(HOSTS.c.id, HOSTS.c.generation, *rooms).where(
            HOSTS.c.reservable, *conditions,
            ~sa.exists().where(*overlapping, ALLOCATIONS.c.whole_host),
            *(room >= wanted for room, wanted in zip(rooms, size)))
        .order_by(*busy.order_by(start, _tightest_first(
            end, busy, overlapping) if tightest else ())))
    return {row[0]: (row[1], tuple(row[2:])) for row in rows}


def _tightest_first(end, busy, overlapping):
    """Return ORDER BY terms that put the tightest gaps first.

    The hosts with slices in the window, then the soonest next allocation
    after it; a host with none after it comes last. CASE rather than
    NULLS LAST or a boolean order: alike on every backend.
    """
    carries_slices = sa.exists().where(*overlapping,
                                       ~ALLOCATIONS.c.whole_host)
    next_start = (sa.select(sa.func.min(ALLOCATIONS.c.start_date))
                  .where(ALLOCATIONS.c.host_id == HOSTS.c.id,
                         ALLOCATIONS.c.start_date >= end + busy.margin,
                         *busy.counted())
                  .scalar_subquery())
    return (sa.case((carries_slices, 0), else_=1),
            sa.case((next_start.is_(None), 1), else_=0), next_start)


def _place(rooms, size, amount, affinity):
    """Pick a host for each of ``amount`` slices; None if they do not fit.

    ``rooms`` are the hosts with room for one slice at least
    (:func:`_slice_rooms`).
    """
    return place(((host_id, _seats(room, size, amount))
                  for host_id, (_generation, room) in rooms.items()),
                 amount, affinity)


def place(rooms, amount, affinity):
    """Place ``amount`` slices by ``affinity`` (see :func:`allocate_slices`).

    :param rooms: ``(host, slices it has room for)`` pairs in the order of
        preference; read only as far as the placing needs.
    :returns: the host of each slice, or None when they do not fit.
    """
    placed = []
    for host, count in rooms:
        if affinity:
            if count >= amount:
                return [host] * amount
        elif affinity is None:
            placed.extend([host] * min(count, amount - len(placed)))
        elif count:
            placed.append(host)
        if len(placed) == amount:
            return placed
    return None


def _seats(room, size, amount):
    """Count the slices of ``size`` (at most ``amount``) that fit ``room``."""
    return min([int(free // wanted) for free, wanted in zip(room, size)
                if wanted > 0] + [amount])


def _no_room(size, amount, affinity, start, end):
    what = ('%d vCPU(s), %d MB of RAM and %d GB of disk' % tuple(size))
    if amount == 1:
        return 'No reservable host has %s free from %s to %s.' % (
            what, start, end)
    where = {True: 'on one host', False: 'on different hosts'}.get(
        affinity, 'together')
    return ('Not enough reservable capacity for %d instances of %s %s '
            'from %s to %s.' % (amount, what, where, start, end))


def move_allocations(session, reservation_id, start, end, busy):
    """Move a reservation's allocations to ``[start, end)``.

    Its hosts must be free in the new window apart from its own
    allocations (``busy`` need not ignore them: this does).

    :raises NotEnoughResources: a host is booked by another reservation
        in the new window; nothing is changed.
    :raises ConcurrentUpdate: as for :func:`allocate_hosts`.
    """
    booked = _host_ids(session, reservation_id)
    free = find_free_hosts(
        session, start, end,
        dataclasses.replace(busy, ignore_reservation=reservation_id),
        host_ids=booked)
    if len(free) < len(booked):
        raise exceptions.NotEnoughResources(
            'Cannot move the reservation to %s - %s: %d of its %d host(s) '
            'are booked then.' % (start, end, len(booked) - len(free),
                                  len(booked)))
    if free:
        _bump_generations(session, free)
        store_allocations.reschedule(session, reservation_id, start, end)


def latest_end(session, reservation_id, busy):
    """Return the latest end a reservation's hosts are free until, or None.

    The first allocation of another owner that starts on one of its hosts
    at or after its end, minus the cleaning time: how far the
    reservation can be extended while keeping its hosts. None when
    nothing is booked after it.
    """
    ours = ALLOCATIONS.alias('ours')
    mine = ours.c.reservation_id == reservation_id
    first = session.scalar(
        sa.select(sa.func.min(ALLOCATIONS.c.start_date)).where(
            ALLOCATIONS.c.host_id.in_(sa.select(ours.c.host_id).where(mine)),
            ALLOCATIONS.c.start_date >= sa.select(
                sa.func.max(ours.c.end_date)).where(mine).scalar_subquery(),
            *dataclasses.replace(
                busy, ignore_reservation=reservation_id).counted()))
    return None if first is None else first - busy.margin


def latest_slice_end(session, host_id, start, size, busy,
                     usable=AS_IS):
    """Find the latest end a slice of ``size`` from ``start`` has on a host.

    As :func:`allocate_slice` counts (a whole-host allocation, or the
    slices that overlap the window together), the window grows until the
    first allocation whose start it reaches would not fit with the
    others. ``start`` if nothing fits; None if every end does.
    """
    capacity = usable.of(*session.execute(
        sa.select(HOSTS.c.vcpus, HOSTS.c.memory_mb, HOSTS.c.local_gb)
        .where(HOSTS.c.id == host_id)).one())
    used = list(size)
    for row in session.execute(
            sa.select(ALLOCATIONS.c.start_date, ALLOCATIONS.c.whole_host,
                      ALLOCATIONS.c.vcpus, ALLOCATIONS.c.memory_mb,
                      ALLOCATIONS.c.disk_gb)
            .where(ALLOCATIONS.c.host_id == host_id,
                   ALLOCATIONS.c.end_date > start - busy.margin,
                   *busy.counted())
            .order_by(ALLOCATIONS.c.start_date)):
        reached = max(start, row.start_date - busy.margin)
        used = [have + more for have, more in zip(used, row[2:])]
        if row.whole_host or any(have > room for have, room in
                                 zip(used, capacity)):
            return reached
    return None


def move_slices(session, reservation_id, start, end, busy,
                usable=AS_IS):
    """Move a reservation's slices to ``[start, end)`` on their hosts.

    Each host must have the room for all the reservation's slices on it
    in the new window, as :func:`allocate_slices` counts; ``busy`` must
    ignore the reservation's own allocations.

    :raises NotEnoughResources: a host has not; nothing is changed.
    :raises ConcurrentUpdate: as for :func:`allocate_hosts`.
    """
    booked = _slices_by_host(session, reservation_id)
    rooms = _slice_rooms(session, start, end, (0, 0, 0), busy, usable,
                         (HOSTS.c.id.in_(booked),))
    for host_id, used in booked.items():
        room = rooms.get(host_id, (None, (-1, -1, -1)))[1]
        if any(free < wanted for free, wanted in zip(room, used)):
            raise exceptions.NotEnoughResources(
                'Cannot move the reservation to %s - %s: host %d has no '
                'room for its instances then.' % (start, end, host_id))
    _bump_generations(session, [(host_id, rooms[host_id][0])
                                for host_id in sorted(booked)])
    store_allocations.reschedule(session, reservation_id, start, end)


def latest_slices_end(session, reservation_id, start, busy,
                      usable=AS_IS):
    """Return the latest end all of a reservation's slices can have, or None.

    :func:`latest_slice_end` of each host with the slices on it together;
    ``busy`` must ignore the reservation's own allocations.
    """
    ends = [latest_slice_end(session, host_id, start, used, busy, usable)
            for host_id, used in _slices_by_host(
                session, reservation_id).items()]
    ends = [end for end in ends if end is not None]
    return min(ends) if ends else None


def _slices_by_host(session, reservation_id):
    """Return ``{host_id: (vcpus, memory_mb, disk_gb)}`` a reservation uses."""
    return {row[0]: tuple(row[1:]) for row in session.execute(
        sa.select(ALLOCATIONS.c.host_id, sa.func.sum(ALLOCATIONS.c.vcpus),
                  sa.func.sum(ALLOCATIONS.c.memory_mb),
                  sa.func.sum(ALLOCATIONS.c.disk_gb))
        .where(ALLOCATIONS.c.reservation_id == reservation_id)
        .group_by(ALLOCATIONS.c.host_id))}


def booked_hosts(session, reservation_id):
    """Return the ids of the hosts a reservation has booked."""
    return _host_ids(session, reservation_id)


def release_gained(session, reservation_id, start):
    """Release the hosts a reservation booked after ``start``, its start.

    Return their compute service names.
    """
    names = session.scalars(
        sa.select(HOSTS.c.service_name).join(
            ALLOCATIONS, ALLOCATIONS.c.host_id == HOSTS.c.id)
        .where(ALLOCATIONS.c.reservation_id == reservation_id,
               ALLOCATIONS.c.start_date > start)
        .order_by(HOSTS.c.service_name)).all()
    store_allocations.release_gained(session, reservation_id, start)
    return names


def release(session, reservation_id):
    """Delete a reservation's allocations; its hosts become free."""
    store_allocations.release(session, reservation_id)


def held_hosts(session, proposal_id, item):
    """List, sorted, the ids of the hosts item ``item`` of a proposal holds."""
    return session.execute(
        sa.select(ALLOCATIONS.c.host_id).distinct()
        .where(ALLOCATIONS.c.proposal_id == proposal_id,
               ALLOCATIONS.c.proposal_item == item)
        .order_by(ALLOCATIONS.c.host_id)).scalars().all()


def _allocation(owner, host_id, start, end, size=None):
    """Make a host_allocations row: the whole host, or a slice of ``size``."""
    vcpus, memory_mb, disk_gb = size or (0, 0, 0)
    return dict(owner.columns(), id=str(uuid.uuid4()), host_id=host_id,
                start_date=start, end_date=end, whole_host=size is None,
                vcpus=vcpus, memory_mb=memory_mb, disk_gb=disk_gb)


def _host_ids(session, reservation_id):
    return session.execute(
        sa.select(ALLOCATIONS.c.host_id).distinct()
        .where(ALLOCATIONS.c.reservation_id == reservation_id)).scalars().all()


def bump_generations(session, hosts):
    """Bump ``(host_id, generation)`` hosts as read, all or none.

    What every booking does; :class:`ConcurrentUpdate` when another
    writer changed one of them since.
    """
    _bump_generations(session, hosts)


def _bump_generations(session, hosts):
    """Bump the generation of ``(host_id, generation)`` hosts, all or none.

    The compare-and-swap of
    :func:`reservation_ext.store.hosts.bump_generations_if_unchanged`: a
    concurrent writer of the same host matches fewer rows and fails here.
    """
    if not store_hosts.bump_generations_if_unchanged(session, dict(hosts)):
        raise exceptions.ConcurrentUpdate()
