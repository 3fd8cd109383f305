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

"""The ``virtual:floatingip`` plugin: floating IPs for a lease (Blazar's).

A request::

    {"resource_type": "virtual:floatingip", "network_id": "<external
     network>", "amount": 2, "required_floatingips": ["172.24.4.10"]}

books ``amount`` of the network's reservable addresses
(:mod:`reservation_ext.floatingips`) for the lease's window, those of
``required_floatingips`` among them, all or none, when the lease is
created (:mod:`reservation_ext.planning.floating_ips`). At start each
address is created in Neutron in the lease's project with its exact
address and tagged ``reservation:<reservation id>``; at end the tagged
addresses are disassociated from their ports and deleted.

Updates are Blazar's: new dates move the bookings (a lease that has not
started may get other addresses when its own are taken); ``amount`` may
grow (a started lease gets the new addresses in Neutron at once) and,
before the start, shrink; ``network_id`` never changes, and
``required_floatingips`` only to the empty list.
"""

import json

import sqlalchemy as sa

from db import api as db_api
from db import tables
from reservation_ext import exceptions
from reservation_ext.floatingips import schemas as fip_schemas
from reservation_ext.planning import floating_ips as planning
from reservation_ext.planning import planner
from reservation_ext.plugins import base
from reservation_ext.states import ReservationStatus
from reservation_ext.store import floating_ips as store
from reservation_ext import validation

RESOURCE_TYPE = 'virtual:floatingip'
FLOATINGIPS = tables.FLOATINGIPS
FLOATINGIP_RESERVATIONS = tables.FLOATINGIP_RESERVATIONS
FLOATINGIP_ALLOCATIONS = tables.FLOATINGIP_ALLOCATIONS
_ADDRESSES = {'type': 'array', 'items': {'type': 'string'},
              'description': 'a list of IP addresses'}
SCHEMA = {
    'type': 'object',
    'properties': {
        'network_id': validation.TEXT,
        'amount': validation.INTEGER,
        'required_floatingips': _ADDRESSES,
    },
    'additionalProperties': False,
    'required': ['network_id'],
}
UPDATE_SCHEMA = dict(SCHEMA, required=[])
# An availability query: how many addresses of a network are free when.
# A reservation of a schedule proposals request: any addresses.
PROPOSAL_SCHEMA = {
    'type': 'object',
    'properties': {'network_id': validation.TEXT,
                   'amount': validation.INTEGER},
    'additionalProperties': False,
    'required': ['network_id'],
}
QUERY_SCHEMA = {
    'type': 'object',
    'properties': {'network_id': validation.TEXT},
    'additionalProperties': False,
    'required': ['network_id'],
}


