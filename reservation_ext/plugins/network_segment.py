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

"""The ``network`` plugin: a VLAN or VXLAN segment for a lease.

Chameleon's Blazar's request, plus an optional subnet and router::

    {"resource_type": "network", "network_name": "my-net",
     "network_description": "experiment 42",
     "network_properties": "[\\"=\\", \\"$network_type\\", \\"vlan\\"]",
     "resource_properties": "[\\"=\\", \\"$stitch\\", \\"true\\"]",
     "subnet_cidr": "10.20.0.0/24", "router_external_network": "public"}

``network_properties`` selects on the segment's own keys
(``$network_type``, ``$physical_network``, ``$segment_id``),
``resource_properties`` on its extra capabilities; both are Blazar's
JSON filter syntax (:mod:`reservation_ext.planning.capabilities`). One
free matching segment is booked when the lease is created
(:mod:`reservation_ext.planning.network_segments`), 409 when none is.

At start a provider network of the segment named ``network_name`` is
made in the lease's project, with a subnet of ``subnet_cidr`` when given,
and a router between it and ``router_external_network`` when given; all
are tagged ``reservation:<reservation id>``, and a rerun finds them. At
end the network's router interfaces and ports, the router and subnets
made, and the network are deleted. Only the window of a lease update may
change; the request's fields may not.

A schedule proposals request takes the same reservation: each proposal
holds one free matching segment for its window until it expires, and a
lease made from it books that segment. Availability counts the free
matching segments (``network_properties``, ``resource_properties``).
"""

import ipaddress
import json

import sqlalchemy as sa

from db import api as db_api
from db import tables
from reservation_ext import exceptions
from reservation_ext.planning import capabilities
from reservation_ext.planning import network_segments as planner
from reservation_ext.plugins import base
from reservation_ext.store import network_segments as store
from reservation_ext import validation

RESOURCE_TYPE = 'network'
NETWORK_RESERVATIONS = tables.NETWORK_RESERVATIONS
NETWORK_SEGMENTS = tables.NETWORK_SEGMENTS
_QUERY = {'type': ['string', 'array', 'object'],
          'description': 'a capability query (JSON text, list or object)'}
_OPTIONAL_TEXT = validation.nullable(dict(validation.TEXT, maxLength=255))
SCHEMA = {
    'type': 'object',
    'properties': {
        # python-blazarclient sends a name of digits as a number.
        'network_name': {'type': ['string', 'integer']},
        'network_description': validation.nullable(
            {'type': 'string', 'maxLength': 255}),
        'network_properties': _QUERY,
        'resource_properties': _QUERY,
        'subnet_cidr': _OPTIONAL_TEXT,
        'router_external_network': _OPTIONAL_TEXT,
    },
    'additionalProperties': False,
    'required': ['network_name'],
}
# An availability query: which segments count.
QUERY_SCHEMA = {
    'type': 'object',
    'properties': {'network_properties': _QUERY,
                   'resource_properties': _QUERY},
    'additionalProperties': False,
}
# The fields that select segments, the most specific last.
_QUERIES = ('network_properties', 'resource_properties')
_COLUMNS = ('network_name', 'network_description', 'network_properties',
            'resource_properties', 'subnet_cidr', 'router_external_network')


