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

"""The ``heat:stack`` plugin: a whole Heat stack, booked ahead.

The request::

    {"resource_type": "heat:stack", "template": "<HOT text>",
     "parameters": {"image": "..."}, "environment": "<YAML text>",
     "on_end": "delete"}

create
    Heat previews the stack as the caller (it validates the template,
    its parameters and environment, and the flavors, images and
    networks they name); its servers, volumes and floating IPs
    (:mod:`reservation_ext.stacks.needs`) are booked all or nothing
    (:mod:`reservation_ext.planning.stacks`): what does not fit is a 409
    naming it. A trust from the caller to the reservation service user,
    in the lease's project (:mod:`reservation_ext.clients.identity`),
    lets the engine act for them at the start.
start
    The engine makes the stack ``reservation-<reservation id>`` in the
    lease's project through the trust and waits for Heat. nova-api seats
    each of its servers on a slice booked for its flavor (Heat gives its
    servers the scheduler hint ``heat_path_in_stack``, whose first
    element is that name, with heat.conf's ``stack_scheduler_hints``),
    and the scheduler filter puts it on the slice's host. The addresses
    booked for its floating IPs are made in the project and given to
    them (:mod:`reservation_ext.stacks.addresses`). A stack that
    Heat fails to create is deleted, and the lease goes to ERROR with
    Heat's reason.
    Once Heat made it, its servers and volumes are recorded.
end
    The stack is deleted (``on_end`` ``delete``, the default), then its
    addresses and the trust. With ``snapshot_delete``, each of its
    servers is imaged first (Nova's snapshot, as for a
    ``virtual:instance`` lease) and each of its volumes uploaded to an
    image of the lease's project, attached as it is (Cinder's
    ``os-volume_upload_image`` with ``force``, which cinder.conf's
    ``enable_force_upload`` must allow).

Schedule proposals of a stack hold its slices, volume GB and addresses
together (:mod:`reservation_ext.planning.stack_proposals`), from Heat's
preview as the caller; a lease made from one books what it held.
Availability queries cannot carry a template: they name the needs
(``servers``, ``volume_gb``, ``floating_ips``, as the view shows them),
and count the copies of them that fit at once.

The engine's waits for Heat are deferred (:mod:`reservation_ext.clients.
deferral`): a stack being made or deleted holds no worker.

The view shows the needs (``servers`` by flavor, ``volume_gb``,
``floating_ips`` by network), ``on_end``, the stack's ``stack_id``,
``stack_status`` and ``stack_status_reason``, and the ``images`` its end
made. Only the window of a lease update may change.
"""

import functools
import json

import sqlalchemy as sa

from db import api as db_api
from db import tables
from reservation_ext.clients import deferral
from reservation_ext.clients import orchestration
from reservation_ext import exceptions
from reservation_ext.planning import floating_ips
from reservation_ext.planning import host_capacity
from reservation_ext.planning import planner
from reservation_ext.planning import stack_proposals
from reservation_ext.planning import stacks as booking
from reservation_ext.planning import volume_capacity
from reservation_ext.plugins import base
from reservation_ext.plugins import floating_ip
from reservation_ext.plugins import instance_capacity
from reservation_ext.stacks import addresses
from reservation_ext.stacks import needs as stack_needs
from reservation_ext.states import ReservationStatus
from reservation_ext.store import stacks as store
from reservation_ext import validation

RESOURCE_TYPE = 'heat:stack'
STACK_RESERVATIONS = tables.STACK_RESERVATIONS
STACK_RESOURCES = tables.STACK_RESOURCES
DELETE = 'delete'
SNAPSHOT_DELETE = 'snapshot_delete'
ON_END = (DELETE, SNAPSHOT_DELETE)
# The name of a reservation's stack: nova-api finds the reservation of a
# stack's server by it.
STACK_NAME = 'reservation-%s'
CREATE_COMPLETE = 'CREATE_COMPLETE'
_CREATING = ('INIT_IN_PROGRESS', 'CREATE_IN_PROGRESS')
_MADE_OR_MAKING = _CREATING + (CREATE_COMPLETE,)
# The resources of a stack that its end may image, and whose ids its
# start records.
_IMAGED = (stack_needs.SERVER, stack_needs.VOLUME)
# Seconds an image may take to become active.
_IMAGE_TIMEOUT = 900
_TEXT_OR_OBJECT = {'type': ['string', 'object'],
                   'description': 'YAML or JSON text, or an object'}