class FloatingIPPlugin(base.ResourcePlugin):
    """Reserve floating IPs of an external network."""

    def validate(self, values):
        """Check a floating IP request; return its normalized values."""
        validation.check_schema(values, SCHEMA)
        # As python-blazarclient's default.
        return _normalized(dict({'amount': 1}, **values))

    def validate_proposal(self, values):
        """Check a proposal's floating IPs: a network and an amount (1)."""
        validation.check_schema(values, PROPOSAL_SCHEMA)
        return _normalized(dict({'amount': 1}, **values))

    def validate_query(self, values):
        """Check an availability query: the network whose addresses count."""
        validation.check_schema(values, QUERY_SCHEMA)
        return {'network_id': values['network_id'], 'amount': 1,
                'required_floatingips': []}

    def timeline(self, session, values, span, busy, for_update=False):
        """Return the timeline of a network's reservable addresses."""
        generations, allocations = planning.read_schedule(
            session, values['network_id'], *span.reach, busy)
        if for_update and len(generations) < values['amount']:
            raise exceptions.InvalidInput(
                'amount', 'network %s has %d reservable floating IP(s): no '
                'window can ever fit %d' % (values['network_id'],
                                            len(generations),
                                            values['amount']))
        return planning.Addresses(span, allocations, values['amount'],
                                  values['amount'], generations=generations)

    def reserve(self, session, ctx, lease, reservation_id, values,
                hold=None):
        """Book the addresses and record the request; return its id."""
        busy = self.busy()
        if hold is not None:
            # Exactly what the proposal holds.
            busy = self.busy(ignore_proposal=hold.proposal_id)
            held = planning.held(session, hold.proposal_id,
                                 hold.proposal_item)
            self._book(session, reservation_id, dict(
                values, required_floatingips=held), lease['start_date'],
                lease['end_date'], busy, len(held))
        else:
            self._book(session, reservation_id, values, lease['start_date'],
                       lease['end_date'], busy, values['amount'])
        store.add_request(session, reservation_id, values['network_id'],
                          values['amount'], values['required_floatingips'])
        return reservation_id

    def _book(self, session, reservation_id, values, start, end, busy,
              amount, required=None):
        try:
            return planning.allocate(
                session, planner.Owner(reservation_id), values['network_id'],
                start, end, amount,
                values['required_floatingips'] if required is None
                else required, busy)
        except exceptions.NotEnoughResources:
            registered = planning.count_registered(session,
                                                   values['network_id'])
            if registered < values['amount']:
                raise exceptions.InvalidInput(
                    'amount', 'network %s has %d reservable floating IP(s), '
                    'fewer than %d' % (values['network_id'], registered,
                                       values['amount']))
            raise

    def get_details(self, session, reservation_ids):
        """Return each reservation's request as Blazar's views show it."""
        rows = session.execute(sa.select(FLOATINGIP_RESERVATIONS).where(
            FLOATINGIP_RESERVATIONS.c.reservation_id.in_(reservation_ids)))
        return {row.reservation_id: {
            'network_id': row.network_id, 'amount': row.amount,
            'required_floatingips': json.loads(
                row.required_floatingips or '[]')} for row in rows}

    def prepare_update(self, ctx, reservation, values):
        """Check an update's fields as Blazar allows them; normalize them."""
        validation.check_schema(values, UPDATE_SCHEMA)
        if values.get('network_id', reservation['network_id']) != \
                reservation['network_id']:
            raise exceptions.InvalidInput(
                'network_id', 'cannot be changed; create a new lease '
                'instead')
        merged = _normalized(dict(
            {key: reservation[key] for key in SCHEMA['properties']},
            **values))
        required = merged['required_floatingips']
        if required and required != reservation['required_floatingips']:
            raise exceptions.InvalidInput(
                'required_floatingips', 'can only be changed to the empty '
                'list')
        return merged

    def update(self, session, ctx, lease, reservation, values):
        """Re-book for a new window and amount, as the status allows.

        Return the step that creates a started lease's new addresses.
        """
        request = _normalized(dict(
            {key: reservation[key] for key in SCHEMA['properties']},
            **values))
        started = reservation['status'] == ReservationStatus.ACTIVE
        booked = planning.booked(session, reservation['id'])
        if started and request['amount'] < len(booked):
            raise exceptions.InvalidInput(
                'amount', 'cannot be lowered once the lease has started')
        busy = self.busy()
        self._move(session, lease, reservation, request, busy, started)
        gained = []
        booked = planning.booked(session, reservation['id'])
        if request['amount'] > len(booked):
            start = max(lease['start_date'], self.clock.now()) if started \
                else lease['start_date']
            gained = self._book(
                session, reservation['id'], request, start,
                lease['end_date'], busy, request['amount'] - len(booked),
                required=[])
        elif request['amount'] < len(booked):
            # The required addresses are kept.
            kept = sorted(booked, key=lambda pair: pair[1].address not in
                          request['required_floatingips'])
            planning.release(session, [
                allocation_id for allocation_id, _address
                in kept[request['amount']:]])
        store.change_request(session, reservation['id'], request['amount'],
                             request['required_floatingips'])
        if started and gained:
            return lambda ctx: self._create(ctx, lease, reservation,
                                            [row.id for row in gained])
        return None

    def _move(self, session, lease, reservation, request, busy, started):
        """Move the bookings to the lease's new window.

        A reservation that has not started and whose addresses are taken
        then is booked again on any free ones (its required ones still).
        """
        latest = planning.latest_end(session, reservation['id'], busy)
        try:
            return planning.move(session, reservation['id'],
                                 request['network_id'], lease['start_date'],
                                 lease['end_date'], busy)
        except exceptions.NotEnoughResources as exc:
            taken = exc
        if not started:
            planning.release(session, [allocation_id for allocation_id, _row
                                       in planning.booked(session,
                                                          reservation['id'])])
            try:
                return self._book(session, reservation['id'], request,
                                  lease['start_date'], lease['end_date'],
                                  busy, request['amount'])
            except exceptions.NotEnoughResources:
                # What its own addresses lack says more; the caller's
                # transaction rolls the release back.
                pass
        raise base.blocked_extension(taken, latest, lease)

    def undo_update(self, session, ctx, lease, reservation, values):
        """Put back the old amount and window; delete what was gained.

        The addresses a started reservation gained are its bookings that
        begin after its start; the step deletes them in Neutron.
        """
        if reservation['status'] != ReservationStatus.ACTIVE:
            return self.update(session, ctx, lease, reservation, values)
        gained = [(allocation_id, row) for allocation_id, row
                  in planning.booked(session, reservation['id'])
                  if _starts_after(session, allocation_id,
                                   lease['start_date'])]
        planning.release(session, [allocation_id for allocation_id, _row
                                   in gained])
        step = self.update(session, ctx, lease, reservation, values)
        addresses = [row.address for _id, row in gained]
        neutron = self.clients.network
        return step or (lambda ctx: neutron.delete_reserved_floating_ips(
            reservation['id'], addresses))

    def on_start(self, ctx, lease, reservation):
        """Create the booked addresses in the lease's project, tagged."""
        self._create(ctx, lease, reservation)

    def _create(self, ctx, lease, reservation, fip_ids=None):
        for row in booked_addresses(ctx, reservation['id'], fip_ids):
            self.clients.network.ensure_floating_ip(
                row.floating_network_id, row.subnet_id,
                row.floating_ip_address, lease['project_id'],
                reservation['id'])

    def on_end(self, ctx, lease, reservation):
        """Disassociate and delete the reservation's floating IPs."""
        self.clients.network.delete_reserved_floating_ips(reservation['id'])

    def on_delete(self, ctx, lease, reservation):
        """Delete what a start made, unless the lease never started."""
        if reservation['status'] != ReservationStatus.PENDING:
            self.on_end(ctx, lease, reservation)


