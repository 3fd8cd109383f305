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

"""Which of the equally valid free hosts a search takes first.

The one order of preference of every search that picks hosts (whole
hosts, instance slices and seats, healing replacements, proposals' holds:
:mod:`reservation_ext.planning.planner`) and of the power engine's choice
of the idle hosts kept on as spares
(:func:`reservation_ext.engine.power_manager.read_hosts`):

1. *Near the start*, when a power driver switches hosts (``[power]
   driver`` is not ``noop``) and the window starts before ``now +
   [power] power_on_lead_time``: the hosts that are on, then those
   powering on, then those off (``computehosts.power_state``), so that a
   lease made to start now lands on a host that is up.
2. The caller's own terms, if any (the tightest gaps of a slice search).
3. *Work at stake*, when the engine surveys the preemptible servers
   (``[reservation] preemptible_work_interval`` is not 0) and the window
   starts by ``now + [reservation] preemption_lead_time``, so that the
   booking is reclaimed at once: the hosts that run no preemptible
   server, then the least work done by those they run
   (:mod:`.work_at_stake`).
4. ``[power] host_weight_property``: the host's extra capability of that
   name as a number (``host_capabilities.num_value``), the lowest first
   or, with ``[power] host_weight_order = descending``, the highest;
   hosts without it (or whose value is not a number) come after those
   with it.
5. The host id.

Every term is an ORDER BY term of the search's one statement: the weight
is a correlated subquery served by host_capabilities' unique (host_id,
name) index, one index lookup per candidate host, and the work at stake
one lookup of host_preemptible_work's primary key. Unset options, and a
window beyond the leads, add no term: the order is then by host id.

A search that wants the first ``limit`` hosts only (:meth:`Preference.
first`) would test every host before sorting them by weight, where the
order by id stops at the ``limit``-th free host. So it is one UNION ALL
of a branch per group of hosts (power state near the start; idle or
running preemptible work with work at stake; weighted or not), each
limited and, but for the hosts with work (fewer, sorted by it), in an
order an index serves: the weighted hosts
in the order of host_capabilities' (name, num_value, host_id) index (and
its (name, num_value DESC, host_id) twin for the descending order), the
others by id; the outer ORDER BY sorts at most ``limit`` rows a branch.
"""

import dataclasses
import datetime

import sqlalchemy as sa

from db import tables
from reservation_ext.planning import work_at_stake

HOSTS = tables.HOSTS
CAPABILITIES = tables.CAPABILITIES
# computehosts.power_state, best first; anything else ranks after.
_POWER_RANK = (('on', 0), ('powering_on', 1))
# A branch's weight when its hosts have none, and its loss when they
# run no preemptible work.
_NO_WEIGHT = sa.cast(sa.null(), CAPABILITIES.c.num_value.type)
_NO_LOSS = sa.literal(0, sa.BigInteger)


