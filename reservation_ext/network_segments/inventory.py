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

"""The reservable network segments behind ``/v1/networks`` (admin only).

Chameleon's Blazar's wire format: a segment is ``network_type`` (``vlan``
or ``vxlan``), ``physical_network`` (required for VLAN, none for VXLAN,
whose ids are global) and ``segment_id`` (VLAN id 1-4094, VNI up to
2^24 - 1); every other key of a create or update is an extra capability,
shown beside them in the view. A segment is registered once; one that a
current or future lease holds cannot be removed. Neutron is not called:
the segment is only made into a network when a lease starts.
"""

import uuid

import sqlalchemy as sa

from db import api as db_api
from db import tables
from reservation_ext import dates
from reservation_ext import exceptions
from reservation_ext.network_segments import schemas
from reservation_ext.planning import capabilities as capability_queries
from reservation_ext.planning import network_segments as planner
from reservation_ext import policy
from reservation_ext.store import network_segments as store
from reservation_ext import validation

NETWORK_SEGMENTS = tables.NETWORK_SEGMENTS

# Keys of a segment view that are columns; no extra capability has them.
VIEW_COLUMNS = ('id', 'network_type', 'physical_network', 'segment_id',
                'created_at', 'updated_at')
_RESERVED_KEYS = frozenset(VIEW_COLUMNS + ('generation',))


# The extra capabilities of the rows, by id.
EXTRA = capability_queries.NETWORK_SEGMENTS


class NetworkInventory:
    """Admin operations on the reservable network segments."""

    def __init__(self, clock):
        self.clock = clock

    def create(self, ctx, body):
        """Register the segment ``body`` names; return its view."""
        policy.authorize(ctx, 'create', ctx.project_id, policy.NETWORKS)
        validation.check_schema(body, schemas.CREATE)
        values = _segment(body)
        capabilities = {key: value for key, value in body.items()
                        if key not in values}
        _check_capabilities(capabilities, creating=True)
        values['id'] = str(uuid.uuid4())
        self._insert(ctx, values, capabilities)
        return self.get(ctx, values['id'])

    def list(self, ctx):
        """Return the views of every segment, by type and id."""
        policy.authorize(ctx, 'list', ctx.project_id, policy.NETWORKS)
        with db_api.context_manager.reader.using(ctx) as session:
            rows = session.execute(sa.select(NETWORK_SEGMENTS).order_by(
                NETWORK_SEGMENTS.c.network_type,
                NETWORK_SEGMENTS.c.physical_network,
                NETWORK_SEGMENTS.c.segment_id)).all()
            return _views(session, rows)

    def get(self, ctx, network_id):
        """Return the view of one segment."""
        policy.authorize(ctx, 'get', ctx.project_id, policy.NETWORKS)
        with db_api.context_manager.reader.using(ctx) as session:
            return _views(session, [_get_row(session, network_id)])[0]

    def update(self, ctx, network_id, body):
        """Set (or, with ``null``, remove) extra capabilities."""
        policy.authorize(ctx, 'update', ctx.project_id, policy.NETWORKS)
        validation.check_schema(body, schemas.UPDATE)
        if not body:
            raise exceptions.InvalidInput('body', 'No data to update')
        _check_capabilities(body)
        with db_api.writer(ctx, self.clock) as session:
            row = _get_row(session, network_id)
            current = EXTRA.values_of(session, [row.id]).get(row.id, {})
            current.update(body)
            store.set_capabilities(session, row.id, {
                key: value for key, value in current.items()
                if value is not None})
            store.mark_updated(session, row.id, self.clock.now())
        return self.get(ctx, network_id)

    def delete(self, ctx, network_id):
        """Remove a segment that no current or future lease holds."""
        policy.authorize(ctx, 'delete', ctx.project_id, policy.NETWORKS)
        self._remove(ctx, network_id)

    def allocations(self, ctx, network_id=None, lease_id=None,
                    reservation_id=None):
        """Return ``[{resource_id, reservations: [...]}]`` per segment.

        Every segment (or the one named), with its current and future
        bookings, narrowed to a lease or reservation, as Chameleon's Blazar
        shows them.
        """
        policy.authorize(ctx, 'get_allocations', ctx.project_id,
                         policy.NETWORKS)
        with db_api.context_manager.reader.using(ctx) as session:
            if network_id is None:
                ids = session.scalars(sa.select(NETWORK_SEGMENTS.c.id)
                                      .order_by(NETWORK_SEGMENTS.c.id)).all()
            else:
                ids = [_get_row(session, network_id).id]
            booked = _bookings(session, ids, self.clock.now(), lease_id,
                               reservation_id)
        return [{'resource_id': segment, 'reservations': booked.get(
            segment, [])} for segment in ids]

    @db_api.retry_on_conflict(exceptions.ConcurrentUpdate)
    def _insert(self, ctx, values, capabilities):
        with db_api.writer(ctx, self.clock) as session:
            _check_new(session, values)
            store.add_segment(session, dict(values,
                                            created_at=self.clock.now()),
                              capabilities)

    @db_api.retry_on_conflict(exceptions.ConcurrentUpdate)
    def _remove(self, ctx, network_id):
        with db_api.writer(ctx, self.clock) as session:
            row = _get_row(session, network_id)
            held = planner.SEGMENTS.is_held(session, row.id, self.clock.now())
            if held:
                raise exceptions.Conflict(
                    'Network segment %s is held by %d current or future '
                    'reservation(s) or schedule proposal(s); it can be '
                    'removed once they ended, expired or were deleted.'
                    % (row.id, held))
            store.remove_segment(session, row.id)


