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

"""The one writer of the storage pools and their extra capabilities.

``storage_pools`` (:data:`db.tables.STORAGE_POOLS`): the Cinder pools the
inventory registers, with what Cinder reported for them then, and
removes. ``storage_pool_extra_capabilities``: the extra capabilities an
admin gives a pool, replaced as a whole.
"""

import sqlalchemy as sa

from db import tables
from reservation_ext.store import hosts as store_hosts

STORAGE_POOLS = tables.STORAGE_POOLS
STORAGE_POOL_CAPABILITIES = tables.STORAGE_POOL_CAPABILITIES


def register_pool(session, values, capabilities):
    """Add a reservable pool (``values``: its columns and ``id``).

    :param capabilities: its extra capabilities, ``{name: value}``.
    """
    session.execute(sa.insert(STORAGE_POOLS).values(**values))
    set_capabilities(session, values['id'], capabilities)


def set_capabilities(session, pool_id, capabilities):
    """Replace the extra capabilities of a pool by ``{name: value}``."""
    session.execute(sa.delete(STORAGE_POOL_CAPABILITIES).where(
        STORAGE_POOL_CAPABILITIES.c.pool_id == pool_id))
    rows = [{'pool_id': pool_id, 'name': name, 'value': str(value),
             'num_value': store_hosts.as_number(str(value))}
            for name, value in sorted(capabilities.items())]
    if rows:
        session.execute(sa.insert(STORAGE_POOL_CAPABILITIES), rows)


def mark_updated(session, pool_id, now):
    """Record that an admin changed a pool's extra capabilities."""
    session.execute(sa.update(STORAGE_POOLS)
                    .where(STORAGE_POOLS.c.id == pool_id)
                    .values(updated_at=now))


def unregister_pool(session, pool_id):
    """Remove a pool and its extra capabilities; no reservation holds one yet.

    The allocations table of storage reservations, when it comes, extends
    this one function: a pool's past bookings go with it here, once the
    inventory has refused (409) a pool that current or future ones hold.
    """
    session.execute(sa.delete(STORAGE_POOL_CAPABILITIES).where(
        STORAGE_POOL_CAPABILITIES.c.pool_id == pool_id))
    session.execute(sa.delete(STORAGE_POOLS).where(
        STORAGE_POOLS.c.id == pool_id))
