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

"""The reservable storage pools behind ``/v1/storage-pools`` (admin only).

As ``/v1/os-hosts`` for Cinder's pools: registering a pool by its
``name`` (``host@backend#pool``, as the volume service reports it) asks
Cinder for the pools its volume services report (a pool it does not
report is a 404) and records what Cinder reported for it; every other
key of the body is an extra capability, shown beside the pool's own keys
in its view. A pool is registered once (409 again). An update sets or,
with ``null``, removes extra capabilities. A pool is removed with its
past bookings unless a current or future booking holds it (409). A pool
is named in a path by its id or by its name.
"""

import json
import math
import uuid

from oslo_db import exception as db_exc
import sqlalchemy as sa

from db import api as db_api
from db import tables
from reservation_ext import dates
from reservation_ext import exceptions
from reservation_ext.planning import capabilities as capability_queries
from reservation_ext.planning import storage_pools as planner
from reservation_ext import policy
from reservation_ext.storage_pools import schemas
from reservation_ext.store import storage_pools as store
from reservation_ext import validation

STORAGE_POOLS = tables.STORAGE_POOLS

# Keys of a pool view that are the pool's own; no extra capability has
# one of these names.
VIEW_KEYS = ('id', 'name', 'backend', 'total_capacity_gb', 'capabilities',
             'created_at', 'updated_at')


# The extra capabilities of the rows, by id.
EXTRA = capability_queries.POOL_TARGET


class StoragePoolInventory:
    """Admin operations on the reservable storage pools.

    :param clients: a :class:`reservation_ext.clients.plugin_clients.
        PluginClients`, whose ``cinder`` client reads Cinder's pools,
        made at first use.
    """

    def __init__(self, clock, clients):
        self.clock = clock
        self._clients = clients

    @property
    def cinder(self):
        """Return the Cinder client."""
        return self._clients.cinder

    def create(self, ctx, body):
        """Register the pool ``body['name']`` that Cinder reports."""
        policy.authorize(ctx, 'create', ctx.project_id,
                         policy.STORAGE_POOLS)
        validation.check_schema(body, schemas.CREATE)
        name = body['name']
        capabilities = {key: value for key, value in body.items()
                        if key != 'name'}
        _check_capabilities(capabilities)
        with db_api.context_manager.reader.using(ctx) as session:
            _check_new(session, name)
        reported = self.cinder.storage_pools().get(name)
        if reported is None:
            raise exceptions.NotFound(
                'Cinder reports no storage pool %s ("openstack volume '
                'backend pool list" shows the pools it reports).' % name)
        values = {'id': str(uuid.uuid4()), 'name': name,
                  'volume_backend_name': _text(
                      reported.get('volume_backend_name')),
                  'total_capacity_gb': _gigabytes(
                      reported.get('total_capacity_gb')),
                  'capabilities': json.dumps(reported, sort_keys=True)}
        try:
            with db_api.writer(ctx, self.clock) as session:
                _check_new(session, name)
                store.register_pool(session, values, capabilities, reported)
        except db_exc.DBDuplicateEntry:
            # Registered by a concurrent request since the check.
            raise _registered(name)
        return self.get(ctx, values['id'])

    def list(self, ctx):
        """Return the views of every registered pool, by name."""
        policy.authorize(ctx, 'list', ctx.project_id, policy.STORAGE_POOLS)
        with db_api.context_manager.reader.using(ctx) as session:
            rows = session.execute(sa.select(STORAGE_POOLS).order_by(
                STORAGE_POOLS.c.name)).all()
            return _views(session, rows)

    def get(self, ctx, pool_id):
        """Return the view of one pool, named by its id or its name."""
        policy.authorize(ctx, 'get', ctx.project_id, policy.STORAGE_POOLS)
        with db_api.context_manager.reader.using(ctx) as session:
            return _views(session, [_get_row(session, pool_id)])[0]

    def update(self, ctx, pool_id, body):
        """Set (or, with ``null``, remove) extra capabilities."""
        policy.authorize(ctx, 'update', ctx.project_id,
                         policy.STORAGE_POOLS)
        validation.check_schema(body, schemas.UPDATE)
        if not body:
            raise exceptions.InvalidInput('body', 'No data to update')
        _check_capabilities(body)
        with db_api.writer(ctx, self.clock) as session:
            row = _get_row(session, pool_id)
            current = EXTRA.values_of(session, [row.id]).get(row.id, {})
            current.update(body)
            store.set_capabilities(session, row.id, {
                key: value for key, value in current.items()
                if value is not None})
            store.mark_updated(session, row.id, self.clock.now())
        return self.get(ctx, row.id)

    def delete(self, ctx, pool_id):
        """Remove a pool from the reservable ones, unless a lease holds it."""
        policy.authorize(ctx, 'delete', ctx.project_id, policy.STORAGE_POOLS)
        self._remove(ctx, pool_id)

    @db_api.retry_on_conflict(exceptions.ConcurrentUpdate)
    def _remove(self, ctx, pool_id):
        with db_api.writer(ctx, self.clock) as session:
            row = _get_row(session, pool_id)
            held = planner.POOLS.is_held(session, row.id, self.clock.now())
            if held:
                raise exceptions.Conflict(
                    'Storage pool %s is held by %d current or future '
                    'reservation(s) or schedule proposal(s); it can be '
                    'removed once they ended, expired or were deleted.'
                    % (row.name, held))
            # A booking made since the check bumped the generation.
            planner.POOLS.claim(session, [(row.id, row.generation)])
            store.unregister_pool(session, row.id)


def _check_capabilities(capabilities):
    """Refuse extra capabilities named as a pool's own keys, or too long."""
    validation.check_extra_capabilities(
        capabilities, VIEW_KEYS,
        'is a property of the pool, not an extra capability',
        schemas.CAPABILITY_KEY_MAX_LENGTH)


def _check_new(session, name):
    if session.scalar(sa.select(STORAGE_POOLS.c.id).where(
            STORAGE_POOLS.c.name == name)) is not None:
        raise _registered(name)


def _registered(name):
    return exceptions.Conflict('Storage pool %s is already registered.'
                               % name)


def _text(value):
    """Return a reported name that fits its column, else None."""
    return value if isinstance(value, str) and len(value) <= 255 else None


def _gigabytes(value):
    """Return a reported capacity as a number; None for ``infinite``.

    Cinder's drivers report ``infinite`` or ``unknown`` when they cannot
    tell, and some report numbers as text.
    """
    if isinstance(value, bool):
        return None
    try:
        number = float(value)
    except (TypeError, ValueError):
        return None
    return number if math.isfinite(number) else None


def _get_row(session, pool_id):
    """Return the pool by id or name, or raise NotFound."""
    row = session.execute(sa.select(STORAGE_POOLS).where(sa.or_(
        STORAGE_POOLS.c.id == str(pool_id),
        STORAGE_POOLS.c.name == str(pool_id)))).first()
    if row is None:
        raise exceptions.NotFound(kind='Storage pool', id=pool_id)
    return row


def _views(session, rows):
    capabilities = EXTRA.values_of(session, [row.id for row in rows])
    return [{**capabilities.get(row.id, {}), **_view(row)} for row in rows]


def _view(row):
    return {'id': row.id, 'name': row.name,
            'backend': row.volume_backend_name,
            'total_capacity_gb': row.total_capacity_gb,
            'capabilities': json.loads(row.capabilities),
            'created_at': dates.format_timestamp(row.created_at),
            'updated_at': dates.format_timestamp(row.updated_at)}
