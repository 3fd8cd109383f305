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

"""Free network segments for a window, and their bookings, in SQL.

A segment is booked whole by one lease at a time
(:class:`~reservation_ext.planning.exclusive.Bookable`). The request's
capability queries are compiled against the segments
(:data:`reservation_ext.planning.capabilities.NETWORK_SEGMENTS`); the
lowest segment id of the first network type and physical network comes
first. A schedule proposal holds one segment for its window until it
expires (:func:`timeline`, :func:`write_holds`); a lease made from it
books that segment.
"""

import uuid

from db import tables
from reservation_ext import exceptions
from reservation_ext.planning import exclusive
from reservation_ext.store import network_segments as store

NETWORK_SEGMENTS = tables.NETWORK_SEGMENTS
NETWORK_ALLOCATIONS = tables.NETWORK_ALLOCATIONS

SEGMENTS = exclusive.Bookable(
    NETWORK_SEGMENTS, NETWORK_ALLOCATIONS, NETWORK_ALLOCATIONS.c.network_id,
    (NETWORK_SEGMENTS.c.network_type, NETWORK_SEGMENTS.c.physical_network,
     NETWORK_SEGMENTS.c.segment_id),
    store.bump_generations_if_unchanged, store.reschedule)


def allocate(session, reservation_id, start, end, busy, conditions=(),
             segment_ids=None):
    """Book the first free matching segment for ``[start, end)``.

    :param segment_ids: only consider these segments (what a proposal
        holds).
    :returns: the id of the booked segment.
    :raises NotEnoughResources: none is free; nothing is written.
    :raises ConcurrentUpdate: another writer booked it first.
    """
    free = SEGMENTS.find_free(session, start, end, busy, conditions,
                              item_ids=segment_ids)
    if not free:
        raise exceptions.NotEnoughResources(
            'No network segment matching the request is free from %s to '
            '%s.' % (start, end))
    SEGMENTS.claim(session, free[:1])
    network_id = free[0][0]
    store.book(session, {'id': str(uuid.uuid4()), 'network_id': network_id,
                         'reservation_id': reservation_id,
                         'start_date': start, 'end_date': end})
    return network_id


def booked_segment(session, reservation_id):
    """Return the id of the segment a reservation booked (or None)."""
    booked = SEGMENTS.booked(session, reservation_id)
    return booked[0] if booked else None


def timeline(session, span, busy, conditions):
    """Return the timeline of the segments matching ``conditions``.

    One segment a window, the first free in the planner's order.
    """
    segments, allocations = SEGMENTS.read_schedule(session, *span.reach,
                                                   busy, conditions)
    return exclusive.Schedule(
        span, allocations, 1, 1,
        {segment: row[0] for segment, row in segments.items()},
        write_holds)


def write_holds(session, holds, generations):
    """Write proposals' holds of segments (:meth:`.Bookable.write_holds`)."""
    SEGMENTS.write_holds(session, holds, generations, store.hold)
