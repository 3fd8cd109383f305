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

"""The sandbox's networks (made by :mod:`.provision`).

- ``public``: the external network, flat on the physical network
  ``public``, owned by the ``service`` project so that no project's
  boots find it among their own networks; its subnet
  :data:`PUBLIC_CIDR` hands out floating IPs and router gateways from
  :data:`PUBLIC_POOL` only, which leaves the rest of the range (but the
  gateway) for addresses an admin registers as reservable;
- per project (``admin`` and ``demo`` in the sandbox): a network
  ``private`` with a subnet and a router ``router`` whose gateway is on
  ``public``, so that a boot that names no network gets this one, and
  its server can have a floating IP.

This module names them and imports nothing of Neutron: the tests read
it.
"""

import ipaddress

PUBLIC = 'public'
PUBLIC_CIDR = '172.24.4.0/24'
PUBLIC_GATEWAY = '172.24.4.1'
PUBLIC_POOL = ('172.24.4.100', '172.24.4.199')
PRIVATE = 'private'
ROUTER = 'router'


def outside_pool(index):
    """The ``index``-th address of the public subnet outside its pool.

    Neither the gateway nor an address the pool hands out: one an admin
    may register as reservable (from ``172.24.4.2``, then above the pool).
    """
    below = int(ipaddress.ip_address(PUBLIC_POOL[0])) - int(
        ipaddress.ip_address(PUBLIC_GATEWAY)) - 1
    base = ipaddress.ip_address(PUBLIC_GATEWAY) + 1
    if index >= below:
        base = ipaddress.ip_address(PUBLIC_POOL[1]) + 1 - below
    return str(base + index)
