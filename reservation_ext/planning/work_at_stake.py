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

"""The preemptible work a booking made for now would stop on each host.

A booking that starts within ``[reservation] preemption_lead_time`` is
reclaimed at once: the preemptible servers in its way stop, and what
they worked so far is lost (:mod:`.reclaim_choice`). Of the hosts that
suit it equally, the planner takes first those whose preemptibles have
worked least: a host that runs none first, then the least work
(:mod:`.preference`). A whole-host booking stops all of a host's
preemptibles; a slice stops the newest ones only, so that the whole
work is the most it may lose there.

The engine surveys the preemptible servers of every reservable host
(:mod:`reservation_ext.engine.preemptible_work`) and keeps, per host,
two numbers that need no rewrite as the work grows: the preemptibles'
vCPUs and the sum of each one's vCPUs times its creation time (seconds
since the epoch). The work done by a time ``t`` is then ``vcpus * t -
vcpu_start_sum`` vCPU-seconds. This module turns Nova's views into those
numbers, and them into the planner's ORDER BY terms: pure functions, so
that the engine and the utilization benchmark count alike.
"""

import calendar
import collections

from oslo_utils import timeutils
import sqlalchemy as sa

from db import tables
from reservation_ext.planning import preemptible_placement

HOSTS = tables.HOSTS
PREEMPTIBLE_WORK = tables.PREEMPTIBLE_WORK
# The key of the hypervisor a server runs on, in an admin's view.
HYPERVISOR = 'OS-EXT-SRV-ATTR:hypervisor_hostname'
# The statuses of servers that do no work: a reclaim loses nothing there.
IDLE_STATUSES = frozenset(('ERROR', 'DELETED', 'SOFT_DELETED'))

Work = collections.namedtuple('Work', 'vcpus vcpu_start_sum')
Work.__doc__ = """The preemptible work of a host, as the table keeps it."""


def seconds(when):
    """Return a naive UTC datetime as whole seconds since the epoch."""
    return calendar.timegm(when.utctimetuple())


def of_servers(servers, host_ids):
    """Return ``{host id: Work}`` of the preemptible servers listed.

    :param servers: Nova's views of servers at a microversion that shows
        the flavor's extra specs and the scheduler hints (2.100), as an
        admin sees them; those in error or being deleted do no work.
    :param host_ids: ``{hypervisor hostname: host id}`` of the hosts of
        the inventory (``computehosts``); the servers elsewhere do not
        count.
    """
    work = collections.defaultdict(lambda: Work(0, 0))
    for server in servers:
        host_id = host_ids.get(server.get(HYPERVISOR))
        if (host_id is None or not _working(server) or
                not preemptible_placement.server_is_preemptible(server)):
            continue
        vcpus = (server.get('flavor') or {}).get('vcpus') or 0
        started = seconds(timeutils.normalize_time(
            timeutils.parse_isotime(server['created'])))
        have = work[host_id]
        work[host_id] = Work(have.vcpus + vcpus,
                             have.vcpu_start_sum + vcpus * started)
    return {host: one for host, one in work.items() if one.vcpus}


def _working(server):
    """Return whether a server's view says it does work."""
    return (server.get('status') not in IDLE_STATUSES and
            server.get('OS-EXT-STS:task_state') != 'deleting')


def lost(now, work=PREEMPTIBLE_WORK):
    """Return SQL: the vCPU-seconds a ``work`` row's host has done by now."""
    # In 64 bits: PostgreSQL would multiply two integers in 32.
    return (sa.cast(work.c.vcpus, sa.BigInteger) *
            sa.literal(seconds(now), sa.BigInteger) - work.c.vcpu_start_sum)


def lost_on(now, hosts=HOSTS):
    """Return a ``hosts`` row's work done by now: a scalar subquery.

    NULL for a host that runs no preemptible server.
    """
    return (sa.select(lost(now))
            .where(PREEMPTIBLE_WORK.c.host_id == hosts.c.id)
            .scalar_subquery())


def working(hosts=HOSTS):
    """Return SQL: a ``hosts`` row runs preemptible servers (it has work)."""
    return sa.exists().where(PREEMPTIBLE_WORK.c.host_id == hosts.c.id)