class NetworkSegmentPlugin(base.ResourcePlugin):
    """Reserve a network segment and make its network at the start."""

    def validate(self, values):
        """Check a network request; return its normalized values.

        The capability queries are compiled here, so that a malformed one
        is a 400 naming its field.
        """
        validation.check_schema(values, SCHEMA)
        out = {'network_name': _name(values['network_name']),
               'network_description': values.get('network_description'),
               'subnet_cidr': _cidr(values.get('subnet_cidr')),
               'router_external_network': values.get(
                   'router_external_network')}
        if out['router_external_network'] and not out['subnet_cidr']:
            raise exceptions.InvalidInput(
                'router_external_network', 'needs subnet_cidr: the router '
                'joins the subnet to the external network')
        out.update(_queries(values))
        return out

    def validate_proposal(self, values):
        """Check a network reservation of a proposals request.

        The whole request, as for a lease: a lease made from a proposal
        is made of it.
        """
        return self.validate(values)

    def prepare_proposal(self, ctx, values):
        """Refuse a router to an external network Neutron does not have.

        As a create does, before any window is held.
        """
        return self.prepare_create(ctx, None, values, [])

    def validate_query(self, values):
        """Check an availability query: the queries that select segments."""
        validation.check_schema(values, QUERY_SCHEMA)
        return _queries(values)

    def timeline(self, session, values, span, busy, for_update=False):
        """Return the timeline of the segments the request may use.

        A proposal's search refuses a request that no segment matches.
        """
        if for_update:
            _check_matching(session, values)
        return planner.timeline(session, span, busy, values['conditions'])

    def prepare_create(self, ctx, reservation_id, values, projects):
        """Refuse a router to an external network Neutron does not have.

        Checked at create, so that the lease is refused with a 400 rather
        than fail at its start.
        """
        external = values['router_external_network']
        if external and self.clients.network.find_external_network(
                external) is None:
            raise exceptions.InvalidInput(
                'router_external_network', 'Neutron has no external '
                'network %s' % external)
        return values

    def reserve(self, session, ctx, lease, reservation_id, values,
                hold=None):
        """Book a free matching segment and record the request.

        From a proposal, the segment it holds.
        """
        busy, held = self.busy(), None
        if hold is not None:
            busy = self.busy(ignore_proposal=hold.proposal_id)
            held = planner.SEGMENTS.held(session, hold.proposal_id,
                                         hold.proposal_item)
        planner.allocate(session, reservation_id, lease['start_date'],
                         lease['end_date'], busy, values['conditions'],
                         segment_ids=held)
        store.record_request(session, dict(
            {key: values[key] for key in _COLUMNS}, id=reservation_id,
            reservation_id=reservation_id))
        return reservation_id

    def get_details(self, session, reservation_ids):
        """Return the request of each reservation, and its network's id."""
        return {row.reservation_id: {
            key: getattr(row, key) for key in _COLUMNS + ('network_id',)}
            for row in session.execute(sa.select(NETWORK_RESERVATIONS).where(
                NETWORK_RESERVATIONS.c.reservation_id.in_(reservation_ids)))}

    def update(self, session, ctx, lease, reservation, values):
        """Move the booking to the lease's new window, on its segment."""
        base.check_unchanged({key: value for key, value in values.items()
                              if reservation.get(key) != value},
                             RESOURCE_TYPE)
        try:
            planner.SEGMENTS.move(session, reservation['id'],
                                  lease['start_date'], lease['end_date'],
                                  self.busy())
        except exceptions.NotEnoughResources as exc:
            raise base.blocked_extension(exc, planner.SEGMENTS.latest_end(
                session, reservation['id'], self.busy()), lease)

    def on_start(self, ctx, lease, reservation):
        """Make the segment's network (and subnet, router) in the project."""
        segment = self._segment(ctx, reservation['id'])
        name = reservation['network_name']
        network_id = self.clients.network.ensure_segment_network(
            segment, name, reservation['network_description'],
            lease['project_id'], reservation['id'])
        with db_api.writer(ctx, self.clock) as session:
            store.record_network(session, reservation['id'], network_id)
        if reservation['subnet_cidr']:
            subnet_id = self.clients.network.ensure_subnet(
                network_id, reservation['subnet_cidr'], name + '-subnet',
                lease['project_id'], reservation['id'])
            if reservation['router_external_network']:
                self.clients.network.ensure_router(
                    subnet_id, reservation['router_external_network'],
                    name + '-router', lease['project_id'], reservation['id'])

    def on_end(self, ctx, lease, reservation):
        """Delete the network with its ports, subnets and router."""
        self.clients.network.delete_reservation_network(
            reservation['id'], reservation.get('network_id'))

    def _segment(self, ctx, reservation_id):
        with db_api.context_manager.reader.using(ctx) as session:
            row = session.execute(
                sa.select(NETWORK_SEGMENTS.c.network_type,
                          NETWORK_SEGMENTS.c.physical_network,
                          NETWORK_SEGMENTS.c.segment_id)
                .where(NETWORK_SEGMENTS.c.id == planner.booked_segment(
                    session, reservation_id))).first()
        if row is None:
            raise exceptions.PluginError(
                'Reservation %s has no network segment booked.'
                % reservation_id)
        return dict(row._mapping)


def _queries(values):
    """Return the queries of a request as text, and compiled.

    ``{field: text, ..., 'conditions': [SQL condition]}``; a malformed
    query is a 400 naming its field.
    """
    out, conditions = {}, []
    for field in _QUERIES:
        query = values.get(field, '')
        out[field] = query if isinstance(query, str) else json.dumps(query)
        conditions.append(capabilities.compile(
            query, field, capabilities.NETWORK_SEGMENTS))
    out['conditions'] = conditions
    return out


def _check_matching(session, values):
    """Refuse a request that no registered segment matches.

    :raises InvalidInput: naming the most specific query given.
    """
    if planner.SEGMENTS.count_matching(session, values['conditions']):
        return
    field = next((key for key in reversed(_QUERIES) if values.get(key)),
                 'resource_type')
    raise exceptions.InvalidInput(
        field, 'no reservable network segment matches the request: no '
        'window can ever fit it')


def _name(value):
    return validation.validate_name(str(value), 'network_name')


def _cidr(value):
    if value is None:
        return None
    try:
        network = ipaddress.ip_network(value, strict=True)
    except ValueError as exc:
        raise exceptions.InvalidInput('subnet_cidr', 'must be a network '
                                      'address with its prefix: %s' % exc)
    # Room for the gateway and an address to allocate, as Neutron wants.
    if network.num_addresses < 4:
        raise exceptions.InvalidInput('subnet_cidr', 'must hold at least 4 '
                                      'addresses')
    return str(network)
