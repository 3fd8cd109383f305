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

"""Reservable volume capacity: how many GB leases may hold at once.

The operator makes ``[reservation] volume_reservable_gb`` GB of the
cloud's block storage reservable. A ``virtual:volume`` reservation of
``size_gb`` for ``[start, end)`` is granted when ``size_gb`` plus the GB
of every other volume reservation whose lease overlaps the window (windows
that only touch do not overlap) is at most that. Summing every
overlapping reservation, rather than the peak at any one moment, is
conservative: two reservations that overlap the window but not each other
both count. It keeps the check one SQL statement, whatever the number of
leases, and a grant never depends on how the others are spread inside
the window.

Concurrent writers cannot both fit in the last GB: :func:`book` first
bumps the one row of ``volume_capacity_state``, which on PostgreSQL (and
MySQL) holds its row lock until the transaction ends, so the next writer
waits there and then sums what the first committed. On SQLite the
transaction began as a writer (:func:`db.api.writer`), which serializes
writers already.
"""

import sqlalchemy as sa

from db import api as db_api
from db import models
from reservation_ext import exceptions
from reservation_ext.leases.states import ReservationStatus

VOLUMES = models.VolumeReservation.__table__
RESERVATIONS = models.Reservation.__table__
LEASES = models.Lease.__table__
STATE = models.VolumeCapacityState.__table__


def reserved_gb(session, start, end, exclude_reservation_id=None):
    """GB held by volume reservations whose leases overlap [start, end).

    Reservations that ended (``deleted``) hold nothing any more.
    """
    conditions = [LEASES.c.start_date < end, LEASES.c.end_date > start,
                  RESERVATIONS.c.status != ReservationStatus.DELETED]
    if exclude_reservation_id is not None:
        conditions.append(RESERVATIONS.c.id != exclude_reservation_id)
    return session.execute(
        sa.select(sa.func.coalesce(sa.func.sum(VOLUMES.c.size_gb), 0))
        .select_from(VOLUMES)
        .join(RESERVATIONS, RESERVATIONS.c.id == VOLUMES.c.reservation_id)
        .join(LEASES, LEASES.c.id == RESERVATIONS.c.lease_id)
        .where(*conditions)).scalar()


def check(session, reservable_gb, start, end, size_gb,
          exclude_reservation_id=None):
    """Make sure ``size_gb`` more fit in ``[start, end)``.

    Takes the capacity lock first; call it before writing the
    reservation, in the same :func:`db.api.writer` transaction.

    :raises NotEnoughResources: they do not fit; the message says why.
    """
    _lock(session)
    held = reserved_gb(session, start, end, exclude_reservation_id)
    if held + size_gb > reservable_gb:
        raise exceptions.NotEnoughResources(
            'Not enough volume capacity: %d GB wanted from %s to %s, but '
            'reservations overlapping that window already hold %d of the '
            '%d GB reservable ([reservation] volume_reservable_gb).'
            % (size_gb, start, end, held, reservable_gb))


def _lock(session):
    """Serialize the capacity checks of concurrent transactions."""
    db_api.bump_counter(session, STATE)
