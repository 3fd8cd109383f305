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

"""When the preemptible servers of given hosts are reclaimed at the latest.

The engine's reclaim (:mod:`reservation_ext.engine.reclaim`) reaches a
host ``[reservation] preemption_lead_time`` seconds and ``cleaning_time``
minutes before its next booking starts, as
:func:`reservation_ext.planning.preemptible_placement.reclaim_times`
counts it for every host. :func:`reclaim_after` is the same rule for the
few hosts of a page of server views (one query, the hosts named), with
no far limit: what a preemptible server may expect, whenever it is.
Only bookings of reservations count (a proposal's hold expires), and
only those that have not started yet.
"""

import sqlalchemy as sa

from db import tables
from reservation_ext.planning import preemptible_placement

HOSTS = tables.HOSTS
ALLOCATIONS = tables.ALLOCATIONS


def reclaim_after(session, now, hostnames, lead_time, cleaning_time):
    """Return ``{hypervisor hostname: reclaim time}`` of ``hostnames``.

    A host with no booking that starts after ``now`` (or that is not
    reservable at all: not in the inventory) is not there.

    :param lead_time: ``[reservation] preemption_lead_time`` (seconds).
    :param cleaning_time: ``[reservation] cleaning_time`` (minutes).
    """
    names = sorted(set(hostnames) - {None})
    if not names:
        return {}
    ahead = preemptible_placement.horizon(now, lead_time,
                                          cleaning_time) - now
    rows = session.execute(
        sa.select(HOSTS.c.hypervisor_hostname,
                  sa.func.min(ALLOCATIONS.c.start_date))
        .join(ALLOCATIONS, ALLOCATIONS.c.host_id == HOSTS.c.id)
        .where(HOSTS.c.hypervisor_hostname.in_(names),
               ALLOCATIONS.c.start_date > now,
               # A booking never expires; a proposal's hold is not a
               # lease yet.
               ALLOCATIONS.c.expires_at.is_(None))
        .group_by(HOSTS.c.hypervisor_hostname))
    return {name: start - ahead for name, start in rows}
