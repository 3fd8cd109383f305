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

"""Handlers of ``/v1/os-hosts``: the reservable hosts (admin only).

Every handler takes the
:class:`~reservation_ext.hosts.inventory.HostInventory`, the request and
the arguments of its path, and returns ``(status, body)``.
"""


def list_hosts(inventory, req):
    """List the reservable hosts: ``GET /v1/os-hosts``."""
    return 200, {'hosts': inventory.list(req.context)}


def create_host(inventory, req):
    """Add a Nova compute host to the pool: ``POST /v1/os-hosts``."""
    return 201, {'host': inventory.create(req.context, req.read_json())}


def show_host(inventory, req, host_id):
    """Show a reservable host: ``GET /v1/os-hosts/{host_id}``."""
    return 200, {'host': inventory.get(req.context, host_id)}


def update_host(inventory, req, host_id):
    """Set a host's extra capabilities: ``PUT /v1/os-hosts/{host_id}``."""
    return 200, {'host': inventory.update(req.context, host_id,
                                          req.read_json())}


def delete_host(inventory, req, host_id):
    """Remove a host from the pool: ``DELETE /v1/os-hosts/{host_id}``."""
    inventory.delete(req.context, host_id)
    return 204, None


def list_allocations(inventory, req):
    """List the hosts' allocations, narrowed by the query.

    ``GET /v1/os-hosts/allocations[?lease_id=&reservation_id=]``.
    """
    return 200, {'allocations': inventory.allocations(
        req.context, **_allocation_filters(req))}


def show_allocation(inventory, req, host_id):
    """Show a host's allocations.

    ``GET /v1/os-hosts/{host_id}/allocation``.
    """
    return 200, {'allocation': inventory.allocations(
        req.context, host_id=host_id, **_allocation_filters(req))[0]}


def list_properties(inventory, req):
    """List the extra capability names in use.

    ``GET /v1/os-hosts/properties[?detail=1&all=1]``: ``detail`` adds
    their values, ``all`` the private ones.
    """
    return 200, {'resource_properties': inventory.properties(
        req.context, detail=req.flag('detail'),
        include_private=req.flag('all'))}


def update_property(inventory, req, property_name):
    """Make an extra capability private or public.

    ``PATCH /v1/os-hosts/properties/{property_name}``.
    """
    return 200, {'resource_property': inventory.update_property(
        req.context, property_name, req.read_json())}


def _allocation_filters(req):
    return {key: req.GET[key] for key in ('lease_id', 'reservation_id')
            if key in req.GET}
