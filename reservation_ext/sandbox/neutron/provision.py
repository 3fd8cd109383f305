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

"""The networks of :mod:`.topology`, made in Neutron's process.

Through Neutron's plugins with an admin context, as Neutron's own
auto-allocated topology is made (``neutron.services.auto_allocate``),
before the API serves anyone: no token, no request, nothing asked of
Keystone but the projects' ids, so the sandbox's start does not wait on
a dozen API calls. Only once Neutron's API application is loaded (it
loads the plugins).
"""

from neutron_lib import context
from neutron_lib.plugins import constants
from neutron_lib.plugins import directory
from neutron_lib.plugins import utils as plugin_utils

from reservation_ext.sandbox.neutron import settings
from reservation_ext.sandbox.neutron import topology


def _plugins():
    return (directory.get_plugin(), directory.get_plugin(constants.L3),
            context.get_admin_context())


def create_public(project_id):
    """``public`` and its subnet (see :mod:`.topology`); the network id."""
    core, _, ctx = _plugins()
    network = plugin_utils.create_network(core, ctx, {'network': {
        'name': topology.PUBLIC, 'project_id': project_id,
        'router:external': True, 'provider:network_type': 'flat',
        'provider:physical_network': settings.PUBLIC_PHYSNET}})
    plugin_utils.create_subnet(core, ctx, {'subnet': {
        'name': topology.PUBLIC + '-subnet', 'network_id': network['id'],
        'project_id': project_id, 'ip_version': 4,
        'cidr': topology.PUBLIC_CIDR, 'gateway_ip': topology.PUBLIC_GATEWAY,
        'enable_dhcp': False, 'allocation_pools': [
            {'start': topology.PUBLIC_POOL[0],
             'end': topology.PUBLIC_POOL[1]}]}})
    return network['id']


def create_private(project_id, public_id, cidr):
    """A project's network ``private``, its subnet and ``router``."""
    core, l3, ctx = _plugins()
    network = plugin_utils.create_network(core, ctx, {'network': {
        'name': topology.PRIVATE, 'project_id': project_id}})
    subnet = plugin_utils.create_subnet(core, ctx, {'subnet': {
        'name': topology.PRIVATE + '-subnet', 'network_id': network['id'],
        'project_id': project_id, 'ip_version': 4, 'cidr': cidr}})
    router = l3.create_router(ctx, {'router': {
        'name': topology.ROUTER, 'project_id': project_id,
        'admin_state_up': True,
        'external_gateway_info': {'network_id': public_id}}})
    l3.add_router_interface(ctx, router['id'], {'subnet_id': subnet['id']})
