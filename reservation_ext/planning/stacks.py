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

"""The booking of a Heat stack's needs, all or nothing.

A stack's servers, volumes and floating IPs are booked by the planners
that book each kind for every other lease, in the caller's lease-create
transaction, so that a stack never takes what another lease holds and
another lease never takes what a stack holds:

* the servers of each flavor, as that many slices of the flavor's size
  (:func:`~reservation_ext.planning.planner.allocate_slices`, packed from
  the most preferred host up, as capacity reservations without affinity
  are): the reservation's seats, each with its size;
* the volumes' gigabytes, within ``[reservation] volume_reservable_gb``
  (:func:`~reservation_ext.planning.volume_capacity.check`; the stack's
  record then holds them);
* the addresses of each external network
  (:func:`~reservation_ext.planning.floating_ips.allocate`).

The first need that does not fit raises
:class:`~reservation_ext.exceptions.NotEnoughResources` naming it and how
much of it is missing; the caller's transaction then rolls back what the
others booked.
"""

import dataclasses

from reservation_ext import dates
from reservation_ext import exceptions
from reservation_ext.planning import floating_ips
from reservation_ext.planning import planner
from reservation_ext.planning import volume_capacity


@dataclasses.dataclass(frozen=True)
class Servers:
    """``count`` servers of a flavor: its name as written, its size."""

    flavor: str
    size: tuple
    count: int


@dataclasses.dataclass(frozen=True)
class Addresses:
    """``count`` floating IPs of a network: its name as written, its id."""

    network: str
    network_id: str
    count: int


def book(session, reservation_id, window, needs, busy, limits):
    """Book a stack's servers, volume GB and addresses for ``window``.

    :param window: ``(start, end)``.
    :param needs: ``(servers, volume_gb, addresses)``: :class:`Servers`
        and :class:`Addresses` lists and the volumes' GB.
    :param limits: ``(usable, reservable_gb)``: the hosts' usable size (a
        :class:`~reservation_ext.planning.host_capacity.Usable`) and
        ``[reservation] volume_reservable_gb``.
    :raises NotEnoughResources: a need does not fit; the message names it.
    """
    servers, volume_gb, addresses = needs
    usable, reservable_gb = limits
    owner = planner.Owner(reservation_id)
    for wanted in servers:
        _book_servers(session, owner, window, wanted, busy, usable)
    if volume_gb:
        volume_capacity.check(session, reservable_gb, *window, volume_gb,
                              busy)
    for wanted in addresses:
        _book_addresses(session, owner, window, wanted, busy)


def _book_servers(session, owner, window, wanted, busy, usable):
    start, end = window
    try:
        planner.allocate_slices(session, owner, start, end, wanted.size,
                                busy, amount=wanted.count, usable=usable)
    except exceptions.NotEnoughResources:
        fit = planner.count_slices(session, start, end, wanted.size, busy,
                                   usable, most=wanted.count)
        raise exceptions.NotEnoughResources(
            '%d of %d server(s) of flavor %s do not fit between %s and %s.'
            % (wanted.count - fit, wanted.count, wanted.flavor,
               _text(start), _text(end))) from None


def _book_addresses(session, owner, window, wanted, busy):
    start, end = window
    try:
        floating_ips.allocate(session, owner, wanted.network_id, start, end,
                              wanted.count, [], busy)
    except exceptions.NotEnoughResources:
        free = len(floating_ips.free_addresses(
            session, wanted.network_id, start, end, busy,
            limit=wanted.count))
        raise exceptions.NotEnoughResources(
            '%d of %d floating IP(s) of network %s are not free between '
            '%s and %s.' % (wanted.count - free, wanted.count,
                            wanted.network, _text(start),
                            _text(end))) from None


def _text(when):
    return when.strftime(dates.BLAZAR_DATE_FORMAT)
