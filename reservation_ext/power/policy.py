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

"""Power policy: which transition each reservable host makes next, and when.

Pure decisions, with no I/O, shared by the engine
(:mod:`reservation_ext.engine.power_manager`), the host views and the energy
benchmark. A host is described by its power state and its *windows*: the
``[start, end)`` of each live allocation (booking or proposal hold) that
has not ended, widened by the cleaning time, in start order.

- A host that is **on** is switched off at the start of the first gap
  between its windows (now, if no window holds it now) that lets it stay
  off at least ``min_off_time`` before it must be switched on again
  (``power_on_lead_time`` before the next window starts); after its last
  window every gap is long enough.
- A host that is **off** is switched on ``power_on_lead_time`` before its
  first window starts (at once if that is already past).
- A host that is **powering_on** waits until Nova reports its compute
  service up; the engine then enables it and records it on.
- A host that is not power-managed (``power_managed=false``) is switched
  on if it is off, and then left alone.
- Spares: the first *n* idle hosts that are on (in the
  planner's order of preference, which the caller gives) are not switched
  off; when fewer idle hosts are on, the preferred idle hosts that are
  off are switched on. A lease made to start now, or a booking healed
  away from a host that did not come up, then finds a host that is on.
  Idle here means free for a while: no window holds the host now or
  starts before ``power_on_lead_time + min_off_time`` from now (the
  hosts the policy would switch off). A host on (or powering on) for a
  booking about to start is not a spare: counting it would switch the
  spare off at each such boot, and on again at the booking's start.
  The idle hosts without any window come first, then the others, each
  in the order given: a lease made to start now, for hours or days,
  fits on a host booked by nobody, not on one booked a few hours on.
  *n* is ``spare_hosts``, or ``spare_share`` of the hosts that have not
  failed if that is more: a lease made to start now takes as many hosts
  as it asks for at once, and the largest ones grow with the cloud.

Failed hosts (the host monitor's ``failed_at``) are neither switched off
nor counted as spares; one that is off is still switched on for its
bookings.
"""

import dataclasses
import datetime
import math

from reservation_ext.states import PowerState

# The host's power states, as the policy names them (one source: the
# ground floor's PowerState, which the host rows' writer uses too).
ON = PowerState.ON
OFF = PowerState.OFF
POWERING_ON = PowerState.POWERING_ON
STATES = PowerState.ALL

POWER_ON = 'power_on'
POWER_OFF = 'power_off'

# Why a transition is planned (recorded with it, shown in the host view).
IDLE = 'idle'
BOOKING = 'booking'
SPARE = 'spare'
UNMANAGED = 'unmanaged'


@dataclasses.dataclass(frozen=True)
class Settings:
    """Hold the ``[power]`` options the policy reads, as timedeltas."""

    min_off_time: datetime.timedelta = datetime.timedelta(minutes=30)
    lead_time: datetime.timedelta = datetime.timedelta(minutes=15)
    spare_hosts: int = 1
    spare_share: float = 0.0

    @classmethod
    def from_conf(cls, conf):
        """Return the settings of ``conf.power``."""
        return cls(datetime.timedelta(seconds=conf.power.min_off_time),
                   datetime.timedelta(seconds=conf.power.power_on_lead_time),
                   conf.power.spare_hosts, conf.power.spare_share)

    def spares(self, hosts):
        """Return how many idle hosts stay on, of ``hosts`` not failed."""
        return max(self.spare_hosts, math.ceil(self.spare_share * hosts))


@dataclasses.dataclass(frozen=True)
class Host:
    """Hold what the policy knows of a reservable host.

    :param windows: ``(start, end)`` of its live allocations that end
        after now, cleaning time included, sorted by start.
    """

    id: int
    state: str = ON
    managed: bool = True
    failed: bool = False
    windows: tuple = ()

    def held(self, now):
        """Return whether a window holds the host at ``now``."""
        return any(start <= now < end for start, end in self.windows)


@dataclasses.dataclass(frozen=True)
class Transition:
    """Describe a planned transition: ``action`` at ``at``, for ``reason``."""

    action: str
    at: datetime.datetime
    reason: str

    def due(self, now):
        """Return whether the transition is to be made at ``now``."""
        return self.at <= now


def next_transition(host, now, settings):
    """Return the next transition of ``host`` alone (spares aside), or None."""
    if not host.managed:
        return Transition(POWER_ON, now, UNMANAGED) \
            if host.state == OFF else None
    if host.state == OFF:
        return _power_on(host, now, settings)
    if host.state == ON and not host.failed:
        return _power_off(host, now, settings)
    return None


def _power_on(host, now, settings):
    if not host.windows:
        return None
    return Transition(POWER_ON, max(now, host.windows[0][0] -
                                    settings.lead_time), BOOKING)


def _power_off(host, now, settings):
    free_from = now
    for start, end in host.windows:
        if start - settings.lead_time - free_from >= settings.min_off_time:
            break
        free_from = max(free_from, end)
    return Transition(POWER_OFF, free_from, IDLE)


def plan(hosts, now, settings):
    """Return each host's next transition: ``{host.id: Transition/None}``.

    :param hosts: :class:`Host` s in the planner's order of preference
        (the spares kept on are the first idle ones).
    """
    planned = {host.id: next_transition(host, now, settings)
               for host in hosts}
    idle = sorted((host for host in hosts if not host.failed and
                   _free_for_a_while(host, now, settings)),
                  key=lambda host: bool(host.windows))
    count = settings.spares(sum(not host.failed for host in hosts))
    spares = [host for host in idle if host.state in (ON, POWERING_ON)]
    for host in spares[:count]:
        if _due(planned[host.id], POWER_OFF, now):
            planned[host.id] = None
    # Never negative: a slice [:-n] would take all hosts but n.
    wanted = max(0, count - len(spares))
    for host in [h for h in idle if h.state == OFF and h.managed][:wanted]:
        planned[host.id] = Transition(POWER_ON, now, SPARE)
    return planned


def _free_for_a_while(host, now, settings):
    """Return whether no window holds ``host`` before the policy's horizon.

    The horizon: ``lead_time + min_off_time`` from now, the shortest time
    free for which the policy switches a host off.
    """
    horizon = now + settings.lead_time + settings.min_off_time
    return not any(start < horizon and end > now
                   for start, end in host.windows)


def _due(transition, action, now):
    return (transition is not None and transition.action == action and
            transition.due(now))
