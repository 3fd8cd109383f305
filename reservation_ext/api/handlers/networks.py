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

"""Handlers of ``/v1/networks``: the reservable network segments (admin).

Chameleon's Blazar's paths and bodies. Every handler takes the
:class:`~reservation_ext.network_segments.inventory.NetworkInventory`,
the request and the arguments of its path, and returns ``(status,
body)``.
"""


def list_networks(inventory, req):
    """List the segments: ``GET /v1/networks``."""
    return 200, {'networks': inventory.list(req.context)}


def create_network(inventory, req):
    """Register a segment: ``POST /v1/networks``."""
    return 201, {'network': inventory.create(req.context, req.read_json())}


def show_network(inventory, req, network_id):
    """Show a segment: ``GET /v1/networks/{network_id}``."""
    return 200, {'network': inventory.get(req.context, network_id)}


def update_network(inventory, req, network_id):
    """Set extra capabilities: ``PUT /v1/networks/{network_id}``."""
    return 200, {'network': inventory.update(req.context, network_id,
                                             req.read_json())}


def delete_network(inventory, req, network_id):
    """Remove a segment: ``DELETE /v1/networks/{network_id}``."""
    inventory.delete(req.context, network_id)
    return 204, None


def list_allocations(inventory, req):
    """List the segments' current and future bookings.

    ``GET /v1/networks/allocations[?lease_id=&reservation_id=]``.
    """
    return 200, {'allocations': inventory.allocations(
        req.context, **_allocation_filters(req))}


def show_allocation(inventory, req, network_id):
    """Show a segment's bookings.

    ``GET /v1/networks/{network_id}/allocation``.
    """
    return 200, {'allocation': inventory.allocations(
        req.context, network_id=network_id, **_allocation_filters(req))[0]}


def _allocation_filters(req):
    return {key: req.GET[key] for key in ('lease_id', 'reservation_id')
            if key in req.GET}
