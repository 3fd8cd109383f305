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

"""The ``storage:pool`` plugin: whole Cinder pools for a lease.

The request, as ``physical:host``'s for compute hosts::

    {"resource_type": "storage:pool", "min": 1, "max": 2,
     "pool_properties": "[\\"=\\", \\"$storage_protocol\\", \\"iSCSI\\"]",
     "resource_properties": "[\\"=\\", \\"$tier\\", \\"gold\\"]",
     "on_end": "release"}

``pool_properties`` selects on what Cinder reported for a registered
pool (``$volume_backend_name``, ``$storage_protocol``,
``$total_capacity_gb``, ...; ``$name`` is the pool's name),
``resource_properties`` on its extra capabilities; both are Blazar's JSON
filter syntax (:mod:`reservation_ext.planning.capabilities`). ``max``
pools are booked when that many are free, at least ``min``, none (409)
otherwise (:mod:`reservation_ext.planning.storage_pools`). The booked
pools are shown as ``pools`` (their names).

While the lease is active, Cinder's scheduler sends a volume created
with the hint ``reservation=<reservation id>`` by one of the lease's
projects to those pools only (``cinder_ext.reservation_filter``). At the
end, ``on_end`` says what becomes of the volumes there: ``release`` (the
default) leaves them and the pools take no new volume; ``delete_volumes``
deletes the lease's projects' volumes on them. Only the window of a
lease update may change; the request's fields may not.

A schedule proposals request takes the same reservation: each proposal
holds the pools a booking would take in its window until it expires,
and a lease made from it books those pools. Availability counts the free
matching pools (``pool_properties``, ``resource_properties``).
"""

import json

import sqlalchemy as sa

from db import tables
from reservation_ext import exceptions
from reservation_ext.planning import capabilities
from reservation_ext.planning import storage_pools as planner
from reservation_ext.planning import volume_capacity
from reservation_ext.plugins import base
from reservation_ext.states import ReservationStatus
from reservation_ext.store import storage_pools as store
from reservation_ext import validation

RESOURCE_TYPE = 'storage:pool'
STORAGE_POOL_RESERVATIONS = tables.STORAGE_POOL_RESERVATIONS
RELEASE, DELETE_VOLUMES = 'release', 'delete_volumes'
ON_END = (RELEASE, DELETE_VOLUMES)
_QUERY = {'type': ['string', 'array', 'object'],
          'description': 'a capability query (JSON text, list or object)'}
_QUERIES = {'pool_properties': capabilities.REPORTED_POOL_TARGET,
            'resource_properties': capabilities.POOL_TARGET}
SCHEMA = {
    'type': 'object',
    'properties': {
        'min': validation.INTEGER,
        'max': validation.INTEGER,
        **{field: _QUERY for field in _QUERIES},
        'on_end': {'enum': list(ON_END)},
    },
    'additionalProperties': False,
    'required': ['min', 'max'],
}
# An availability query: which pools count.
QUERY_SCHEMA = {
    'type': 'object',
    'properties': {field: _QUERY for field in _QUERIES},
    'additionalProperties': False,
}
_COLUMNS = ('min', 'max', 'pool_properties', 'resource_properties',
            'on_end')