def _segment(body):
    """Return the segment's columns from a create's body, checked."""
    network_type = body['network_type']
    physical_network = body.get('physical_network')
    if network_type == 'vlan' and physical_network is None:
        raise exceptions.InvalidInput(
            'physical_network', 'is required for a vlan segment')
    if network_type == 'vxlan' and physical_network is not None:
        raise exceptions.InvalidInput(
            'physical_network', 'must be null for a vxlan segment (VNIs '
            'are not per physical network)')
    low, high = schemas.SEGMENT_RANGES[network_type]
    segment_id = validation.parse_integer(body['segment_id'], 'segment_id',
                                          minimum=low)
    if segment_id > high:
        raise exceptions.InvalidInput(
            'segment_id', 'must be at most %d for a %s segment'
            % (high, network_type))
    return {'network_type': network_type,
            'physical_network': physical_network, 'segment_id': segment_id}


def _check_capabilities(capabilities, creating=False):
    """Refuse extra capabilities named as a segment's own keys, or too long."""
    validation.check_extra_capabilities(
        capabilities, _RESERVED_KEYS,
        'is a property of the segment, not an extra capability' if creating
        else 'cannot be changed; delete the segment and register it again',
        schemas.CAPABILITY_KEY_MAX_LENGTH)


def _check_new(session, values):
    found = session.scalar(sa.select(NETWORK_SEGMENTS.c.id).where(
        NETWORK_SEGMENTS.c.network_type == values['network_type'],
        NETWORK_SEGMENTS.c.segment_id == values['segment_id'],
        sa.func.coalesce(NETWORK_SEGMENTS.c.physical_network, '') ==
        (values['physical_network'] or '')))
    if found is not None:
        raise exceptions.Conflict(
            'Network segment %s %s%s is already registered (%s).' % (
                values['network_type'], values['segment_id'],
                ' on %s' % values['physical_network']
                if values['physical_network'] else '', found))


def _get_row(session, network_id):
    row = session.execute(sa.select(NETWORK_SEGMENTS).where(
        NETWORK_SEGMENTS.c.id == str(network_id))).first()
    if row is None:
        raise exceptions.NotFound(kind='Network segment', id=network_id)
    return row


def _bookings(session, network_ids, now, lease_id, reservation_id):
    allocations = tables.NETWORK_ALLOCATIONS
    reservations = tables.RESERVATIONS
    stmt = (sa.select(allocations.c.network_id, allocations.c.reservation_id,
                      reservations.c.lease_id, allocations.c.start_date,
                      allocations.c.end_date)
            .join(reservations,
                  reservations.c.id == allocations.c.reservation_id)
            .where(allocations.c.network_id.in_(network_ids),
                   allocations.c.end_date > now)
            .order_by(allocations.c.start_date))
    for column, value in ((reservations.c.lease_id, lease_id),
                          (allocations.c.reservation_id, reservation_id)):
        if value is not None:
            stmt = stmt.where(column == value)
    found = {}
    for row in session.execute(stmt):
        found.setdefault(row.network_id, []).append({
            'id': row.reservation_id, 'lease_id': row.lease_id,
            'start_date': dates.format_date(row.start_date),
            'end_date': dates.format_date(row.end_date)})
    return found


def _views(session, rows):
    capabilities = EXTRA.values_of(session, [row.id for row in rows])
    return [{**capabilities.get(row.id, {}), **_view(row)} for row in rows]


def _view(row):
    view = {column: getattr(row, column) for column in VIEW_COLUMNS}
    for stamp in ('created_at', 'updated_at'):
        view[stamp] = dates.format_timestamp(view[stamp])
    return view