SCHEMA = {
    'type': 'object',
    'properties': {
        'template': _TEXT_OR_OBJECT,
        'parameters': {'type': 'object'},
        'environment': _TEXT_OR_OBJECT,
        'on_end': {'enum': list(ON_END)},
    },
    'additionalProperties': False,
    'required': ['template'],
}
_REQUEST = ('template', 'parameters', 'environment', 'on_end')
# An availability query: the needs, as the reservation's view shows them.
_COUNTS = r'^[^:,]+:[0-9]+(,[^:,]+:[0-9]+)*$'
QUERY_SCHEMA = {
    'type': 'object',
    'properties': {
        'servers': {'type': 'string', 'pattern': _COUNTS},
        'volume_gb': {'type': 'string'},
        'floating_ips': {'type': 'string', 'pattern': _COUNTS},
    },
    'additionalProperties': False,
}


class HeatStackPlugin(base.ResourcePlugin):
    """Reserve what a Heat stack needs; make the stack at the start."""

    def validate(self, values):
        """Check a stack request; return it with texts for the documents."""
        validation.check_schema(values, SCHEMA)
        out = {key: _text(values.get(key)) for key in (
            'template', 'environment')}
        if not out['template'].strip():
            raise exceptions.InvalidInput('template', 'must not be empty')
        out['parameters'] = values.get('parameters') or {}
        out['on_end'] = values.get('on_end', DELETE)
        return out

    def prepare_create(self, ctx, reservation_id, values, projects):
        """Preview the stack as the caller; trust the service user.

        :raises InvalidInput: (``template``) Heat refused the stack, or a
            flavor or network it names cannot be found.
        """
        needs = self._preview(ctx, STACK_NAME % reservation_id, values)
        planned = stack_needs.to_booking(needs, self._size_of,
                                         self._network_id_of)
        trust_id = self.clients.trusts.create(
            ctx.user_auth_plugin, projects[0], ctx.roles)
        return dict(values, needs=needs, booking=planned,
                    trust_id=trust_id)

    def _size_of(self, flavor_name, field='template'):
        flavor = self.nova.find_flavor(flavor_name)
        if flavor is None:
            raise exceptions.InvalidInput(field, 'no flavor %s' % flavor_name)
        size = instance_capacity.flavor_request(flavor['id'], flavor)
        return tuple(size[key] for key in instance_capacity.SIZE_KEYS)

    def _network_id_of(self, network, field='template'):
        found = self.clients.network.find_network_id(network)
        if found is None:
            raise exceptions.InvalidInput(
                field, 'no network %s for floating IPs' % network)
        return found

    def undo_create(self, ctx, reservation_id, values):
        """Remove the trust :meth:`prepare_create` made."""
        if values.get('trust_id'):
            self.clients.trusts.delete(values['trust_id'])

    def reserve(self, session, ctx, lease, reservation_id, values,
                hold=None):
        """Book the stack's needs; record the request with them.

        From a proposal (``hold``), exactly what it holds.
        """
        servers, volume_gb, addresses = values['booking']
        if hold is None:
            self._book(session, reservation_id, lease, values['booking'])
        else:
            self._book_held(session, reservation_id, lease,
                            values['booking'], hold)
        store.record_request(session, dict(
            {key: _stored(values[key]) for key in _REQUEST},
            id=reservation_id, reservation_id=reservation_id,
            servers=json.dumps([_server_row(wanted) for wanted in servers]),
            volume_gb=volume_gb,
            floating_ips=json.dumps([
                _address_row(wanted, values['needs'].floating_ips[
                    wanted.network]) for wanted in addresses]),
            trust_id=values['trust_id'],
            volumes=values['needs'].volumes, **_totals(servers)))
        return reservation_id

    def _book(self, session, reservation_id, lease, planned, busy=None):
        booking.book(session, reservation_id,
                     (lease['start_date'], lease['end_date']), planned,
                     busy or self.busy(), self._limits())

    def get_details(self, session, reservation_ids):
        """Return each reservation's needs, ``on_end``, stack and images."""
        images = {}
        for rid, image_id in session.execute(
                sa.select(STACK_RESOURCES.c.reservation_id,
                          STACK_RESOURCES.c.image_id).where(
                    STACK_RESOURCES.c.reservation_id.in_(reservation_ids),
                    STACK_RESOURCES.c.image_id.is_not(None)).order_by(
                    STACK_RESOURCES.c.image_id)):
            images.setdefault(rid, []).append(image_id)
        return {row.reservation_id: dict(
            _view(row), images=images.get(row.reservation_id, []))
            for row in session.execute(sa.select(STACK_RESERVATIONS).where(
                STACK_RESERVATIONS.c.reservation_id.in_(reservation_ids)))}

    def validate_proposal(self, values):
        """Check a stack of a proposals request: as for a lease."""
        return self.validate(values)

    def validate_query(self, values):
        """Check an availability query of a stack's needs.

        A query string cannot carry a template for Heat to preview: it
        names the needs as a stack reservation's view shows them,
        ``servers`` (``flavor:count,...``), ``volume_gb`` and
        ``floating_ips`` (``network:count,...``). Availability counts the
        copies of them that fit at once.
        """
        validation.check_schema(values, QUERY_SCHEMA)
        servers = [booking.Servers(flavor, self._size_of(flavor, 'servers'),
                                   count)
                   for flavor, count in _counts(values, 'servers')]
        volume_gb = validation.parse_integer(values.get('volume_gb', '0'),
                                             'volume_gb')
        addresses = [booking.Addresses(
            network, self._network_id_of(network, 'floating_ips'), count)
            for network, count in _counts(values, 'floating_ips')]
        if not (servers or volume_gb or addresses):
            raise exceptions.InvalidInput(
                'servers', 'a stack query names what the stack needs: '
                'servers, volume_gb or floating_ips')
        return {'booking': (servers, volume_gb, addresses)}

    def prepare_proposal(self, ctx, values):
        """Preview the stack as the caller: the needs its proposals hold.

        :raises InvalidInput: (``template``) as :meth:`prepare_create`;
            and a stack that books nothing, which needs no proposal.
        """
        needs = self._preview(ctx, STACK_NAME % 'proposal', values)
        if needs.empty:
            raise exceptions.InvalidInput(
                'template', 'the stack has no servers, volumes or floating '
                'IPs to book: any window fits it, no proposal is needed')
        return dict(values, needs=needs, booking=stack_needs.to_booking(
            needs, self._size_of, self._network_id_of))

    def timeline(self, session, values, span, busy, for_update=False):
        """Return the timeline of all the stack's needs together."""
        return stack_proposals.timeline(session, values['booking'], span,
                                        busy, self._limits(), for_update)

    def _book_held(self, session, reservation_id, lease, planned, hold):
        stack_proposals.book_held(
            session, reservation_id, (lease['start_date'],
                                      lease['end_date']), planned, hold,
            self.busy(ignore_proposal=hold.proposal_id), self._limits())

    def _limits(self):
        """Return the hosts' usable size and the reservable volume GB."""
        return (host_capacity.from_nova_conf(self.conf),
                self.conf.reservation.volume_reservable_gb)

    def _preview(self, ctx, name, values):
        """Return the :class:`~.needs.Needs` of Heat's preview as the caller.

        :raises InvalidInput: (``template``) no caller's token, or Heat
            refused the stack.
        """
        if ctx.user_auth_plugin is None:
            raise exceptions.InvalidInput(
                'template', "a stack is previewed with the caller's token, "
                'and this request has none')
        try:
            preview = self.clients.heat.preview(
                ctx.user_auth_plugin, name, values['template'],
                values['parameters'], values['environment'])
        except orchestration.TemplateRefused as exc:
            raise exceptions.InvalidInput('template', exc.message) from None
        return stack_needs.from_preview(preview)

    def update(self, session, ctx, lease, reservation, values):
        """Book the same needs for the lease's new window.

        Before the start they are booked anew; once started the servers
        sit on their slices, which move with the addresses, as long as
        their hosts and addresses are free in the new window.
        """
        base.check_unchanged({key: value for key, value in values.items()
                              if key in _REQUEST}, RESOURCE_TYPE)
        rid = reservation['id']
        busy = self.busy(ignore_reservation=rid)
        row = _row(session, rid)
        if reservation['status'] == ReservationStatus.PENDING:
            planner.release(session, rid)
            floating_ips.release(session, [allocation_id for allocation_id, _
                                           in floating_ips.booked(session,
                                                                  rid)])
            self._book(session, rid, lease, _planned(row), busy)
            return
        window = (lease['start_date'], lease['end_date'])
        planner.move_slices(session, rid, *window, busy,
                            host_capacity.from_nova_conf(self.conf))
        for wanted in _planned(row)[2]:
            floating_ips.move(session, rid, wanted.network_id, *window,
                              busy)
        if row.volume_gb:
            volume_capacity.check(
                session, self.conf.reservation.volume_reservable_gb,
                *window, row.volume_gb, busy)

    def on_start(self, ctx, lease, reservation):
        """Make the stack through the trust; wait until Heat made it.

        Run again after a deferred wait, it goes on from what it recorded:
        a stack Heat failed to make is deleted, never made again.
        """
        rid = reservation['id']
        row = self._read(ctx, rid)
        auth = self.clients.trusts.auth(row.trust_id)
        if row.stack_id and row.stack_status not in _MADE_OR_MAKING:
            self._give_up(ctx, auth, row, row.stack_id, row.stack_status,
                          row.stack_status_reason)
        stack_id = self._make_stack(ctx, lease, auth, row)
        stack = self.clients.heat.wait_for_stack(auth, stack_id, _CREATING,
                                                 scope=row.trust_id)
        status = stack and stack['stack_status']
        reason = stack and stack['stack_status_reason']
        self._record(ctx, rid, stack_id, status, reason)
        if status != CREATE_COMPLETE:
            self._give_up(ctx, auth, row, stack_id, status, reason)
        found = self.clients.heat.stack_resources(
            auth, STACK_NAME % rid, stack_id, _IMAGED)
        with db_api.writer(ctx, self.clock) as session:
            store.record_resources(session, rid, found)

    def _make_stack(self, ctx, lease, auth, row):
        """Make the stack (once) on the booked addresses; return its id."""
        rid = row.reservation_id
        files = addresses.environment(
            self._make_addresses(ctx, lease, rid, row), lease['project_id'])
        try:
            stack_id = self.clients.heat.ensure_stack(
                auth, STACK_NAME % rid, row.template,
                json.loads(row.parameters), row.environment, files)
        except orchestration.TemplateRefused as exc:
            raise exceptions.ActionFailed(
                'Heat refused the stack: %s' % exc.message) from None
        if row.stack_id is None:
            self._record(ctx, rid, stack_id, _CREATING[-1])
        return stack_id

    def _give_up(self, ctx, auth, row, stack_id, status, reason):
        """Delete a stack Heat failed to make; fail the start for good.

        Nothing is left behind: the lease's resources go with the stack.
        """
        rid = row.reservation_id
        self.clients.heat.delete_stack(auth, stack_id, scope=row.trust_id)
        self._record(ctx, rid, stack_id, orchestration.DELETE_COMPLETE,
                     reason)
        raise exceptions.ActionFailed(
            'Heat could not create stack %s: %s %s'
            % (STACK_NAME % rid, status, reason))

    def _make_addresses(self, ctx, lease, reservation_id, row):
        """Make the booked addresses in the lease's project, tagged.

        :returns: ``{resource name: (floating IP id, address, network
            id)}``: each floating IP resource of the stack with an
            address of its network, in the order of their names and
            addresses.
        """
        booked = {}
        for fip in floating_ip.booked_addresses(ctx, reservation_id):
            booked.setdefault(fip.floating_network_id, []).append(fip)
        made = {}
        for wanted in json.loads(row.floating_ips):
            for name, fip in zip(wanted['resources'],
                                 booked.get(wanted['network_id'], [])):
                made[name] = (self.clients.network.ensure_floating_ip(
                    fip.floating_network_id, fip.subnet_id,
                    fip.floating_ip_address, lease['project_id'],
                    reservation_id), fip.floating_ip_address,
                    fip.floating_network_id)
        return made

    def on_end(self, ctx, lease, reservation):
        """End the stack as ``on_end`` says; delete its addresses, the trust.

        ``snapshot_delete`` images the servers and volumes of a stack that
        Heat made before it is deleted; a snapshot that fails leaves the
        stack as it is, and the end fails.
        """
        rid = reservation['id']
        row = self._read(ctx, rid)
        if row.stack_id and row.stack_status != (
                orchestration.DELETE_COMPLETE):
            auth = self.clients.trusts.auth(row.trust_id)
            if (row.on_end == SNAPSHOT_DELETE and
                    row.stack_status == CREATE_COMPLETE):
                self._snapshot(ctx, auth, rid)
            self.clients.heat.delete_stack(auth, row.stack_id,
                                           scope=row.trust_id)
            self._record(ctx, rid, row.stack_id,
                         orchestration.DELETE_COMPLETE)
        if json.loads(row.floating_ips):
            self.clients.network.delete_reserved_floating_ips(rid)
        self.clients.trusts.delete(row.trust_id)

    def _snapshot(self, ctx, auth, reservation_id):
        """Image each server and volume of the stack, all at once."""
        with db_api.context_manager.reader.using(ctx) as session:
            made = session.execute(sa.select(
                STACK_RESOURCES.c.resource_type,
                STACK_RESOURCES.c.physical_id, STACK_RESOURCES.c.image_id
            ).where(STACK_RESOURCES.c.reservation_id == reservation_id)
            ).all()
        deferral.gather([functools.partial(
            self._image, ctx, auth, reservation_id, *resource)
            for resource in made])

    def _image(self, ctx, auth, reservation_id, kind, physical_id,
               image_id):
        """Image a server (Nova's snapshot) or a volume (Cinder's upload).

        The image a volume's upload makes is recorded at once, so that a
        run after a deferred wait waits for it rather than uploading
        again (Nova's snapshot of a server is found by the server's id).
        """
        if kind == stack_needs.SERVER:
            image_id = self.nova.snapshot(physical_id)
        elif image_id is None:
            volume = self.cinder.find_volume(physical_id)
            if volume is None:
                return
            image_id = self.cinder.upload_volume(
                auth, physical_id,
                '%s-snapshot' % (volume['name'] or physical_id))
            self._record_image(ctx, reservation_id, physical_id, image_id)
        if kind == stack_needs.VOLUME:
            self.clients.images.wait_active(image_id, _IMAGE_TIMEOUT)
            self.cinder.wait_uploaded(physical_id)
        elif image_id is not None:
            self._record_image(ctx, reservation_id, physical_id, image_id)

    def on_delete(self, ctx, lease, reservation):
        """End what a start began; before the start, only the trust goes."""
        self.on_end(ctx, lease, reservation)

    def _read(self, ctx, reservation_id):
        with db_api.context_manager.reader.using(ctx) as session:
            return _row(session, reservation_id)

    def _record_image(self, ctx, reservation_id, physical_id, image_id):
        with db_api.writer(ctx, self.clock) as session:
            store.set_image(session, reservation_id, physical_id, image_id)

    def _record(self, ctx, reservation_id, stack_id, status, reason=None):
        with db_api.writer(ctx, self.clock) as session:
            store.set_stack(session, reservation_id, stack_id, status,
                            reason)