def _normalized(values):
    """Return a request's values: the amount an integer, addresses parsed."""
    amount = validation.parse_integer(values['amount'], 'amount',
                                      minimum=1)
    required = [fip_schemas.parse_address(address, 'required_floatingips')
                for address in values.get('required_floatingips') or []]
    if len(set(required)) != len(required):
        raise exceptions.InvalidInput('required_floatingips',
                                      'names an address twice')
    if len(required) > amount:
        raise exceptions.InvalidInput(
            'required_floatingips', 'names more addresses than amount')
    return {'network_id': values['network_id'], 'amount': amount,
            'required_floatingips': required}


def _starts_after(session, allocation_id, start):
    return session.scalar(sa.select(FLOATINGIP_ALLOCATIONS.c.start_date).where(
        FLOATINGIP_ALLOCATIONS.c.id == allocation_id)) > start


def booked_addresses(ctx, reservation_id, fip_ids=None):
    """Read the addresses booked for a reservation (``fip_ids`` of them).

    Their ``floatingips`` rows, in the order of their address text.
    """
    with db_api.context_manager.reader.using(ctx) as session:
        query = (sa.select(FLOATINGIPS)
                 .join(FLOATINGIP_ALLOCATIONS,
                       FLOATINGIP_ALLOCATIONS.c.floatingip_id ==
                       FLOATINGIPS.c.id)
                 .where(FLOATINGIP_ALLOCATIONS.c.reservation_id ==
                        reservation_id)
                 .order_by(FLOATINGIPS.c.floating_ip_address))
        if fip_ids is not None:
            query = query.where(FLOATINGIPS.c.id.in_(fip_ids))
        return session.execute(query).all()
