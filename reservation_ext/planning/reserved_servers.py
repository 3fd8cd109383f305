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

"""The host a reserved server's slice is booked on.

A reserved server (``reserved`` or ``lease_params`` hint) has one
``instance_reservations`` row; the planner books its slice as one
allocation of that reservation. The scheduler filter passes only that
host (:mod:`nova_filters.reservation_filter`).
"""

import sqlalchemy as sa

from db import tables

INSTANCE_RESERVATIONS = tables.INSTANCE_RESERVATIONS
ALLOCATIONS = tables.ALLOCATIONS
HOSTS = tables.HOSTS


def booked_host(session, server_id):
    """Return the hypervisor hostname booked for ``server_id``, or None.

    None too for a server that is not reserved, or whose slice is not
    booked (yet).
    """
    return session.execute(
        sa.select(HOSTS.c.hypervisor_hostname)
        .join(ALLOCATIONS, ALLOCATIONS.c.host_id == HOSTS.c.id)
        .join(INSTANCE_RESERVATIONS,
              INSTANCE_RESERVATIONS.c.reservation_id ==
              ALLOCATIONS.c.reservation_id)
        .where(INSTANCE_RESERVATIONS.c.server_id == server_id)).scalar()