def _row(session, reservation_id):
    return session.execute(sa.select(STACK_RESERVATIONS).where(
        STACK_RESERVATIONS.c.reservation_id == reservation_id)).one()


def _planned(row):
    """Return what the planner books for a stored request (its needs)."""
    return ([booking.Servers(server['flavor'], (
        server['vcpus'], server['memory_mb'], server['disk_gb']),
        server['count']) for server in json.loads(row.servers)],
        row.volume_gb,
        [booking.Addresses(address['network'], address['network_id'],
                           len(address['resources']))
         for address in json.loads(row.floating_ips)])


def _view(row):
    servers, volume_gb, addresses = _planned(row)
    return {
        'on_end': row.on_end,
        'servers': {wanted.flavor: wanted.count for wanted in servers},
        'volume_gb': volume_gb,
        'floating_ips': {wanted.network: wanted.count
                         for wanted in addresses},
        'stack_id': row.stack_id, 'stack_status': row.stack_status,
        'stack_status_reason': row.stack_status_reason}


def _totals(servers):
    """Return what Nova's quotas count of the stack's servers."""
    return {'instances': sum(wanted.count for wanted in servers),
            'vcpus': sum(wanted.count * wanted.size[0] for wanted in servers),
            'memory_mb': sum(wanted.count * wanted.size[1]
                             for wanted in servers)}


def _server_row(wanted):
    return dict(zip(('vcpus', 'memory_mb', 'disk_gb'), wanted.size),
                flavor=wanted.flavor, count=wanted.count)


def _address_row(wanted, resources):
    return {'network': wanted.network, 'network_id': wanted.network_id,
            'resources': resources}


def _counts(values, field):
    """Return ``[(name, count)]`` of a query's ``name:count,...``, sorted.

    Sorted by name, as Heat's preview's needs are (the order the planner
    books them in); a count of 0 is left out.
    """
    counts = {}
    for pair in values.get(field, '').split(',') if values.get(field) else ():
        name, count = pair.rsplit(':', 1)
        counts[name] = counts.get(name, 0) + validation.parse_integer(
            count, field)
    return [(name, count) for name, count in sorted(counts.items())
            if count]


def _text(value):
    """Return a document as text (an object as JSON, which is YAML)."""
    if value is None or isinstance(value, str):
        return value
    return json.dumps(value)


def _stored(value):
    return json.dumps(value) if isinstance(value, dict) else value
