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

"""What a Heat stack needs, as Heat's preview of it shows.

Heat's preview (``POST /stacks/preview``) lists the resources a stack
would make, with their properties resolved from the parameters and the
environment; the members of a nested stack (a resource group's, counted
out) come as a nested list. Of those, three kinds take capacity that
leases book:

* ``OS::Nova::Server``: one server of its ``flavor`` (a name or an id,
  as written);
* ``OS::Cinder::Volume``: ``size`` GB (a volume without a size, made
  from an image or snapshot, cannot be booked ahead: the request is
  refused, naming it);
* ``OS::Neutron::FloatingIP``: one address of its ``floating_network``
  (a name or an id), for a resource of the stack itself: the start
  gives it the address booked for it by its name
  (:mod:`.addresses`), which a member of a nested stack does not have
  (the request is refused, naming it).

Everything else (ports, attachments, associations, networks) takes no
booked capacity. Reading Heat's preview rather than the template means
parameters, environments and resource groups count as Heat counts them.
"""

import collections
import dataclasses

from reservation_ext import exceptions
from reservation_ext.planning import stacks as planning
from reservation_ext.store import stacks as store

SERVER = store.SERVER
VOLUME = store.VOLUME
FLOATING_IP = 'OS::Neutron::FloatingIP'


@dataclasses.dataclass(frozen=True)
class Needs:
    """A stack's servers by flavor, volumes and addresses by network.

    ``volume_gb`` is the volumes' gigabytes, ``volumes`` how many they
    are; ``floating_ips`` maps each network to the names of the floating
    IP resources of it.
    """

    servers: dict
    volume_gb: int
    floating_ips: dict
    volumes: int = 0

    @property
    def empty(self):
        """Say whether the stack needs no booked capacity at all."""
        return not (self.servers or self.volume_gb or self.floating_ips)


def from_preview(preview):
    """Return the :class:`Needs` of Heat's preview of a stack.

    :param preview: the ``stack`` of Heat's preview answer.
    :raises InvalidInput: (``template``) a volume has no size.
    """
    servers = collections.Counter()
    floating_ips = collections.defaultdict(list)
    volume_sizes = []
    for resource, nested in _flat(preview.get('resources') or []):
        kind, properties = resource['resource_type'], resource['properties']
        if kind == SERVER:
            servers[str(properties['flavor'])] += 1
        elif kind == VOLUME:
            volume_sizes.append(_size(resource))
        elif kind == FLOATING_IP:
            if nested:
                raise exceptions.InvalidInput(
                    'template', 'floating IP %s is in a nested stack: a '
                    'stack reservation books the floating IPs of the '
                    "stack's own resources" % resource['resource_name'])
            floating_ips[str(properties['floating_network'])].append(
                resource['resource_name'])
    return Needs(dict(sorted(servers.items())), sum(volume_sizes),
                 {network: sorted(names)
                  for network, names in sorted(floating_ips.items())},
                 len(volume_sizes))


def to_booking(needs, size_of, network_id_of):
    """Return what the planner books for ``needs``.

    ``(servers, volume_gb, addresses)`` as
    :func:`reservation_ext.planning.stacks.book` takes them.

    :param size_of: the ``(vcpus, memory_mb, disk_gb)`` of a flavor, by
        its name or id as the template wrote it (the caller asks Nova).
    :param network_id_of: the id of a network, by its name or id.
    """
    return ([planning.Servers(flavor, size_of(flavor), count)
             for flavor, count in needs.servers.items()],
            needs.volume_gb,
            [planning.Addresses(network, network_id_of(network),
                                len(names))
             for network, names in needs.floating_ips.items()])


def _flat(resources, nested=False):
    """Yield ``(resource, nested)`` of a preview, nested stacks' too."""
    for resource in resources:
        if isinstance(resource, list):
            yield from _flat(resource, True)
        else:
            yield resource, nested


def _size(volume):
    size = volume['properties'].get('size')
    if not size:
        raise exceptions.InvalidInput(
            'template', 'volume %s has no size: a stack reservation books '
            'volumes by their size' % volume['resource_name'])
    return int(size)
