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

"""Bookings written straight into the leases DB, for tests.

A pending lease with one reservation and its ``host_allocations`` row,
as the planner leaves them, without the planner: for the tests of what
reads bookings (the scheduler's filter and weigher, the engine's reclaim,
the reclaim times).
"""

import datetime
import uuid

import sqlalchemy as sa

from db import models

LEASES = models.Lease.__table__
RESERVATIONS = models.Reservation.__table__
ALLOCATIONS = models.HostAllocation.__table__


def insert(session, host_id, start, minutes=60, whole_host=True,
           status='pending', resource_type='physical:host', size=(0, 0, 0),
           expires_at=None):
    """Write one booking of ``host_id`` from ``start``.

    The allocation's id is the reservation's.

    :param size: the slice's ``(vcpus, memory_mb, disk_gb)``.
    :param expires_at: set for a proposal's hold.
    :returns: ``(lease id, reservation id)``.
    """
    lease_id, reservation_id = str(uuid.uuid4()), str(uuid.uuid4())
    end = start + datetime.timedelta(minutes=minutes)
    session.execute(sa.insert(LEASES).values(
        id=lease_id, name=lease_id, project_id='owner', start_date=start,
        end_date=end, status='PENDING'))
    session.execute(sa.insert(RESERVATIONS).values(
        id=reservation_id, lease_id=lease_id, resource_type=resource_type,
        status=status))
    vcpus, memory_mb, disk_gb = size
    session.execute(sa.insert(ALLOCATIONS).values(
        id=reservation_id, host_id=host_id, reservation_id=reservation_id,
        start_date=start, end_date=end, whole_host=whole_host, vcpus=vcpus,
        memory_mb=memory_mb, disk_gb=disk_gb, expires_at=expires_at))
    return lease_id, reservation_id