@dataclasses.dataclass(frozen=True)
class Preference:
    """Order the free hosts by preference.

    :param weight_property: the extra capability that weighs hosts, or
        None (by id).
    :param descending: the highest weight first.
    :param power_lead: with a power driver, ``power_on_lead_time``: a
        window that starts before ``now + power_lead`` prefers hosts that
        are on. None: hosts are not switched (every host counts as on).
    :param stake_lead: with the engine's survey of preemptible work,
        ``preemption_lead_time``: a window that starts by ``now +
        stake_lead`` prefers the hosts whose preemptibles have done least
        work. None: no survey.
    """

    weight_property: str = None
    descending: bool = False
    power_lead: datetime.timedelta = None
    stake_lead: datetime.timedelta = None

    @classmethod
    def from_conf(cls, conf):
        """Return the preference the ``[power]`` options of ``conf`` say."""
        power, reservation = conf.power, conf.reservation
        return cls(power.host_weight_property or None,
                   power.host_weight_order == 'descending',
                   None if power.driver == 'noop' else
                   datetime.timedelta(seconds=power.power_on_lead_time),
                   datetime.timedelta(
                       seconds=reservation.preemption_lead_time)
                   if reservation.preemptible_work_interval else None)

    def near(self, now, start):
        """Return whether a window at ``start`` prefers hosts that are on."""
        return (self.power_lead is not None and start is not None and
                start < now + self.power_lead)

    def stakes(self, now, start):
        """Return whether a window at ``start`` weighs the work at stake."""
        return (self.stake_lead is not None and start is not None and
                start <= now + self.stake_lead)

    def weight(self, hosts=HOSTS):
        """Return a ``hosts`` row's weight: a scalar subquery (NULL: none)."""
        return (sa.select(CAPABILITIES.c.num_value)
                .where(CAPABILITIES.c.host_id == hosts.c.id,
                       CAPABILITIES.c.name == self.weight_property)
                .scalar_subquery())

    def order_by(self, now=None, start=None, then=(), hosts=HOSTS):
        """Return the ORDER BY terms on ``hosts``, the preferred host first.

        :param now: the time of the search.
        :param start: the window's start; None: no window (the spares).
        :param then: the caller's terms, after the power state and
            before the weight.
        """
        terms = []
        if self.near(now, start):
            terms.append(sa.case(
                *((hosts.c.power_state == state, rank)
                  for state, rank in _POWER_RANK),
                else_=len(_POWER_RANK)))
        terms += then
        if self.stakes(now, start):
            # The idle hosts first, as :meth:`first` ranks them: a work
            # of 0 (or less, Nova's clock ahead) must not tie with them.
            terms += [sa.case((work_at_stake.working(hosts), 1), else_=0),
                      sa.func.coalesce(work_at_stake.lost_on(now, hosts), 0)]
        if self.weight_property:
            terms += self._by_weight(self.weight(hosts))
        return terms + [hosts.c.id]

    def _by_weight(self, weight):
        """Return ORDER BY terms on ``weight``: the best, then none."""
        # CASE rather than NULLS LAST: alike on every backend.
        return [sa.case((weight.is_(None), 1), else_=0),
                weight.desc() if self.descending else weight]

    def groups(self, now, start, hosts=HOSTS):
        """Return the conditions of each group of hosts, preferred first."""
        if not self.near(now, start):
            return [()]
        states = [state for state, _rank in _POWER_RANK]
        return [(hosts.c.power_state == state,) for state in states] + [
            (hosts.c.power_state.not_in(states),)]

    def first(self, columns, conditions, limit, now=None, start=None,
              hosts=HOSTS):
        """Return a SELECT of the first ``limit`` hosts in this order.

        Of ``columns`` (plain columns of ``hosts``, its id among them) of
        the ``hosts`` rows that meet ``conditions``; all of them if
        ``limit`` is None. With a weight and a ``limit``, a UNION ALL of
        limited branches (see the module's docstring); otherwise one
        ORDER BY (:meth:`order_by`).
        """
        stmt = sa.select(*columns)
        if limit is None or not (self.weight_property or
                                 self.stakes(now, start)):
            return stmt.where(*conditions).order_by(
                *self.order_by(now, start, hosts=hosts)).limit(limit)
        # The cheap tests first: ``conditions`` (a busy test) only runs on
        # the hosts of a branch, and a branch only when those before it
        # found fewer than ``limit`` hosts: an unweighted branch would
        # otherwise test every host to find none when all are weighted.
        branches = []
        for n, select in enumerate(self._branches(stmt, now, start, hosts)):
            if branches:
                select = select.join(*_wanted(branches, limit, n))
            branches.append(select.where(*conditions).limit(limit)
                            .cte('preferred_%d' % n))
        # Columns by name: the column collections of the subqueries cost
        # more to build than the search.
        union = sa.union_all(*(sa.select(sa.literal_column('*'))
                               .select_from(branch) for branch in branches)
                             ).subquery('preferred')
        return (sa.select(*(sa.literal_column(column.name)
                            for column in columns)).select_from(union)
                .order_by(sa.literal_column('preference_rank'),
                          sa.literal_column('preference_loss'),
                          *self._by_weight(
                              sa.literal_column('preference_weight')),
                          sa.literal_column(hosts.c.id.name))
                .limit(limit))

    def _branches(self, stmt, now, start, hosts):
        """Return, per group, ``stmt`` on the idle hosts, then the others.

        Idle: running no preemptible work, when the work is at stake
        (:meth:`stakes`); otherwise every host of the group is. Each with
        the columns ``preference_rank``, ``_loss`` and ``_weight``.
        """
        stakes = self.stakes(now, start)
        branches = []
        for group in self.groups(now, start, hosts):
            idle = (*group, ~work_at_stake.working(hosts)) if stakes else group
            branches += self._idle(stmt, len(branches), idle, hosts)
            if stakes:
                branches.append(self._working(stmt, len(branches), now,
                                              group, hosts))
        return branches

    def _idle(self, stmt, rank, group, hosts):
        """Return ``stmt`` on the weighted hosts of ``group``, then others.

        Each in an order an index serves; the loss 0.
        """
        if not self.weight_property:
            return [_ranked(stmt, rank, _NO_WEIGHT, _NO_LOSS).where(*group)
                    .order_by(hosts.c.id)]
        weighed = sa.and_(CAPABILITIES.c.host_id == hosts.c.id,
                          CAPABILITIES.c.name == self.weight_property,
                          CAPABILITIES.c.num_value.is_not(None))
        value = CAPABILITIES.c.num_value
        return [
            _ranked(stmt, rank, value, _NO_LOSS).join(CAPABILITIES, weighed)
            .where(*group).order_by(
                value.desc() if self.descending else value,
                CAPABILITIES.c.host_id),
            _ranked(stmt, rank + 1, _NO_WEIGHT, _NO_LOSS)
            .where(~sa.exists().where(weighed), *group)
            .order_by(hosts.c.id)]

    def _working(self, stmt, rank, now, group, hosts):
        """Return ``stmt`` on the hosts of ``group`` that run preemptibles.

        The least work first (then weight and id, as :meth:`order_by`).
        """
        work = work_at_stake.PREEMPTIBLE_WORK
        loss = work_at_stake.lost(now)
        weight = self.weight(hosts) if self.weight_property else _NO_WEIGHT
        return (_ranked(stmt, rank, weight, loss)
                .join_from(hosts, work, work.c.host_id == hosts.c.id)
                .where(*group)
                .order_by(loss, *self._by_weight(weight), hosts.c.id))


def _ranked(stmt, rank, weight, loss):
    """Return ``stmt`` with the ``preference_`` rank, weight and loss."""
    return stmt.add_columns(sa.literal(rank).label('preference_rank'),
                            weight.label('preference_weight'),
                            loss.label('preference_loss'))


def _wanted(branches, limit, n):
    """Return a join target and clause: a one-row table, empty unless wanted.

    Wanted: the ``branches`` found fewer than ``limit`` hosts. The outer
    loop of the join, so the branch reads no host otherwise.
    """
    found = sum(sa.select(sa.func.count()).select_from(branch)
                .scalar_subquery() for branch in branches)
    wanted = sa.select(found.label('found')).subquery('wanted_%d' % n)
    return wanted, wanted.c.found < limit
