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

"""Handlers of ``/v1/storage-pools``: the reservable Cinder pools (admin).

Every handler takes the
:class:`~reservation_ext.storage_pools.inventory.StoragePoolInventory`,
the request and the arguments of its path, and returns ``(status,
body)``.
"""


def list_storage_pools(inventory, req):
    """List the reservable pools: ``GET /v1/storage-pools``."""
    return 200, {'storage_pools': inventory.list(req.context)}


def create_storage_pool(inventory, req):
    """Register a pool Cinder reports: ``POST /v1/storage-pools``."""
    return 201, {'storage_pool': inventory.create(req.context,
                                                  req.read_json())}


def show_storage_pool(inventory, req, pool_id):
    """Show a reservable pool: ``GET /v1/storage-pools/{pool_id}``."""
    return 200, {'storage_pool': inventory.get(req.context, pool_id)}


def update_storage_pool(inventory, req, pool_id):
    """Set a pool's extra capabilities: ``PUT /v1/storage-pools/{pool_id}``."""
    return 200, {'storage_pool': inventory.update(req.context, pool_id,
                                                  req.read_json())}


def delete_storage_pool(inventory, req, pool_id):
    """Remove a reservable pool: ``DELETE /v1/storage-pools/{pool_id}``."""
    inventory.delete(req.context, pool_id)
    return 204, None
