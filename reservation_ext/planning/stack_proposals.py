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

"""Schedule proposals of a Heat stack's needs, and leases made from them.

A stack is booked all or nothing (:mod:`reservation_ext.planning.stacks`),
so its proposals search one timeline of all its needs together
(:class:`~reservation_ext.planning.timelines.AllOf`):

* its servers, as slices of each flavor's size packed on the reservable
  hosts in the order the planner books them
  (:class:`~reservation_ext.planning.timelines.Packed`): the flavors in
  the stack's order, each from the preferred host up;
* its volumes' GB within ``[reservation] volume_reservable_gb``
  (:class:`~reservation_ext.planning.timelines.Capacity`);
* the addresses of each external network
  (:class:`~reservation_ext.planning.floating_ips.Addresses`).

A proposal holds the slices on their hosts, the GB on its row and the
addresses, as item ``n`` of its reservations. A lease made from it books
exactly that (:func:`book_held`): the same slices on the same hosts and
the same addresses, and the GB, each checked by the planners as for any
booking with the proposal's own holds ignored, so that what the
proposal held is what is booked.
"""

import collections

from db import tables
from reservation_ext import exceptions
from reservation_ext.planning import floating_ips
from reservation_ext.planning import planner
from reservation_ext.planning import timelines
from reservation_ext.planning import volume_capacity

HOSTS = tables.HOSTS
ALLOCATIONS = tables.ALLOCATIONS
_NEVER = 'no window can ever fit it'


def timeline(session, needs, span, busy, limits, for_update=False):
    """Return the timeline of a stack's needs over ``span``.

    :param needs: ``(servers, volume_gb, addresses)`` as
        :func:`reservation_ext.planning.stacks.book` takes them.
    :param limits: ``(usable, reservable_gb)`` as for it.
    :param for_update: holds will be written from it: take the volume
        capacity lock, and refuse needs that never fit.
    :raises InvalidInput: (``template``) with ``for_update``, a need that
        does not fit even when nothing else is booked.
    """
    servers, volume_gb, addresses = needs
    usable, reservable_gb = limits
    parts = []
    if servers:
        parts.append(_servers(session, servers, span, busy, usable,
                              for_update))
    if volume_gb:
        if for_update:
            _check_gb(volume_gb, reservable_gb)
            volume_capacity.lock(session)
        parts.append(timelines.Capacity(
            span, reservable_gb,
            volume_capacity.read_held(session, *span.reach, busy),
            volume_gb))
    for wanted in addresses:
        parts.append(_addresses(session, wanted, span, busy, for_update))
    return timelines.AllOf(span, parts)


def _servers(session, servers, span, busy, usable, for_update):
    """Return the :class:`~.timelines.Packed` of a stack's servers."""
    capacity, allocations, generations = planner.read_slice_schedules(
        session, span, busy, usable)
    wanted = [(server.size, server.count) for server in servers]
    if for_update:
        _check_servers(span, capacity, servers)
    return timelines.Packed(span, capacity, allocations, wanted,
                            generations=generations)


def _check_servers(span, capacity, servers):
    """Refuse servers that do not fit the reservable hosts left empty."""
    empty = timelines.Packed(span, capacity, {}, [
        (server.size, server.count) for server in servers])
    _placed, short = empty.pack(span.first)
    if short is not None:
        index, left = short
        server = servers[index]
        raise exceptions.InvalidInput(
            'template', '%d of the %d server(s) of flavor %s do not fit the '
            '%d reservable host(s) even with nothing else booked: %s'
            % (left, server.count, server.flavor, len(capacity), _NEVER))


def _check_gb(volume_gb, reservable_gb):
    if volume_gb > reservable_gb:
        raise exceptions.InvalidInput(
            'template', "the stack's volumes take %d GB, more than the %d "
            'GB reservable ([reservation] volume_reservable_gb): %s'
            % (volume_gb, reservable_gb, _NEVER))


def _addresses(session, wanted, span, busy, for_update):
    """Return the timeline of the addresses a stack wants of a network."""
    generations, allocations = floating_ips.read_schedule(
        session, wanted.network_id, *span.reach, busy)
    if for_update and len(generations) < wanted.count:
        raise exceptions.InvalidInput(
            'template', 'the stack has %d floating IP(s) of network %s, '
            'which has %d reservable: %s' % (
                wanted.count, wanted.network, len(generations), _NEVER))
    return floating_ips.Addresses(span, allocations, wanted.count,
                                  wanted.count, generations=generations)


def book_held(session, reservation_id, window, needs, hold, busy, limits):
    """Book for a stack exactly what item ``hold`` of a proposal holds.

    The slices on the hosts that hold them, the addresses held, and the
    GB, each booked by its planner (with the compare-and-swap of any
    booking).

    :param needs: the stack's, as for :func:`timeline`: what the lease's
        create found in Heat's preview; they must be what was proposed.
    :param hold: the :class:`~.planner.Owner` of the proposal's holds.
    :param busy: ignoring the proposal's holds.
    :raises Conflict: the stack needs other servers or addresses than
        the proposal holds (Heat's preview changed since).
    :raises NotEnoughResources: as for a booking (it cannot happen while
        the proposal holds them).
    """
    servers, volume_gb, addresses = needs
    usable, reservable_gb = limits
    owner = planner.Owner(reservation_id)
    for (host, size), count in sorted(
            _held_slices(session, hold, servers).items()):
        planner.allocate_slices(session, owner, *window, size, busy,
                                amount=count, usable=usable,
                                conditions=(HOSTS.c.id == host,))
    if volume_gb:
        volume_capacity.check(session, reservable_gb, *window, volume_gb,
                              busy)
    held = floating_ips.held(session, hold.proposal_id, hold.proposal_item)
    for wanted in addresses:
        mine = [row.address for row in floating_ips.free_addresses(
            session, wanted.network_id, *window, busy, addresses=held)]
        if len(mine) != wanted.count:
            raise _changed('%d floating IP(s) of network %s' % (
                wanted.count, wanted.network))
        floating_ips.allocate(session, owner, wanted.network_id, *window,
                              wanted.count, mine, busy)


def _held_slices(session, hold, servers):
    """Return ``{(host, size): count}`` of the slices a proposal holds.

    :raises Conflict: they are not the slices of ``servers``.
    """
    held = collections.Counter(
        (row.host_id, (row.vcpus, row.memory_mb, row.disk_gb))
        for row in session.execute(
            ALLOCATIONS.select().where(
                ALLOCATIONS.c.proposal_id == hold.proposal_id,
                ALLOCATIONS.c.proposal_item == hold.proposal_item)))
    sizes = collections.Counter()
    for (_host, size), count in held.items():
        sizes[size] += count
    wanted = collections.Counter()
    for server in servers:
        wanted[tuple(server.size)] += server.count
    if sizes != wanted:
        raise _changed(', '.join('%d server(s) of flavor %s' % (
            server.count, server.flavor) for server in servers) or
            'no servers')
    return held


def _changed(what):
    return exceptions.Conflict(
        "The stack now needs %s, not what the proposal holds (Heat's "
        'preview of it changed since): ask for new proposals.' % what)
