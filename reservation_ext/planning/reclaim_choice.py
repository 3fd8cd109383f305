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

"""Which preemptible servers give way when a booking needs their host.

Preemptible servers (flavor extra spec ``reservation:preemptible=true``)
run on reservable capacity that no lease holds now. The planner does not
see them: it books hosts as if they were not there. So before a booking
starts (``[reservation] preemption_lead_time``), the preemptibles in its
way stop, and only those:

* a whole-host booking needs the whole host: all of them stop;
* slices need their size: the host's capacity (allocation ratios applied)
  must hold the slices that will be running, what the host's other
  servers use, and the preemptibles that stay. Preemptibles stop newest
  first (the oldest has waited and worked longest) until that holds.

The decision is a pure function of what the caller read, so that the
engine and the utilization benchmark decide alike.
"""

import collections

Server = collections.namedtuple('Server', 'id size created_at')
Server.__doc__ = """A preemptible server on a host.

``size`` is ``(vcpus, memory_mb, disk_gb)`` as the host counts it;
``created_at`` orders them (newest stop first).
"""

_NOTHING = (0, 0, 0)


def to_reclaim(capacity, needed, preemptibles, others=_NOTHING):
    """Return the preemptible servers to stop so that ``needed`` fits.

    :param capacity: the host's ``(vcpus, memory_mb, disk_gb)``, with the
        allocation ratios applied.
    :param needed: the bookings the host must serve: each a slice's
        ``(vcpus, memory_mb, disk_gb)``, or None for the whole host.
    :param preemptibles: the :class:`Server` tuples running on the host.
    :param others: what the host's other servers use and ``needed`` does
        not count already.
    :returns: the servers to stop, newest first.
    """
    newest_first = sorted(preemptibles, key=lambda server: server.created_at,
                          reverse=True)
    if any(size is None for size in needed):
        return newest_first
    used = _total([others, *needed, *(s.size for s in preemptibles)])
    stopping = []
    for server in newest_first:
        if _within(used, capacity):
            break
        stopping.append(server)
        used = tuple(have - less for have, less in zip(used, server.size))
    return stopping


def _total(sizes):
    return tuple(sum(column) for column in zip(_NOTHING, *sizes))


def _within(used, capacity):
    return all(have <= room for have, room in zip(used, capacity))