class StoragePoolPlugin(base.ResourcePlugin):
    """Reserve whole storage pools; dedicate them while the lease is on."""

    def validate(self, values):
        """Check a pool request; return its normalized values.

        The capability queries are compiled here, so that a malformed one
        is a 400 naming its field.
        """
        validation.check_schema(values, SCHEMA)
        out = {key: validation.parse_integer(values[key], key, minimum=1)
               for key in ('min', 'max')}
        if out['max'] < out['min']:
            raise exceptions.InvalidInput('max', 'must be at least min')
        out['on_end'] = values.get('on_end', RELEASE)
        out.update(_queries(values))
        return out

    def validate_proposal(self, values):
        """Check a pool reservation of a proposals request.

        The whole request, as for a lease: a lease made from a proposal
        is made of it.
        """
        return self.validate(values)

    def validate_query(self, values):
        """Check an availability query: the queries that select pools."""
        validation.check_schema(values, QUERY_SCHEMA)
        return dict(_queries(values), min=1, max=1)

    def timeline(self, session, values, span, busy, for_update=False):
        """Return the timeline of the pools the request may use.

        A proposal's search takes the volume capacity lock, as a booking
        does, and refuses a request that too few pools match.
        """
        if for_update:
            volume_capacity.lock(session)
            _check_matching(session, values)
        return planner.timeline(
            session, span, busy, (values['conditions'],
                                  (values['min'], values['max'])),
            self.conf.reservation.volume_reservable_gb)

    def reserve(self, session, ctx, lease, reservation_id, values,
                hold=None):
        """Book the free matching pools and record the request.

        From a proposal, the pools it holds.
        """
        window = (lease['start_date'], lease['end_date'])
        if hold is not None:
            planner.book_held(
                session, reservation_id, window,
                self.busy(ignore_proposal=hold.proposal_id),
                planner.POOLS.held(session, hold.proposal_id,
                                   hold.proposal_item))
        else:
            planner.allocate(
                session, reservation_id, window, self.busy(),
                values['conditions'], (values['min'], values['max']),
                self.conf.reservation.volume_reservable_gb)
        store.record_request(session, dict(
            {key: values[key] for key in _COLUMNS}, id=reservation_id,
            reservation_id=reservation_id))
        return reservation_id

    def get_details(self, session, reservation_ids):
        """Return each reservation's request and the names of its pools."""
        pools = planner.pools_of(session, reservation_ids)
        return {row.reservation_id: dict(
            {key: getattr(row, key) for key in _COLUMNS},
            pools=pools[row.reservation_id])
            for row in session.execute(
                sa.select(STORAGE_POOL_RESERVATIONS).where(
                    STORAGE_POOL_RESERVATIONS.c.reservation_id.in_(
                        reservation_ids)))}

    def update(self, session, ctx, lease, reservation, values):
        """Move the bookings to the lease's new window, on the same pools."""
        base.check_unchanged({key: value for key, value in values.items()
                              if key in _COLUMNS and
                              reservation.get(key) != value}, RESOURCE_TYPE)
        busy = self.busy(ignore_reservation=reservation['id'])
        try:
            planner.POOLS.move(session, reservation['id'],
                               lease['start_date'], lease['end_date'], busy)
            planner.check_capacity(
                session, reservation['id'],
                (lease['start_date'], lease['end_date']), busy,
                self.conf.reservation.volume_reservable_gb)
        except exceptions.NotEnoughResources as exc:
            raise base.blocked_extension(exc, planner.POOLS.latest_end(
                session, reservation['id'], self.busy()), lease)

    def on_start(self, ctx, lease, reservation):
        """Nothing to make: Cinder's filter reads the booking once active."""

    def on_end(self, ctx, lease, reservation):
        """Delete the projects' volumes on the pools, if ``on_end`` says so."""
        if reservation['on_end'] != DELETE_VOLUMES:
            return
        # ``projects`` are those the lease is shared with; the owner's too.
        self.clients.cinder.delete_pool_volumes(
            reservation['pools'],
            list(dict.fromkeys([lease['project_id'], *lease['projects']])))

    def on_delete(self, ctx, lease, reservation):
        """End what a start began, unless the lease never started."""
        if reservation['status'] != ReservationStatus.PENDING:
            self.on_end(ctx, lease, reservation)


def _queries(values):
    """Return the queries of a request as text, and compiled.

    ``{field: text, ..., 'conditions': [SQL condition]}``; a malformed
    query is a 400 naming its field.
    """
    out = {'conditions': []}
    for field, target in _QUERIES.items():
        query = values.get(field, '')
        out[field] = query if isinstance(query, str) else json.dumps(query)
        out['conditions'].append(capabilities.compile(query, field, target))
    return out


def _check_matching(session, values):
    """Refuse a request that fewer than ``min`` registered pools match.

    :raises InvalidInput: naming the most specific query given, or
        ``min``.
    """
    matching = planner.POOLS.count_matching(session, values['conditions'])
    if matching >= values['min']:
        return
    field = next((key for key in reversed(list(_QUERIES))
                  if values.get(key)), 'min')
    raise exceptions.InvalidInput(
        field, '%d reservable storage pool(s) match the request, %d wanted '
        '(min): no window can ever fit it' % (matching, values['min']))
