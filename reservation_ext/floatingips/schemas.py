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
"""The ``/v1/floatingips`` request body (Blazar v1) and the address check.

A reservable floating IP is an address of an external network that
Neutron does not hand out itself: inside one of the network's subnets,
outside their allocation pools, not a gateway, as Blazar checks it.
"""

import netaddr

from reservation_ext import exceptions

CREATE = {
    'type': 'object',
    'properties': {
        'floating_network_id': {
            'type': 'string', 'minLength': 1, 'maxLength': 255,
            'description': "an external network's id"},
        'floating_ip_address': {
            'type': 'string', 'minLength': 1, 'maxLength': 64,
            'description': 'an IPv4 or IPv6 address'},
    },
    'additionalProperties': False,
    'required': ['floating_network_id', 'floating_ip_address'],
}


def parse_address(text, field='floating_ip_address'):
    """Return an IP address as Neutron writes it (its canonical text).

    :raises InvalidInput: naming ``field``, for anything but an address.
    """
    try:
        return str(netaddr.IPAddress(text))
    except (netaddr.AddrFormatError, ValueError, TypeError):
        raise exceptions.InvalidInput(field, '%r is not an IP address'
                                      % (text,))


def reservable_subnet(network, subnets, address):
    """Return the subnet a reservable address belongs to, or raise.

    :param network: the network's view; ``subnets`` its subnets' views
        (:class:`reservation_ext.clients.network.NeutronClient`'s).
    :raises InvalidInput: naming ``floating_network_id`` (the network is
        not external) or ``floating_ip_address``.
    """
    if not network.get('is_router_external'):
        raise exceptions.InvalidInput(
            'floating_network_id', 'network %s is not external'
            % network['id'])
    ip = netaddr.IPAddress(address)
    for subnet in subnets:
        if ip not in netaddr.IPNetwork(subnet['cidr']):
            continue
        used = netaddr.IPSet(netaddr.IPRange(pool['start'], pool['end'])
                             for pool in subnet['allocation_pools'] or ())
        if subnet.get('gateway_ip'):
            used.add(netaddr.IPAddress(subnet['gateway_ip']))
        if ip in used:
            raise exceptions.InvalidInput(
                'floating_ip_address', '%s is in an allocation pool or is '
                'the gateway of subnet %s, which Neutron hands out itself'
                % (address, subnet['id']))
        return subnet
    raise exceptions.InvalidInput(
        'floating_ip_address', '%s is in no subnet of network %s'
        % (address, network['id']))
