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
"""The reservable floating IPs behind ``/v1/floatingips`` (admin only).

Registering an address checks with Neutron that its network is external
and that the address lies in one of the network's subnets, outside their
allocation pools and not a gateway (:func:`.schemas.reservable_subnet`),
then records it with that subnet. An address is registered once per
network (409 again); removing one is refused while a current or future
lease holds it. Views are Blazar's: ``id``, ``floating_network_id``,
``subnet_id``, ``floating_ip_address``, ``reservable``, ``created_at``,
``updated_at``.
"""

import uuid

from oslo_db import exception as db_exc
import sqlalchemy as sa

from db import api as db_api
from db import tables
from reservation_ext import dates
from reservation_ext import exceptions
from reservation_ext.floatingips import schemas
from reservation_ext.planning import planner
from reservation_ext import policy
from reservation_ext.store import floating_ips as store
from reservation_ext import validation

FLOATINGIPS = tables.FLOATINGIPS
FLOATINGIP_ALLOCATIONS = tables.FLOATINGIP_ALLOCATIONS
VIEW_COLUMNS = ('id', 'floating_network_id', 'subnet_id',
                'floating_ip_address', 'reservable', 'created_at',
                'updated_at')


class FloatingIPInventory:
    """Admin operations on the reservable floating IPs.

    :param clients: a :class:`reservation_ext.clients.plugin_clients.
        PluginClients`, whose ``network`` (Neutron) client checks the
        addresses, made at first use.
    """

    def __init__(self, clock, clients):
        self.clock = clock
        self._clients = clients

    @property
    def neutron(self):
        """Return the Neutron client."""
        return self._clients.network

    def create(self, ctx, body):
        """Register an address of an external network; return its view."""
        policy.authorize(ctx, 'create', ctx.project_id, policy.FLOATINGIPS)
        validation.check_schema(body, schemas.CREATE)
        address = schemas.parse_address(body['floating_ip_address'])
        network_id = body['floating_network_id']
        network = self.neutron.find_network(network_id)
        if network is None:
            raise exceptions.InvalidInput(
                'floating_network_id', 'Neutron has no network %s'
                % network_id)
        subnet = schemas.reservable_subnet(
            network, self.neutron.subnets_of(network_id), address)
        fip_id = str(uuid.uuid4())
        try:
            with db_api.writer(ctx, self.clock) as session:
                _check_new(session, network_id, address)
                store.register(session, {
                    'id': fip_id, 'floating_network_id': network_id,
                    'subnet_id': subnet['id'],
                    'floating_ip_address': address})
        except db_exc.DBDuplicateEntry:
            # Registered by a concurrent request since the check.
            raise _registered(network_id, address)
        return self.get(ctx, fip_id)

    def list(self, ctx):
        """Return the views of every reservable floating IP."""
        policy.authorize(ctx, 'list', ctx.project_id, policy.FLOATINGIPS)
        with db_api.context_manager.reader.using(ctx) as session:
            return [_view(row) for row in session.execute(
                sa.select(FLOATINGIPS).order_by(
                    FLOATINGIPS.c.floating_network_id,
                    FLOATINGIPS.c.floating_ip_address))]

    def get(self, ctx, fip_id):
        """Return the view of one floating IP."""
        policy.authorize(ctx, 'get', ctx.project_id, policy.FLOATINGIPS)
        with db_api.context_manager.reader.using(ctx) as session:
            return _view(_get_row(session, fip_id))

    @db_api.retry_on_conflict(exceptions.ConcurrentUpdate)
    def delete(self, ctx, fip_id):
        """Remove a floating IP that no current or future lease holds."""
        policy.authorize(ctx, 'delete', ctx.project_id, policy.FLOATINGIPS)
        now = self.clock.now()
        with db_api.writer(ctx, self.clock) as session:
            row = _get_row(session, fip_id)
            held = session.scalar(sa.select(sa.func.count()).where(
                FLOATINGIP_ALLOCATIONS.c.floatingip_id == row.id,
                FLOATINGIP_ALLOCATIONS.c.end_date > now,
                *planner.Busy(now).counted(FLOATINGIP_ALLOCATIONS)))
            if held:
                raise exceptions.Conflict(
                    'Floating IP %s is held by %d current or future '
                    'reservation(s) or proposal(s).'
                    % (row.floating_ip_address, held))
            # As a booking does: a concurrent booking of the address
            # either committed first (we retry and see it) or fails.
            if not store.bump_generations_if_unchanged(
                    session, {row.id: row.generation}):
                raise exceptions.ConcurrentUpdate()
            # Its past bookings go with it.
            store.unregister(session, row.id)


def _check_new(session, network_id, address):
    if session.scalar(sa.select(FLOATINGIPS.c.id).where(
            FLOATINGIPS.c.floating_network_id == network_id,
            FLOATINGIPS.c.floating_ip_address == address)) is not None:
        raise _registered(network_id, address)


def _registered(network_id, address):
    return exceptions.Conflict(
        'Floating IP %s of network %s is already registered.'
        % (address, network_id))


def _get_row(session, fip_id):
    row = session.execute(sa.select(FLOATINGIPS).where(
        FLOATINGIPS.c.id == str(fip_id))).first()
    if row is None:
        raise exceptions.NotFound(kind='Floating IP', id=fip_id)
    return row


def _view(row):
    view = {key: getattr(row, key) for key in VIEW_COLUMNS}
    for stamp in ('created_at', 'updated_at'):
        view[stamp] = dates.format_timestamp(view[stamp])
    return view
