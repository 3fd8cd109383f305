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

"""The engine's survey of the preemptible work on the compute hosts.

Every ``[reservation] preemptible_work_interval`` seconds (0: never),
each engine lists every project's servers through Nova (service user,
microversion 2.100, page after page) and writes, per host of the
inventory, the work its preemptible servers do
(:mod:`reservation_ext.planning.work_at_stake`): the planner books the
hosts that would lose least of it first for a lease that starts within
the preemption lead time. The reclaim writes a host's figure again
after it stopped some of its preemptibles
(:mod:`reservation_ext.engine.reclaim`).

A figure is at most an interval old: a preemptible placed since the
last survey is not counted yet, so a booking may still take its host
first. Several engines each survey; they write the same figures, and a
survey that fails (Nova or the DB) is logged and made again after the
interval. This module is the one writer of ``host_preemptible_work``.
"""

import datetime

import sqlalchemy as sa

from db import api as db_api
from db import tables
from reservation_ext.planning import work_at_stake

HOSTS = tables.HOSTS
PREEMPTIBLE_WORK = tables.PREEMPTIBLE_WORK


class WorkSurvey:
    """Surveys the preemptible servers on the hosts, every interval.

    :param conf: a ConfigOpts with the ``[reservation]`` options.
    :param clock: the source of "now" (:mod:`reservation_ext.clock`).
    :param clients: the plugins' clients; ``clients.nova`` lists the
        servers (read at first use only).
    """

    def __init__(self, conf, clock, clients):
        self.conf = conf.reservation
        self.clock = clock
        self.clients = clients
        self._next = None

    def run(self, ctx):
        """Survey the hosts when the interval has passed since the last.

        :returns: 0: a survey leaves no work for the next poll.
        """
        interval = self.conf.preemptible_work_interval
        now = self.clock.now()
        if not interval or (self._next is not None and now < self._next):
            return 0
        self._next = now + datetime.timedelta(seconds=interval)
        with db_api.context_manager.reader.using(ctx) as session:
            host_ids = dict(session.execute(
                sa.select(HOSTS.c.hypervisor_hostname, HOSTS.c.id)).all())
        if host_ids:
            work = work_at_stake.of_servers(
                self.clients.nova.servers_with_hints(), host_ids)
            with db_api.writer(ctx, self.clock) as session:
                record(session, work, now)
        return 0


def record(session, work, now, host_ids=None):
    """Record the work surveyed: ``{host id: work_at_stake.Work}``.

    :param host_ids: the hosts surveyed (None: every host); those of them
        without work run no preemptible server any more.
    """
    which = (sa.true() if host_ids is None
             else PREEMPTIBLE_WORK.c.host_id.in_(host_ids))
    had = {row.host_id: work_at_stake.Work(row.vcpus, row.vcpu_start_sum)
           for row in session.execute(sa.select(PREEMPTIBLE_WORK)
                                      .where(which))}
    gone = sorted(set(had) - set(work))
    if gone:
        session.execute(sa.delete(PREEMPTIBLE_WORK).where(
            PREEMPTIBLE_WORK.c.host_id.in_(gone)))
    for host_id, one in sorted(work.items()):
        if host_id not in had:
            session.execute(sa.insert(PREEMPTIBLE_WORK).values(
                host_id=host_id, recorded_at=now, **one._asdict()))
        elif had[host_id] != one:
            session.execute(
                sa.update(PREEMPTIBLE_WORK)
                .where(PREEMPTIBLE_WORK.c.host_id == host_id)
                .values(recorded_at=now, **one._asdict()))
