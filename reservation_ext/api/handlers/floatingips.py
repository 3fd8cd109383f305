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
"""Handlers of ``/v1/floatingips``: the reservable floating IPs (admin only).

Every handler takes the
:class:`~reservation_ext.floatingips.inventory.FloatingIPInventory`, the
request and the arguments of its path, and returns ``(status, body)``,
Blazar's.
"""


def list_floatingips(inventory, req):
    """List the reservable floating IPs: ``GET /v1/floatingips``."""
    return 200, {'floatingips': inventory.list(req.context)}


def create_floatingip(inventory, req):
    """Register a reservable floating IP: ``POST /v1/floatingips``."""
    return 201, {'floatingip': inventory.create(req.context,
                                                req.read_json())}


def show_floatingip(inventory, req, floatingip_id):
    """Show a reservable floating IP: ``GET /v1/floatingips/{id}``."""
    return 200, {'floatingip': inventory.get(req.context, floatingip_id)}


def delete_floatingip(inventory, req, floatingip_id):
    """Remove a reservable floating IP: ``DELETE /v1/floatingips/{id}``."""
    inventory.delete(req.context, floatingip_id)
    return 204, None
