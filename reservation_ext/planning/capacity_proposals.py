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

"""Proposals and availability of instance-capacity reservations.

An instance-capacity reservation (``virtual:instance`` with ``amount``,
or ``flavor:instance``) books ``amount`` slices of one size with one
search of the planner (:func:`~reservation_ext.planning.planner.
allocate_slices`), which places them by ``affinity`` on the matching
reservable hosts, in the planner's order of preference:

* ``True``: all on the first host that holds them all;
* ``False``: one on each of the first ``amount`` hosts with room for one;
* ``None``: as many as fit on each host from the first up.

:class:`CapacitySlices` is the timeline of such a request: a window fits
when the slices can be placed so, each host's room counted as the
planner counts it (no whole-host allocation overlaps the window widened
by the cleaning time; the slices that overlap it leave room in every
resource); a take places them exactly so and holds them. A proposal
holds the slices on their hosts as item ``n`` of its reservations, and a
lease made from it books exactly those (:func:`book_held`), so that the
proposal and the create agree, affinity included.

Availability counts ``servers``: at each moment, the most servers of the
size that one reservation with that affinity could book then (``True``:
the most that fit on one host; ``False``: the hosts with room for one;
``None``: all that fit on every host). That is the number a user
compares their ``amount`` with: the request fits at that moment exactly
when ``amount`` is not more than it, and the count does not depend on
``amount``. (Copies of ``amount`` servers would hide how far a request
is from fitting, and would not say how many servers a smaller request
gets.) A window of a lease needs that many for its whole length, on the
same hosts: the proposals answer that.
"""

import collections
import dataclasses
import math

from db import tables
from reservation_ext import exceptions
from reservation_ext.planning import planner
from reservation_ext.planning import timelines

HOSTS = tables.HOSTS
ALLOCATIONS = tables.ALLOCATIONS
SIZE_FIELDS = ('vcpus', 'memory_mb', 'disk_gb')
_NEVER = 'no window can ever fit it'
# How availability joins the servers each host has room for, by affinity.
_JOIN = {None: sum,
         True: lambda seats: max(seats, default=0),
         False: lambda seats: sum(1 for count in seats if count)}


@dataclasses.dataclass(frozen=True)
class Request:
    """What an instance-capacity reservation asks the hosts for.

    :param size: a server's ``(vcpus, memory_mb, disk_gb)``, not all 0.
    :param amount: how many servers (at least 1).
    :param affinity: True, False or None, as the lease says.
    :param conditions: SQL conditions on computehosts (the compiled
        ``resource_properties``).
    :param fields: the request's fields that give each part of the
        size, as the user wrote them (``flavor_id`` for a flavor's), for
        the errors.
    """

    size: tuple
    amount: int
    affinity: bool = None
    conditions: tuple = ()
    fields: tuple = SIZE_FIELDS


