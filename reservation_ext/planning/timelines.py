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

"""What is free when: the schedule of a request's capacity, in memory.

A timeline holds, for one reservation of a request, the allocations that
count (bookings and live holds) of the capacity it may use, as read from
the DB for a :class:`Span` of starts, and answers with the same tests as
the planner's SQL (:mod:`reservation_ext.planning.planner`,
:mod:`reservation_ext.planning.volume_capacity`):

* :class:`WholeHosts` (``physical:host``): a host is free for ``[t, t +
  duration)`` when no allocation overlaps it widened by the cleaning
  time; the request fits when ``need`` hosts are free.
* :class:`Slices` (``virtual:instance``): a host fits a slice when no
  whole-host allocation overlaps and the slices that overlap leave room.
* :class:`Capacity` (``virtual:volume``): the GB of the reservations
  that overlap, plus the request's, stay within the reservable GB.
* :class:`Packed` (the servers of a ``heat:stack``): slices of several
  sizes packed on shared hosts as the planner books them; :class:`AllOf`
  joins it with the stack's GB (:class:`Capacity`) and addresses
  (:class:`reservation_ext.planning.floating_ips.Addresses`): a window
  fits when it fits them all.

**Where a proposal may start.** Capacity is freed only where an
allocation ends (plus the cleaning time, for hosts): a start that fits
and is neither ``not_before`` nor such a boundary still fits a little
earlier. So the candidate starts are ``not_before`` and the boundaries,
and :func:`first_starts` tries them in order. The first proposal is the
earliest candidate at which every timeline fits; it is taken (its
capacity held in the timelines) and the next one is the earliest
candidate after it at which the request still fits, and so on: distinct
windows, each starting where capacity changed, none sharing capacity with
another. With several reservations, a start fits when it fits each one:
each timeline gives its earliest fit from a candidate, and the latest of
those is the next candidate to try, until they agree.

Every timeline is exact for starts up to its span's ``last``: the caller
read every allocation that overlaps a window starting in the span.
"""

import bisect
import collections
import collections.abc
import dataclasses
import datetime
import heapq
import itertools
import operator

from reservation_ext import exceptions

_NEVER = datetime.datetime.max
# The most copies of a request that availability counts at one moment.
MOST_COPIES = 1000
# How many host visits availability may spend packing slices of several
# sizes (each moment something changes, every host once per size):
# about a second's work.
MOST_PACKING_VISITS = 1000000
_ZERO = datetime.timedelta(0)
# The free starts of a host without allocations: every start. Shared (a
# take gives the host a list of its own).
_ALWAYS = ((datetime.datetime.min, _NEVER),)
_FIRST = operator.itemgetter(0)


@dataclasses.dataclass(frozen=True)
class Span:
    """Describe the starts searched: ``first`` to ``last``.

    Windows are ``duration`` long; ``margin`` is the cleaning time kept
    free around host windows.
    """

    first: datetime.datetime
    last: datetime.datetime
    duration: datetime.timedelta
    margin: datetime.timedelta = _ZERO

    @property
    def reach(self):
        """Return ``(lower, upper)``, which the allocations read overlap."""
        return (self.first - self.margin,
                self.last + self.duration + self.margin)


class Allocation(collections.namedtuple('Allocation', 'start end size')):
    """Describe a booking or live hold.

    Of a whole host (``size`` None), a slice of ``(vcpus, memory_mb,
    disk_gb)``, or an amount of GB. A tuple: schedules have thousands.
    """

    __slots__ = ()

    def __new__(cls, start, end, size=None):
        """Make an allocation; without ``size``, of a whole host."""
        return super().__new__(cls, start, end, size)


class _Timeline:
    """Search the candidate starts of a timeline for a fit.

    Subclasses say where capacity is freed (:meth:`boundaries`) and
    whether a window fits (:meth:`fits`); :meth:`take` holds a window.
    """

    margin = _ZERO

    def __init__(self, span):
        self.span = span
        self._boundaries = None

    def _ends(self):
        """Return the times at which capacity is freed, in any order."""
        raise NotImplementedError

    def boundaries(self):
        """Return the sorted times capacity is freed at (computed once)."""
        if self._boundaries is None:
            self._boundaries = sorted(set(self._ends()))
        return self._boundaries

    def _freed_at(self, moment):
        """Note a boundary that a take added."""
        boundaries = self.boundaries()
        index = bisect.bisect_left(boundaries, moment)
        if index == len(boundaries) or boundaries[index] != moment:
            boundaries.insert(index, moment)

    def fits(self, start):
        """Return whether the request fits a window at ``start``."""
        raise NotImplementedError

    def earliest(self, start):
        """Return the earliest fit at ``start`` or at a boundary after it."""
        return _first_fit(self.fits, start, self.boundaries(),
                          self.span.last)

    def next_boundary(self, start):
        """Return the first boundary after ``start`` in the span, or None."""
        candidates = self.boundaries()
        index = bisect.bisect_right(candidates, start)
        if index < len(candidates) and candidates[index] <= self.span.last:
            return candidates[index]
        return None

    def overlaps(self, allocation, lower, upper):
        """Return whether ``allocation`` plus the margin meets a period."""
        return (allocation.start - self.margin < upper and
                allocation.end + self.margin > lower)

    def _window(self, start, size=None):
        return Allocation(start, start + self.span.duration, size)


