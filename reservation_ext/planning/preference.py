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
of the idle hosts kept on as spares (:func:`ordered_host_ids`):

1. *Near the start*, when a power driver switches hosts (``[power]
   driver`` is not ``noop``) and the window starts before ``now +
   [power] power_on_lead_time``: the hosts that are on, then those
   powering on, then those off (``computehosts.power_state``), so that a
   lease made to start now lands on a host that is up.
2. The caller's own terms, if any (the tightest gaps of a slice search).
3. ``[power] host_weight_property``: the host's extra capability of that
   name as a number (``host_capabilities.num_value``), the lowest first
   or, with ``[power] host_weight_order = descending``, the highest;
   hosts without it (or whose value is not a number) come after those
   with it.
4. The host id.

Every term is an ORDER BY term of the search's one statement: the weight
is a correlated subquery served by host_capabilities' unique (host_id,
name) index, one index lookup per candidate host. Unset options add no
term, so the order is then the planner's former one, by host id.
"""

import dataclasses
import datetime

import sqlalchemy as sa

from db import models

HOSTS = models.ComputeHost.__table__
CAPABILITIES = models.HostCapability.__table__
# computehosts.power_state, best first; anything else ranks after.
_POWER_RANK = (('on', 0), ('powering_on', 1))


@dataclasses.dataclass(frozen=True)
class Preference:
    """The order of preference among free hosts.

    :param weight_property: the extra capability that weighs hosts, or
        None (by id).
    :param descending: the highest weight first.
    :param power_lead: with a power driver, ``power_on_lead_time``: a
        window that starts before ``now + power_lead`` prefers hosts that
        are on. None: hosts are not switched (every host counts as on).
    """

    weight_property: str = None
    descending: bool = False
    power_lead: datetime.timedelta = None

    @classmethod
    def from_conf(cls, conf):
        """The preference the ``[power]`` options of ``conf`` say."""
        power = conf.power
        return cls(power.host_weight_property or None,
                   power.host_weight_order == 'descending',
                   None if power.driver == 'noop' else
                   datetime.timedelta(seconds=power.power_on_lead_time))

    def near(self, now, start):
        """Whether a window at ``start`` prefers the hosts that are on."""
        return (self.power_lead is not None and start is not None and
                start < now + self.power_lead)

    def weight(self, hosts=HOSTS):
        """The weight of a ``hosts`` row: a scalar subquery (NULL: none)."""
        return (sa.select(CAPABILITIES.c.num_value)
                .where(CAPABILITIES.c.host_id == hosts.c.id,
                       CAPABILITIES.c.name == self.weight_property)
                .scalar_subquery())

    def order_by(self, now=None, start=None, then=(), hosts=HOSTS):
        """The ORDER BY terms on ``hosts``, the preferred host first.

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
        if self.weight_property:
            weight = self.weight(hosts)
            # CASE rather than NULLS LAST: alike on every backend.
            terms += [sa.case((weight.is_(None), 1), else_=0),
                      weight.desc() if self.descending else weight]
        return terms + [hosts.c.id]


def ordered_host_ids(session, preference, conditions=()):
    """The ids of the hosts matching ``conditions``, preferred first.

    Every host by default, reservable or not. No window: the power state
    plays no part. One statement.
    """
    return session.execute(
        sa.select(HOSTS.c.id).where(*conditions)
        .order_by(*preference.order_by())).scalars().all()