class CapacitySlices(timelines._Timeline):
    """Track ``amount`` slices of one size, placed by affinity.

    :param capacity: ``{host_id: (vcpus, memory_mb, disk_gb)}`` usable,
        of the matching hosts in the planner's order of preference.
    :param allocations: ``{host_id: [Allocation, ...]}`` as for
        :class:`~.timelines.Slices`.
    :param request: the :class:`Request`.
    :param generations: ``{host_id: generation}`` as read, for the
        compare-and-swap of the holds written.
    """

    def __init__(self, span, capacity, allocations, request,
                 generations=None):
        """Keep a copy of the allocations: takes add to it."""
        super().__init__(span)
        self.margin = span.margin
        self.generations = generations or {}
        self.capacity, self.request = capacity, request
        self._booked = {host: list(allocations.get(host, ()))
                        for host in capacity}

    def _ends(self):
        """Return where the hosts' room grows: allocations' ends, widened."""
        return (a.end + self.margin
                for booked in self._booked.values() for a in booked)

    def host_seats(self, host, start):
        """Return how many slices (at most ``amount``) fit ``host`` at start.

        As the planner counts a host's room for a window at ``start``.
        """
        end = start + self.span.duration
        used = (0, 0, 0)
        for allocation in self._booked[host]:
            if self.overlaps(allocation, start, end):
                if allocation.size is None:
                    return 0
                used = tuple(u + s for u, s in zip(used, allocation.size))
        return seats(self.capacity[host], used, self.request.size,
                     self.request.amount)

    def place(self, start):
        """Return the host of each slice at ``start``, or None (no fit).

        Each host's room is counted only until the slices are placed.
        """
        return planner.place(((host, self.host_seats(host, start))
                              for host in self._booked),
                             self.request.amount, self.request.affinity)

    def fits(self, start):
        """Return whether the slices can be placed at ``start``."""
        return self.place(start) is not None

    def take(self, start):
        """Hold the slices where :meth:`place` puts them at ``start``.

        :returns: ``[(host, size)]``, one per slice.
        """
        placed = [(host, self.request.size) for host in self.place(start)]
        for host, size in placed:
            self._booked[host].append(self._window(start, size))
        self._freed_at(start + self.span.duration + self.margin)
        return placed

    @staticmethod
    def held(placed):
        """Return what :meth:`take` holds: ``([(host, size)], 0)``."""
        return list(placed), 0

    def timeline(self, start, end):
        """Return how many servers one reservation could have, and when.

        :returns: ``([(from, to, servers)], {host_id: [(from, to,
            servers)]})``: the servers of the size that one reservation
            of this affinity could book at each moment of ``[start,
            end)`` (module doc), and the periods in which each host has
            room for some, with how many.
        """
        rooms = {host: self._host_steps(host, start, end)
                 for host in self._booked}
        changes = collections.defaultdict(list)
        for host, steps in rooms.items():
            for lower, _upper, count in steps:
                changes[lower].append((host, count))
        moments = sorted(set(changes) | {start, end})
        join, current, steps = _JOIN[self.request.affinity], {}, []
        for lower, upper in zip(moments, moments[1:]):
            current.update(changes.get(lower, ()))
            steps.append((lower, upper, join(current.values())))
        return timelines.merge_steps(steps), {
            host: [room for room in host_rooms if room[2]]
            for host, host_rooms in rooms.items()}

    def _host_steps(self, host, start, end):
        """Return the slices ``host`` has room for over ``[start, end)``.

        Steps cover the whole period (0 where it has none), swept once
        over the host's allocations widened by the cleaning time.
        """
        changes = collections.defaultdict(list)
        for allocation in self._booked[host]:
            if self.overlaps(allocation, start, end):
                changes[max(allocation.start - self.margin, start)].append(
                    (allocation.size, 1))
                changes[min(allocation.end + self.margin, end)].append(
                    (allocation.size, -1))
        moments = sorted(set(changes) | {start, end})
        used, whole, steps = (0, 0, 0), 0, []
        for lower, upper in zip(moments, moments[1:]):
            for size, sign in changes.get(lower, ()):
                if size is None:
                    whole += sign
                else:
                    used = tuple(u + sign * s for u, s in zip(used, size))
            steps.append((lower, upper, 0 if whole else seats(
                self.capacity[host], used, self.request.size)))
        return timelines.merge_steps(steps)


def seats(capacity, used, size, most=None):
    """Count the slices of ``size`` left in ``capacity`` less ``used``.

    As the planner: none on a host short of the size in any resource (a
    resource the size does not use included: a host over its capacity
    there takes no slice); at most ``most``, when given.
    """
    if any(total - taken < wanted for total, taken, wanted
           in zip(capacity, used, size)):
        return 0
    counts = [(total - taken) // wanted for total, taken, wanted
              in zip(capacity, used, size) if wanted]
    return min(counts + ([] if most is None else [most]))


def timeline(session, request, span, busy, usable, for_update=False):
    """Return the :class:`CapacitySlices` of ``request`` over ``span``.

    The matching reservable hosts' usable sizes and allocations are read
    as :func:`.planner.read_slice_schedules` reads every host's.

    :param usable: the hosts' :class:`.host_capacity.Usable` size.
    :param for_update: holds will be written from it: refuse a request
        that never fits.
    :raises InvalidInput: with ``for_update``, the request does not fit
        the matching hosts even when nothing is booked (naming the field
        that makes it so).
    """
    hosts, allocations = planner.read_schedules(
        session, *span.reach, busy, conditions=request.conditions,
        sizes=True)
    # Sizes are whole numbers: a slice fits the usable size when it fits
    # its floor.
    capacity = {host: tuple(math.floor(value)
                            for value in usable.of(*row[1:]))
                for host, row in hosts.items()}
    if for_update:
        check_fits(capacity, request)
    return CapacitySlices(span, capacity, allocations, request,
                          {host: row[0] for host, row in hosts.items()})


