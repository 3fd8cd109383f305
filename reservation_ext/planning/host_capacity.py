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

"""How much of a host servers may use, as Placement counts it.

Nova enforces a host's size through Placement, whose capacity of a
resource is ``(total - reserved) * allocation_ratio``: the compute reports
its ``total`` with the ``reserved`` part nova.conf keeps for the host
itself (``[DEFAULT] reserved_host_cpus``, ``reserved_host_memory_mb``,
``reserved_host_disk_mb``, the last in MB, which Nova rounds up to whole
GB) and the allocation ratio. Every comparison of a host with the slices
booked on it (the planner's SQL, the timelines of schedule proposals, the
engine's reclaim) goes through :meth:`Usable.of`, so that what the
planner grants is what Nova lets run.

A host whose reserve exceeds its size in a resource has a negative
usable amount there: it takes no slice.
"""

import dataclasses
import math

# Nova's defaults of [DEFAULT] initial_{cpu,ram,disk}_allocation_ratio.
NOVA_DEFAULT_RATIOS = (4.0, 1.0, 1.0)
# Nova's defaults of [DEFAULT] reserved_host_cpus, reserved_host_memory_mb
# and reserved_host_disk_mb (in MB).
NOVA_DEFAULT_RESERVED = (0, 512, 0)
_RESERVED_OPTIONS = ('reserved_host_cpus', 'reserved_host_memory_mb',
                     'reserved_host_disk_mb')


@dataclasses.dataclass(frozen=True)
class Usable:
    """Hold the reserve and allocation ratios that make a host's usable size.

    :param ratios: the ``(vcpus, memory_mb, disk_gb)`` allocation ratios.
    :param reserved: what the host keeps, as ``(vcpus, memory_mb,
        disk_gb)``.

    The default counts a host as it is: no reserve, ratios 1.
    """

    ratios: tuple = (1.0, 1.0, 1.0)
    reserved: tuple = (0, 0, 0)

    def of(self, vcpus, memory_mb, local_gb):
        """Return a host's usable ``(vcpus, memory_mb, disk_gb)``.

        ``(total - reserved) * ratio`` of each: numbers, or SQL column
        expressions (the planner's statements use it on computehosts).
        """
        return tuple((total - reserved) * ratio for total, reserved, ratio
                     in zip((vcpus, memory_mb, local_gb), self.reserved,
                            self.ratios))


def from_nova_conf(conf):
    """Return the :class:`Usable` of nova.conf's options in ``conf``.

    Nova's options are registered where Nova runs: in nova-api (where
    leases are booked) and nova-scheduler ``conf`` reads nova.conf's
    values. Elsewhere, as in the engine's own process (its reclaim), they
    are not registered and Nova's defaults apply: allocation ratios 4.0,
    1.0, 1.0 and a reserve of 0 vCPUs, 512 MB of RAM and 0 MB of disk.
    """
    return Usable(ratios=allocation_ratios(conf), reserved=reserved(conf))


def allocation_ratios(conf):
    """Return Nova's (vCPU, RAM, disk) allocation ratios, from nova.conf.

    A ratio that is not set falls back to Nova's initial ratio, as in
    Nova's computes.
    """
    ratios = []
    for kind, default in zip(('cpu', 'ram', 'disk'), NOVA_DEFAULT_RATIOS):
        ratio = _nova_option(conf, '%s_allocation_ratio' % kind)
        if ratio is None:
            ratio = _nova_option(conf, 'initial_%s_allocation_ratio' % kind)
        ratios.append(default if ratio is None else ratio)
    return tuple(ratios)


def reserved(conf):
    """Return the ``(vcpus, memory_mb, disk_gb)`` nova.conf keeps back.

    The disk's MB are rounded up to whole GB, as Nova reports them.
    """
    cpus, memory_mb, disk_mb = (
        default if value is None else value
        for value, default in zip(
            (_nova_option(conf, name) for name in _RESERVED_OPTIONS),
            NOVA_DEFAULT_RESERVED))
    return cpus, memory_mb, math.ceil(disk_mb / 1024)


def _nova_option(conf, name):
    try:
        return getattr(conf, name)
    except (AttributeError, KeyError):
        return None