class WholeHosts(_Timeline):
    """Track whole hosts: ``need`` of them free; a take holds up to ``most``.

    ``allocations`` is ``{host_id: [Allocation, ...]}`` for every matching
    host (an empty list for a host without any); ``generations`` as for
    :class:`Slices`.

    A host's free starts are worked out when a search first looks at it,
    and a search stops at the ``need``-th (``most``-th for a take) free
    host: on a pool with room, a proposal looks at a few hosts of the
    thousands read. Only a start that does not fit sweeps every host's
    free starts (:meth:`earliest`).
    """

    def __init__(self, span, allocations, need, most, generations=None):
        super().__init__(span)
        self.margin = span.margin
        self.need, self.most = need, most
        self.generations = generations or {}
        # A take gives a host a new list rather than append to the
        # caller's. A schedule read as it is looked up (the planner's
        # Schedules) is not copied, which would read it all.
        self._source = allocations
        self._booked = (dict(allocations) if isinstance(allocations, dict)
                        else _Overlay(allocations))
        self._free = _Lazy(lambda host: self._free_starts(self._booked[host]))
        self._all_free = None
        # The ends of the windows taken while the schedule is not all
        # read (see next_boundary).
        self._taken_ends = []

    def _read_all(self):
        """Have every host's allocations read, with one statement."""
        read_all = getattr(self._source, 'read_all', None)
        if read_all is not None:
            read_all()

    def _partly_read(self):
        """Return whether some hosts' allocations are not read yet."""
        return not getattr(self._source, 'complete', True)

    def _sorted_free(self):
        """Return all hosts' free starts in one sorted list (kept by take)."""
        if self._all_free is None:
            self._read_all()
            free = self._free
            self._all_free = sorted(interval for host in self._booked
                                    for interval in free[host])
        return self._all_free

    def _free_starts(self, booked):
        """Return the starts at which a host is free: sorted closed intervals.

        An allocation forbids the starts in ``(start - margin - duration,
        end + margin)``.
        """
        if not booked:
            return _ALWAYS
        free, lower = [], datetime.datetime.min
        for left, right in _busy(booked, self.margin + self.span.duration,
                                 self.margin):
            free.append((lower, left))
            lower = right
        free.append((lower, _NEVER))
        return free

    def _ends(self):
        self._read_all()
        # Many allocations end together (a lease's hosts): add the margin
        # once per distinct end.
        margin = self.margin
        return {end + margin for end in {
            a[1] for booked in self._booked.values() for a in booked}}

    def free_hosts(self, start, limit=None):
        """Return the hosts free for a window at ``start``, preferred first.

        In the order of ``allocations``' keys: the planner's order of
        preference as :func:`.planner.read_schedules` reads them; the
        first ``limit`` of them only, when given.
        """
        found, free = [], self._free
        if limit is not None and limit <= 0:
            return found
        for host in self._booked:
            if _within(free[host], start):
                found.append(host)
                if len(found) == limit:
                    break
        return found

    def fits(self, start):
        """Return whether ``need`` hosts are free for a window at ``start``."""
        return len(self.free_hosts(start, self.need)) >= self.need

    def earliest(self, start):
        """Return the earliest fit: ``start``, or sweep the free starts.

        Where ``need`` hosts are free first, one of them became free: the
        first fit is ``start`` or the beginning of a host's free starts,
        which is a boundary.
        """
        if start > self.span.last:
            return None
        # Most searches fit at once: the preferred hosts prove it.
        if self.fits(start):
            return start
        intervals = self._sorted_free()
        split = bisect.bisect_right(intervals, (start, _NEVER))
        ends = [upper for _lower, upper in intervals[:split]
                if upper >= start]
        heapq.heapify(ends)
        for lower, upper in itertools.islice(intervals, split, None):
            if lower > self.span.last:
                return None
            while ends and ends[0] < lower:
                heapq.heappop(ends)
            heapq.heappush(ends, upper)
            if len(ends) >= self.need:
                return lower
        return None

    def next_boundary(self, start):
        """Return the first boundary after ``start`` in the span, or None.

        While the schedule is partly read, the first end of an allocation
        comes from the DB (``next_end`` of the planner's Schedules): the
        boundaries of every host are not read to find the next one.
        """
        if not self._partly_read():
            return super().next_boundary(start)
        last = self.span.last
        read = self._source.next_end(start - self.margin, last - self.margin)
        candidates = [moment for moment in self._taken_ends
                      if start < moment <= last]
        if read is not None:
            candidates.append(read + self.margin)
        return min(candidates, default=None)

    def _freed_at(self, moment):
        """Note a boundary that a take added (aside while partly read)."""
        if self._partly_read():
            self._taken_ends.append(moment)
        else:
            super()._freed_at(moment)

    def take(self, start):
        """Hold the preferred free hosts (up to ``most``) at ``start``."""
        hosts = self.free_hosts(start, self.most)
        window = self._window(start)
        intervals = self._all_free
        for host in hosts:
            if intervals is not None:
                for interval in self._free[host]:
                    del intervals[bisect.bisect_left(intervals, interval)]
            self._booked[host] = self._booked[host] + [window]
            self._free[host] = self._free_starts(self._booked[host])
            if intervals is not None:
                for interval in self._free[host]:
                    bisect.insort(intervals, interval)
        self._freed_at(window.end + self.margin)
        return hosts

    @staticmethod
    def held(hosts):
        """Return what :meth:`take` holds: ``([(host, None)], 0)``."""
        return [(host, None) for host in hosts], 0

    def copies(self, start, end):
        """Return how many requests fit at once, and when: free / need."""
        steps, _hosts = self.timeline(start, end)
        return merge_steps([(lower, upper, free // self.need)
                            for lower, upper, free in steps])

    def timeline(self, start, end):
        """Return how many hosts are free over ``[start, end)``, and when.

        A host is busy from ``start - margin`` to ``end + margin`` of each
        allocation.

        :returns: ``([(from, to, free hosts)], {host_id: [(from, to)]})``
            with the steps and every host's free periods (worked out for
            the hosts looked up only: a caller may not show them).
        """
        self._read_all()
        busy = {host: _busy(booked, self.margin, self.margin)
                for host, booked in self._booked.items() if booked}
        # Every host is free but where it is busy.
        changes = [(moment, step) for intervals in busy.values()
                   for lower, upper in intervals
                   if lower < end and upper > start
                   for moment, step in ((max(lower, start), -1),
                                        (min(upper, end), 1))]
        return _steps(changes, start, end, len(self._booked)), _FreePeriods(
            self._booked, busy, start, end)


class Slices(_Timeline):
    """Track slices of ``size`` on hosts of ``capacity``: one host must fit.

    :param capacity: ``{host_id: (vcpus, memory_mb, disk_gb)}``, each
        host's usable size (:meth:`.host_capacity.Usable.of`: Nova's
        reserve and allocation ratios applied).
    :param allocations: ``{host_id: [Allocation, ...]}``; a slice's
        ``size`` is ``(vcpus, memory_mb, disk_gb)``, a whole host's None.
    :param size: the slice; one of its sizes at least is not 0.
    :param generations: ``{host_id: generation}`` as read with the
        allocations, for the compare-and-swap of the holds written.
    """

    def __init__(self, span, capacity, allocations, size, generations=None):
        super().__init__(span)
        self.margin = span.margin
        self.generations = generations or {}
        self.capacity, self.size = capacity, tuple(size)
        self._booked = {host: list(allocations.get(host, ()))
                        for host in capacity}

    def _ends(self):
        return (a.end + self.margin
                for booked in self._booked.values() for a in booked)

    def host_fits(self, host, start):
        """Return whether ``host`` has room for a slice at ``start``."""
        return self._room(host, start, start + self.span.duration) > 0

    def fits(self, start):
        """Return whether a host has room for a slice at ``start``."""
        return any(self.host_fits(host, start) for host in self._booked)

    def earliest(self, start):
        """Return the earliest of the hosts' earliest fits.

        A host's room only shrinks where one of its own allocations
        begins to overlap, so its earliest fit is ``start`` or one of its
        own boundaries.
        """
        fits = [_first_fit(
            lambda moment, host=host: self.host_fits(host, moment), start,
            sorted(a.end + self.margin for a in booked), self.span.last)
            for host, booked in self._booked.items()]
        return min((fit for fit in fits if fit is not None), default=None)

    def take(self, start):
        """Hold a slice on the preferred host that fits at ``start``.

        The first in the order of ``capacity``'s keys, the planner's order
        of preference as :func:`.planner.read_schedules` reads them.
        """
        host = next(host for host in self._booked
                    if self.host_fits(host, start))
        window = self._window(start, self.size)
        self._booked[host].append(window)
        self._freed_at(window.end + self.margin)
        return [host]

    def held(self, hosts):
        """Return what :meth:`take` holds: ``([(host, size)], 0)``."""
        return [(host, self.size) for host in hosts], 0

    def _room(self, host, lower, upper):
        """Return how many slices fit on ``host`` over [lower, upper)."""
        used = [0, 0, 0]
        for allocation in self._booked[host]:
            if self.overlaps(allocation, lower, upper):
                if allocation.size is None:
                    return 0
                used = [u + s for u, s in zip(used, allocation.size)]
        return _how_many(self.capacity[host], used, self.size)

    def timeline(self, start, end):
        """Return how many slices fit over ``[start, end)``, and where.

        :returns: ``([(from, to, slices)], {host_id: [(from, to,
            slices)]})``: the steps in all and on each host.
        """
        rooms = {host: self._host_steps(host, start, end)
                 for host in self._booked}
        changes = [(moment, step) for steps in rooms.values()
                   for lower, upper, room in steps
                   for moment, step in ((lower, room), (upper, -room))]
        return _steps(changes, start, end, 0), rooms

    def _host_steps(self, host, start, end):
        moments = sorted({start, end} | {
            moment for a in self._booked[host]
            for moment in (a.start - self.margin, a.end + self.margin)
            if start < moment < end})
        return [step for step in merge_steps([
            (lower, upper, self._room(host, lower, upper))
            for lower, upper in zip(moments, moments[1:])]) if step[2]]


class Capacity(_Timeline):
    """Track an amount (GB) out of ``total``, held by ``allocations``.

    Every allocation that overlaps a window counts, as in
    :func:`reservation_ext.planning.volume_capacity.check`.
    """

    def __init__(self, span, total, allocations, amount):
        super().__init__(span)
        self.total, self.amount = total, amount
        self._held = list(allocations)

    def _ends(self):
        return (a.end for a in self._held)

    def fits(self, start):
        """Return whether ``amount`` more fits a window at ``start``."""
        end = start + self.span.duration
        held = sum(a.size for a in self._held
                   if self.overlaps(a, start, end))
        return held + self.amount <= self.total

    def take(self, start):
        """Hold ``amount`` for a window at ``start``."""
        window = self._window(start, self.amount)
        self._held.append(window)
        self._freed_at(window.end)
        return self.amount

    @staticmethod
    def held(amount):
        """Return what :meth:`take` holds: ``([], amount)``."""
        return [], amount

    def copies(self, start, end):
        """Return how many requests fit at once, and when: GB free / GB."""
        steps, _hosts = self.timeline(start, end)
        return [(lower, upper, free // self.amount)
                for lower, upper, free in steps]

    def timeline(self, start, end):
        """Return how much is free over ``[start, end)``.

        :returns: ``([(from, to, free amount)], {})``: no hosts.
        """
        changes = [(moment, step) for a in self._held
                   if self.overlaps(a, start, end)
                   for moment, step in ((max(a.start, start), -a.size),
                                        (min(a.end, end), a.size))]
        return _steps(changes, start, end, self.total), {}


class Packed(_Timeline):
    """Track slices of several sizes packed together on shared hosts.

    As the planner books a stack's servers
    (:func:`reservation_ext.planning.stacks.book`): each size in turn, as
    many slices as fit on each host from the preferred one up, the slices
    placed counting on their hosts for the sizes after them. A window
    fits when every slice finds a host. That packing is greedy: more room
    on a host can change where the slices of a size go and leave a later
    size without room, so a fit is not kept at the moment before it (as
    :class:`Slices` fits are), and only the candidate starts are tried
    (:meth:`_Timeline.earliest`).

    :param capacity: ``{host_id: (vcpus, memory_mb, disk_gb)}`` as for
        :class:`Slices`, in the planner's order of preference.
    :param allocations: as for :class:`Slices`.
    :param wanted: ``[(size, count)]``: the slices, in the order the
        planner books them.
    :param generations: as for :class:`Slices`.
    """

    def __init__(self, span, capacity, allocations, wanted,
                 generations=None):
        super().__init__(span)
        self.margin = span.margin
        self.generations = generations or {}
        self.capacity = capacity
        self.wanted = [(tuple(size), count) for size, count in wanted]
        self._booked = {host: list(allocations.get(host, ()))
                        for host in capacity}
        # What the hosts use at the start last packed (see pack).
        self._sweep = None

    def _ends(self):
        return (a.end + self.margin
                for booked in self._booked.values() for a in booked)

    def fits(self, start):
        """Return whether every slice finds a host at ``start``.

        A start where the hosts' seats of some size, counted with none of
        the stack placed, are fewer than the stack's slices of that size
        cannot fit however they are packed: the sweep keeps those totals
        as allocations come and go (:class:`_SeatTotals`), so such a
        start is refused without visiting every host.
        """
        sweep = self._sweep_to(start)
        if not sweep.seats.may_fit():
            return False
        return self._place(_Lazy(sweep.used_of))[1] is None

    def pack(self, start):
        """Place the slices at ``start`` as the planner would.

        :returns: ``(placed, short)``: ``[(host, size)]``, one per slice
            placed, and ``(index in wanted, slices left)`` of the first
            size that did not all fit (None when every slice did).

        A search tries the candidate starts in order: what the hosts use
        is swept from one start to the next (:class:`_Sweep`), each
        allocation counted in and out once, rather than every host's
        allocations tested again at each start. A start before the last
        one, or a take, sweeps anew.
        """
        sweep = self._sweep_to(start)
        return self._place(_Lazy(sweep.used_of))

    def _sweep_to(self, start):
        """Return the sweep moved to ``start`` (anew if it is past it)."""
        sweep = self._sweep
        if sweep is None or start < sweep.at:
            sweep = self._sweep = _Sweep(
                self._booked, self.margin, self.span.duration,
                _SeatTotals(self.capacity, self.wanted))
        sweep.move_to(start)
        return sweep

    def _place(self, used):
        """Place the slices on the hosts, ``used`` as they are; see pack.

        ``used`` maps each host to what it has in use (None: busy as a
        whole); the slices placed are added to it.
        """
        placed, hosts = [], list(self._booked)
        for index, (size, count) in enumerate(self.wanted):
            _host, left = self._fill(hosts, 0, used, size, count, placed)
            if left:
                return placed, (index, left)
        return placed, None

    def copies(self, start, end):
        """Return how many times the slices all fit at once, and when.

        :returns: ``[(from, to, copies)]`` over ``[start, end)``: at each
            moment, the copies packed one after the other as the planner
            books them; :data:`MOST_COPIES` at most. Slices of one size
            are counted host by host as the hosts' allocations change
            (packing never wastes room for one size).
        """
        changes = self._changes(start, end)
        held = {host: _Held() for host in self._booked}
        single = _SeatCount(self, held) if len(self.wanted) == 1 else None
        moments = sorted(set(changes) | {start, end})
        if not single:
            self._check_work(len(moments))
        steps = []
        for lower, upper in zip(moments, moments[1:]):
            for host, size, sign in changes.get(lower, ()):
                held[host].add(size, sign)
                if single:
                    single.moved(host)
            steps.append((lower, upper, single.copies() if single
                          else self._copies(held)))
        return merge_steps(steps)

    def _check_work(self, moments):
        """Refuse a period whose packing would take too long.

        :raises InvalidInput: (``end``) it would visit more than
            :data:`MOST_PACKING_VISITS` hosts.
        """
        visits = moments * len(self._booked) * len(self.wanted)
        if visits > MOST_PACKING_VISITS:
            raise exceptions.InvalidInput(
                'end', 'servers of %d flavors over %d reservable hosts, '
                'whose bookings change %d times in the period, take too '
                'long to count: ask for a period about %d times shorter'
                % (len(self.wanted), len(self._booked), moments,
                   -(-visits // MOST_PACKING_VISITS)))

    def _changes(self, start, end):
        """Return ``{moment: [(host, size, 1 or -1)]}`` within the period.

        Where an allocation, widened by the margin, begins (1) or ends
        (-1) to count.
        """
        changes = {}
        for host, booked in self._booked.items():
            for allocation in booked:
                if self.overlaps(allocation, start, end):
                    lower = max(allocation.start - self.margin, start)
                    upper = min(allocation.end + self.margin, end)
                    changes.setdefault(lower, []).append(
                        (host, allocation.size, 1))
                    changes.setdefault(upper, []).append(
                        (host, allocation.size, -1))
        return changes

    def _copies(self, held):
        """Count the copies of the slices that fit beside ``held``.

        Packed as :meth:`_place` packs each copy, with one shortcut: a
        host that ran out of room for a size keeps none for the copies
        after (they only add to it), so each size's search goes on from
        there rather than from the first host.
        """
        if not self.wanted:
            return MOST_COPIES
        used = {host: one.used for host, one in held.items()}
        hosts = list(self._booked)
        first = [0] * len(self.wanted)
        for copies in range(MOST_COPIES):
            for index, (size, count) in enumerate(self.wanted):
                first[index], left = self._fill(hosts, first[index], used,
                                                size, count)
                if left:
                    return copies
        return MOST_COPIES

    def _fill(self, hosts, index, used, size, count, placed=None):
        """Place ``count`` slices of ``size`` from ``hosts[index]`` on.

        :param placed: a list the ``(host, size)`` of each slice placed
            is added to, if given.
        :returns: ``(index, left)``: the first host that may still take
            one, and the slices that found no host.
        """
        while count and index < len(hosts):
            host = hosts[index]
            seats = _seats(self.capacity[host], used[host], size, count)
            if seats:
                used[host] = tuple(u + seats * s
                                   for u, s in zip(used[host], size))
                count -= seats
                if placed is not None:
                    placed.extend([(host, size)] * seats)
            if count:
                index += 1
        return index, count

    def take(self, start):
        """Hold every slice where :meth:`pack` places it at ``start``."""
        placed, _short = self.pack(start)
        for host, size in placed:
            self._booked[host].append(self._window(start, size))
        # The sweep does not know the windows just taken.
        self._sweep = None
        self._freed_at(start + self.span.duration + self.margin)
        return placed

    @staticmethod
    def held(placed):
        """Return what :meth:`take` holds: ``([(host, size)], 0)``."""
        return list(placed), 0

    def _used(self, host, start):
        """Return what the slices overlapping a window at ``start`` use.

        None when a whole-host allocation overlaps it.
        """
        end = start + self.span.duration
        used = (0, 0, 0)
        for allocation in self._booked[host]:
            if self.overlaps(allocation, start, end):
                if allocation.size is None:
                    return None
                used = tuple(u + s for u, s in zip(used, allocation.size))
        return used


class AllOf(_Timeline):
    """Track the timelines that one reservation needs all at once.

    A window fits when it fits each part, and a take takes from each
    (:meth:`take` returns what each part's returned, in the order of
    ``parts``). The candidate starts are every part's: as for
    :func:`first_starts`, but one part (:class:`Packed`) may fit at a
    boundary of another and not just before it, so every candidate is
    tried on all of them.
    """

    def __init__(self, span, parts):
        super().__init__(span)
        self.parts = list(parts)

    @property
    def generations(self):
        """Return the parts' ``generations`` (hosts', addresses') merged."""
        merged = {}
        for part in self.parts:
            merged.update(getattr(part, 'generations', {}))
        return merged

    def _ends(self):
        return (moment for part in self.parts
                for moment in part.boundaries())

    def fits(self, start):
        """Return whether every part fits a window at ``start``."""
        return all(part.fits(start) for part in self.parts)

    def timeline(self, start, end):
        """Return how many times the request fits at once, and when.

        :returns: ``([(from, to, copies)], {})``: at each moment, the
            fewest copies any part fits (availability of a stack).
        """
        steps = [part.copies(start, end) for part in self.parts]
        moments = sorted({moment for part in steps
                          for lower, upper, _n in part
                          for moment in (lower, upper)} | {start, end})
        return merge_steps([
            (lower, upper, min(_level(part, lower) for part in steps))
            for lower, upper in zip(moments, moments[1:])]), {}

    def take(self, start):
        """Take a window at ``start`` from each part."""
        taken = [part.take(start) for part in self.parts]
        # The parts' takes added their own boundaries.
        self._boundaries = None
        return taken


def first_starts(timelines, first, count):
    """Return up to ``count`` starts that every timeline fits, taken in turn.

    :returns: ``[(start, [what each timeline's take() returned])]``, in
        chronological order.
    """
    found = []
    start = first
    while start is not None and len(found) < count:
        start = _common_fit(timelines, start)
        if start is None:
            break
        found.append((start, [timeline.take(start)
                              for timeline in timelines]))
        start = min((boundary for boundary in (
            timeline.next_boundary(start) for timeline in timelines)
            if boundary is not None), default=None)
    return found


def merge_steps(steps):
    """Join consecutive ``(from, to, ...)`` steps that say the same."""
    merged = []
    for step in steps:
        if merged and merged[-1][1] == step[0] and (
                merged[-1][2:] == step[2:]):
            merged[-1] = (merged[-1][0], step[1]) + tuple(step[2:])
        else:
            merged.append(tuple(step))
    return merged


def _common_fit(timelines, start):
    """Return the earliest candidate from ``start`` fitting every timeline."""
    while True:
        fits = [timeline.earliest(start) for timeline in timelines]
        if None in fits:
            return None
        latest = max(fits)
        if latest == start:
            return start
        start = latest


def _first_fit(fits, start, boundaries, last):
    """Return the first of ``start`` and the boundaries after it that fits."""
    for candidate in [start] + boundaries[
            bisect.bisect_right(boundaries, start):]:
        if candidate > last:
            return None
        if fits(candidate):
            return candidate
    return None


def _busy(booked, before, after):
    """Return the merged open intervals ``(start - before, end + after)``."""
    merged = []
    for left, right in sorted((a.start - before, a.end + after)
                              for a in booked):
        if merged and left < merged[-1][1]:
            merged[-1] = (merged[-1][0], max(merged[-1][1], right))
        else:
            merged.append((left, right))
    return merged


def _complement(busy, start, end):
    """Return the periods of ``[start, end)`` outside the ``busy`` ones."""
    free, lower = [], start
    for left, right in busy:
        if left > lower:
            free.append((lower, min(left, end)))
        lower = max(lower, right)
        if lower >= end:
            break
    if lower < end:
        free.append((lower, end))
    return [(lower, upper) for lower, upper in free if lower < upper]


def _steps(changes, start, end, base):
    """Return the step function ``base`` + the ``(moment, change)`` so far."""
    totals = {}
    for moment, change in changes:
        totals[moment] = totals.get(moment, 0) + change
    moments = sorted(set(totals) | {start, end})
    level, steps = base, []
    for lower, upper in zip(moments, moments[1:]):
        level += totals.get(lower, 0)
        steps.append((lower, upper, level))
    return merge_steps(steps)


def _level(steps, moment):
    """Return the level of the step that holds ``moment``."""
    index = bisect.bisect_right([lower for lower, _upper, _n in steps],
                                moment) - 1
    return steps[index][2]


class _Lazy(dict):
    """A dict whose missing values ``compute(key)`` makes, once."""

    def __init__(self, compute):
        super().__init__()
        self._compute = compute

    def __missing__(self, key):
        self[key] = value = self._compute(key)
        return value


class _Sweep:
    """What each host's allocations use in a window that moves on in time.

    An allocation overlaps the window at ``t`` (widened by the margin, as
    :meth:`_Timeline.overlaps` tests) for ``t`` in ``(start - margin -
    duration, end + margin)``: it is counted in when the window passes
    the first and out when it reaches the second (:class:`_Held`).
    :meth:`move_to` goes forward only.
    """

    def __init__(self, booked, margin, duration, seats=None):
        self.at = datetime.datetime.min
        self._held = {}
        # What is told of each host whose holds change (see _SeatTotals).
        self.seats = seats
        self._ins, self._outs = [], []
        for host, allocations in booked.items():
            for a in allocations:
                after, until = a.start - margin - duration, a.end + margin
                # An empty interval never overlaps: not counted at all.
                if after < until:
                    self._ins.append((after, host, a.size))
                    self._outs.append((until, host, a.size))
        # By time only: sizes (None or tuples) do not compare.
        self._ins.sort(key=_FIRST)
        self._outs.sort(key=_FIRST)
        self._next_in = self._next_out = 0

    def move_to(self, start):
        """Count what overlaps a window at ``start`` (not before ``at``)."""
        ins, outs = self._ins, self._outs
        while self._next_in < len(ins) and ins[self._next_in][0] < start:
            self._add(ins[self._next_in], 1)
            self._next_in += 1
        while self._next_out < len(outs) and (
                outs[self._next_out][0] <= start):
            self._add(outs[self._next_out], -1)
            self._next_out += 1
        self.at = start

    def _add(self, event, sign):
        _moment, host, size = event
        held = self._held.get(host)
        if held is None:
            held = self._held[host] = _Held()
        held.add(size, sign)
        if self.seats is not None:
            self.seats.moved(host, held.used)

    def used_of(self, host):
        """Return what ``host`` uses at ``at``: None if busy as a whole."""
        held = self._held.get(host)
        return (0, 0, 0) if held is None else held.used


class _Overlay(collections.abc.Mapping):
    """A schedule's lists as changed by takes, over the schedule read.

    Looks the hosts up in ``source`` (without copying it) unless a take
    gave one a list of its own.
    """

    def __init__(self, source):
        self._source, self._changed = source, {}

    def __getitem__(self, host):
        """Return the allocations of ``host``, taken windows included."""
        booked = self._changed.get(host)
        return self._source[host] if booked is None else booked

    def __setitem__(self, host, booked):
        """Give ``host`` the list ``booked``."""
        self._changed[host] = booked

    def __iter__(self):
        """Iterate over the host ids, in the order of preference."""
        return iter(self._source)

    def __len__(self):
        """Return the number of hosts."""
        return len(self._source)


class _FreePeriods(collections.abc.Mapping):
    """``{host_id: [(from, to)]}``: each host's free periods in a period.

    Worked out for a host when first looked up, so that availability pays
    for the hosts it shows only (none when the caller may not see them).
    """

    def __init__(self, booked, busy, start, end):
        self._booked, self._busy = booked, busy
        self._start, self._end = start, end
        self._done = {}

    def __getitem__(self, host):
        """Return the free periods of ``host`` (KeyError if not one)."""
        periods = self._done.get(host)
        if periods is None:
            if host not in self._booked:
                raise KeyError(host)
            periods = self._done[host] = _complement(
                self._busy.get(host, ()), self._start, self._end)
        return periods

    def __iter__(self):
        """Iterate over the host ids, in the order of preference."""
        return iter(self._booked)

    def __len__(self):
        """Return the number of hosts."""
        return len(self._booked)


class _SeatCount:
    """The slices of a one-size :class:`Packed` left on all hosts.

    Kept up to date host by host (:meth:`moved`) rather than counted
    again at each moment.
    """

    def __init__(self, packed, held):
        (self.size, self.count), = packed.wanted
        self.capacity, self.held = packed.capacity, held
        self.most = MOST_COPIES * self.count
        self.seats = {host: self._of(host) for host in held}
        self.total = sum(self.seats.values())

    def _of(self, host):
        return _seats(self.capacity[host], self.held[host].used, self.size,
                      self.most)

    def moved(self, host):
        """Count again the slices left on ``host``, whose holds changed."""
        seats = self._of(host)
        self.total += seats - self.seats[host]
        self.seats[host] = seats

    def copies(self):
        """Return how many times the slices fit: seats left / count."""
        return min(self.total // self.count, MOST_COPIES)


class _SeatTotals:
    """The seats of each size of a stack left on all hosts, kept up to date.

    Each size counted alone, with none of the stack placed: a bound that
    packing the sizes one after the other can only lower. :meth:`moved`
    counts a host again when its holds change.
    """

    def __init__(self, capacity, wanted):
        self.capacity = capacity
        self.needed = collections.Counter()
        for size, count in wanted:
            self.needed[size] += count
        empty = (0, 0, 0)
        self._seats = {host: {size: _seats(room, empty, size, most)
                              for size, most in self.needed.items()}
                       for host, room in capacity.items()}
        self.totals = {size: sum(seats[size]
                                 for seats in self._seats.values())
                       for size in self.needed}

    def moved(self, host, used):
        """Count again the seats of ``host``, which now uses ``used``."""
        seats = self._seats[host]
        for size, most in self.needed.items():
            now = _seats(self.capacity[host], used, size, most)
            self.totals[size] += now - seats[size]
            seats[size] = now

    def may_fit(self):
        """Return whether every size has at least its slices' seats."""
        return all(self.totals[size] >= count
                   for size, count in self.needed.items())


class _Held:
    """What a host's allocations in force hold: slices, and whole holds."""

    def __init__(self):
        self.size = (0, 0, 0)
        self.whole = 0

    def add(self, size, sign):
        """Count an allocation in (``sign`` 1) or out (-1)."""
        if size is None:
            self.whole += sign
        else:
            self.size = tuple(u + sign * s for u, s in zip(self.size, size))

    @property
    def used(self):
        """Return what is used, as :meth:`Packed._used` does."""
        return None if self.whole else self.size


def _seats(capacity, used, size, most):
    """Count the slices of ``size`` (at most ``most``) left in ``capacity``.

    As the planner counts them: none on a host busy as a whole (``used``
    None) or short of the size in any resource, those a 0 of the size
    included; ``most`` for a size of 0 in every resource.
    """
    if used is None or any(total - taken < wanted for total, taken, wanted
                           in zip(capacity, used, size)):
        return 0
    return min([(total - taken) // wanted for total, taken, wanted
                in zip(capacity, used, size) if wanted] + [most])


def _how_many(capacity, used, size):
    """Return how many of ``size`` fit in ``capacity`` less ``used``."""
    return min((total - taken) // wanted
               for total, taken, wanted in zip(capacity, used, size)
               if wanted)


def _within(intervals, moment):
    """Return whether ``moment`` is in one of the sorted closed intervals."""
    index = bisect.bisect_right(intervals, (moment, _NEVER)) - 1
    return index >= 0 and intervals[index][1] >= moment