def check_fits(capacity, request):
    """Refuse a request that the matching hosts cannot hold when empty.

    :raises InvalidInput: ``resource_properties`` when no host matches,
        the size's field when no host has room for one server,
        ``amount`` when the servers do not fit as ``affinity`` places
        them.
    """
    rooms = [(host, seats(total, (0, 0, 0), request.size))
             for host, total in capacity.items()]
    if not rooms:
        raise exceptions.InvalidInput(
            'resource_properties', 'no reservable host matches the '
            'request: %s' % _NEVER)
    if not any(count for _host, count in rooms):
        raise exceptions.InvalidInput(
            _size_field(capacity, request), 'a server of %s fits none of '
            'the %d reservable host(s) that match the request: %s'
            % (_what(request.size), len(rooms), _NEVER))
    if planner.place(rooms, request.amount, request.affinity) is None:
        raise exceptions.InvalidInput('amount', _too_many(rooms, request))


def _size_field(capacity, request):
    """Name the field of the first resource no host has enough of."""
    for index, wanted in enumerate(request.size):
        if all(total[index] < wanted for total in capacity.values()):
            return request.fields[index]
    return request.fields[0]


def _too_many(rooms, request):
    """Say why ``amount`` servers never fit, as ``affinity`` places them."""
    counts = [count for _host, count in rooms]
    what = '%d server(s) of %s' % (request.amount, _what(request.size))
    if request.affinity:
        return ('%s on one host: at most %d fit on one of the %d reservable '
                'host(s) that match the request, even with nothing else '
                'booked: %s' % (what, max(counts), len(counts), _NEVER))
    if request.affinity is False:
        return ('%s on different hosts: %d reservable host(s) match the '
                'request and have room for one: %s'
                % (what, sum(1 for count in counts if count), _NEVER))
    return ('%s: at most %d fit on the %d reservable host(s) that match '
            'the request, even with nothing else booked: %s'
            % (what, sum(counts), len(counts), _NEVER))


def _what(size):
    """Say a server's size as the planner's refusals do."""
    return '%d vCPU(s), %d MB of RAM and %d GB of disk' % tuple(size)


def book_held(session, reservation_id, window, request, hold, busy,
              usable):
    """Book for a reservation exactly the slices a proposal's item holds.

    Host by host, by the planner (with the compare-and-swap of any
    booking), so that the booking keeps the affinity the holds were
    placed by.

    :param window: ``(start, end)``, the proposal's.
    :param hold: the :class:`~.planner.Owner` of the proposal's holds.
    :param busy: ignoring the proposal's holds.
    :raises Conflict: the holds are not ``amount`` slices of the size
        (a flavor made anew with other sizes since).
    :raises NotEnoughResources: as for a booking (it cannot happen while
        the proposal holds them).
    """
    held = collections.Counter(
        (row.host_id, (row.vcpus, row.memory_mb, row.disk_gb))
        for row in session.execute(ALLOCATIONS.select().where(
            ALLOCATIONS.c.proposal_id == hold.proposal_id,
            ALLOCATIONS.c.proposal_item == hold.proposal_item)))
    sizes = collections.Counter()
    for (_host, size), count in held.items():
        sizes[size] += count
    if sizes != collections.Counter({tuple(request.size): request.amount}):
        raise exceptions.Conflict(
            'The reservation now asks for %d server(s) of %s, not what '
            'the proposal holds: ask for new proposals.'
            % (request.amount, _what(request.size)))
    owner = planner.Owner(reservation_id)
    for (host, size), count in sorted(held.items()):
        planner.allocate_slices(session, owner, *window, size, busy,
                                amount=count, usable=usable,
                                conditions=(HOSTS.c.id == host,))
