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

"""A stack's floating IPs on the addresses booked for it.

Neutron lets only an administrator choose a floating IP's address, and
a stack is made with its user's roles. So the engine makes the booked
addresses in the lease's project itself (as for ``virtual:floatingip``),
and the stack's ``OS::Neutron::FloatingIP`` resources take them: Heat's
environment maps each of them (``resource_registry``, by resource name)
to a provider template of this module that associates the made address
with the resource's ``port_id``, if any, and shows the address's
attributes as ``OS::Neutron::FloatingIP`` has them. ``get_resource``
gives the floating IP's id, ``get_attr`` its address, network and port,
as before; deleting the stack disassociates the address, and the lease's
end deletes it.
"""

import json

# The parameters of the provider template: the properties of
# OS::Neutron::FloatingIP (Heat 27), with Heat's types for them.
_PROPERTIES = {
    'floating_network': 'string', 'floating_network_id': 'string',
    'floating_subnet': 'string', 'value_specs': 'json',
    'port_id': 'string', 'fixed_ip_address': 'string',
    'floating_ip_address': 'string', 'dns_name': 'string',
    'dns_domain': 'string',
}
_DEFAULTS = {'string': '', 'json': {}}
ENVIRONMENT_FILE = 'reservation-floating-ips.yaml'
PROVIDER_FILE = 'reservation-floating-ip-%s.yaml'


def provider_template(floatingip_id, address, network_id, project_id):
    """Return the text of a provider template for one booked address."""
    has_port = {'not': {'equals': [{'get_param': 'port_id'}, '']}}
    no_fixed = {'equals': [{'get_param': 'fixed_ip_address'}, '']}
    # One association or none: with the fixed IP asked for, if any (a
    # property set to null is validated as set).
    conditions = {'on_port': {'and': [has_port, no_fixed]},
                  'on_fixed_ip': {'and': [has_port, {'not': no_fixed}]}}
    association = {'floatingip_id': floatingip_id,
                   'port_id': {'get_param': 'port_id'}}
    outputs = {
        'OS::stack_id': floatingip_id, 'floating_ip_address': address,
        'floating_network_id': network_id, 'tenant_id': project_id,
        'port_id': {'get_param': 'port_id'},
        'fixed_ip_address': {'get_param': 'fixed_ip_address'},
        'router_id': '',
        'show': {'id': floatingip_id, 'floating_ip_address': address,
                 'floating_network_id': network_id,
                 'port_id': {'get_param': 'port_id'}},
    }
    return json.dumps({
        'heat_template_version': '2021-04-16',
        'description': 'The booked floating IP %s' % address,
        'parameters': {name: {'type': kind, 'default': _DEFAULTS[kind]}
                       for name, kind in sorted(_PROPERTIES.items())},
        'conditions': conditions,
        'resources': {
            'association': {
                'type': 'OS::Neutron::FloatingIPAssociation',
                'condition': 'on_port', 'properties': association},
            'fixed_ip_association': {
                'type': 'OS::Neutron::FloatingIPAssociation',
                'condition': 'on_fixed_ip', 'properties': dict(
                    association,
                    fixed_ip_address={'get_param': 'fixed_ip_address'})}},
        'outputs': {name: {'value': value}
                    for name, value in sorted(outputs.items())},
    }, indent=1, sort_keys=True)


def environment(made, project_id):
    """Return the environment file and the files it maps resources to.

    :param made: ``{resource name: (floating IP id, address, network
        id)}``: the addresses made for the stack's floating IPs.
    :returns: ``(environment_files, files)`` for Heat's stack create.
    """
    if not made:
        return [], {}
    files = {PROVIDER_FILE % name: provider_template(
        fip_id, address, network_id, project_id)
        for name, (fip_id, address, network_id) in made.items()}
    registry = {name: {'OS::Neutron::FloatingIP': PROVIDER_FILE % name}
                for name in made}
    files[ENVIRONMENT_FILE] = json.dumps(
        {'resource_registry': {'resources': registry}}, sort_keys=True)
    return [ENVIRONMENT_FILE], files
