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

"""The ``virtual:instance`` plugin: one Nova server for a lease.

A request::

    {"resource_type": "virtual:instance", "server_id": "<uuid>",
     "vcpus": 1, "memory_mb": 512, "disk_gb": 1, "flavor_id": "1",
     "shared_pool": false, "on_end": "delete"}

nova-api's server middleware (:mod:`reservation_ext.nova_api`) makes these
requests: ``nova boot --hint reserved=True`` creates the server and a
lease with one such reservation naming it and carrying its flavor's size.

A lease that starts later books a slice of one reservable host for its
window with the planner
(:func:`reservation_ext.planning.planner.allocate_slice`), so that the
capacity is there at the start; the server waits unbuilt
(RESERVED) until the engine starts it on that host. A lease that starts
now (``shared_pool`` in the request) fills a gap when ``[reservation]
fill_gaps`` is set: it books a slice of a reservable host for ``[now,
end)``, and the planner's overlap test, cleaning time included, is what
makes the slice end before that host's next booking. Of the hosts that
have such a gap it takes the tightest, so that empty hosts stay whole for
host leases: a host that already carries slices in the window first, then
the one whose next booking (after the window, cleaning time included)
comes soonest; an empty host with nothing booked later comes last, ties
by host id. When no host has such a gap (or without fill_gaps) it books
nothing and the server runs in the shared pool, where host leases never
reach. The view says which
(``shared_pool``, and the booked ``host``); the middleware builds the
server at once, pinned to that host.

A booking on a host whose server is built (or being built) keeps that
host: its lease's end is a hard end, and it is extended only while the
host stays free (409 saying how far it can go otherwise). At the end,
``on_end`` says what becomes of the server: ``delete``,
``snapshot_delete`` (an image first) or ``shelve``.

A request without ``server_id`` is Blazar's instance reservation
(``amount`` servers of a size): :mod:`.instance_capacity` serves it, and
each method here hands such requests and reservations over; so are
proposals and availability queries with ``amount`` or another field of
that form (:func:`.instance_capacity.is_capacity_request`), while one
of the size alone is a server's.
"""

import functools
import math

from oslo_log import log as logging
import sqlalchemy as sa

from db import tables
from reservation_ext import exceptions
from reservation_ext.planning import healing
from reservation_ext.planning import host_capacity
from reservation_ext.planning import planner
from reservation_ext.planning import timelines
from reservation_ext.plugins import base
from reservation_ext.plugins import instance_capacity
from reservation_ext.states import ReservationStatus
from reservation_ext.store import instance_reservations as store_instances
from reservation_ext import validation

LOG = logging.getLogger(__name__)

RESOURCE_TYPE = 'virtual:instance'
INSTANCE_RESERVATIONS = tables.INSTANCE_RESERVATIONS
HOSTS = tables.HOSTS
ALLOCATIONS = tables.ALLOCATIONS
RECYCLING = tables.RECYCLING
ON_END = ('delete', 'snapshot_delete', 'shelve')
SIZE_KEYS = ('vcpus', 'memory_mb', 'disk_gb')
# nova-api's middleware makes these requests: numbers are numbers.
_SIZE = {'type': 'integer', 'minimum': 0, 'description': 'an integer >= 0'}
SCHEMA = {
    'type': 'object',
    'properties': {
        **{key: _SIZE for key in SIZE_KEYS},
        'server_id': {},
        'flavor_id': {'type': ['string', 'null']},
        'shared_pool': {'type': 'boolean'},
        'on_end': {'enum': list(ON_END)},
    },
    'additionalProperties': False,
    'required': list(SIZE_KEYS),
}
# What a lease update may change: the server's flavor (its size follows),
# and what happens at the end.
UPDATE_SCHEMA = {
    'type': 'object',
    'properties': {
        'flavor_id': {'type': 'string', 'minLength': 1,
                      'description': 'a flavor id'},
        'on_end': {'enum': list(ON_END)},
    },
    'additionalProperties': False,
}
# What a schedule proposals request asks for: a server's size.
PROPOSAL_SCHEMA = {
    'type': 'object',
    'properties': {key: validation.INTEGER for key in SIZE_KEYS},
    'additionalProperties': False,
    'required': list(SIZE_KEYS),
}
_COLUMNS = SIZE_KEYS + ('server_id', 'flavor_id', 'on_end')
BUILD_ARGS = 'build_args'


class BuildArgs(str):
    """A held-back build's arguments (:func:`held_builds.dump`).

    nova-api's server middleware passes them in the reservation values of
    a RESERVED server, so that they are written with the lease. A request
    decoded from JSON never holds one: the lease API cannot set them.
    """


class VirtualInstancePlugin(base.ResourcePlugin):
    """Reserve a server's flavor on a reservable host for a window."""

    @functools.cached_property
    def capacity(self):
        """Return the plugin of the instance-capacity form."""
        return instance_capacity.InstanceCapacityPlugin(
            self.conf, self.clock, self.clients)

    def validate(self, values):
        """See :meth:`ResourcePlugin.validate`."""
        if instance_capacity.is_capacity(values):
            return self.capacity.validate(values)
        build_args = values.get(BUILD_ARGS)
        trusted = isinstance(build_args, BuildArgs)
        # Given by a lease-API user, build_args is an unknown key.
        validation.check_schema({
            key: value for key, value in values.items()
            if not (trusted and key == BUILD_ARGS)}, SCHEMA)
        out = {key: values[key] for key in SIZE_KEYS}
        out['server_id'] = validation.resource_uuid(
            values.get('server_id'), 'server_id', 'server',
            'nova boot --hint reserved=True')
        out['flavor_id'] = values.get('flavor_id')
        out['shared_pool'] = values.get('shared_pool', False)
        out['on_end'] = values.get('on_end', self.conf.reservation
                                   .instance_on_end)
        if trusted:
            out[BUILD_ARGS] = str(build_args)
        return out

    def validate_proposal(self, values):
        """See :meth:`ResourcePlugin.validate_proposal`.

        A request with a field of the instance-capacity form (``amount``,
        ``affinity``, ...) is of that form; one of the size alone is a
        server's (the ``proposal`` hint of ``nova boot``).
        """
        if instance_capacity.is_capacity_request(values):
            return self.capacity.validate_proposal(values)
        validation.check_schema(values, PROPOSAL_SCHEMA)
        size = {key: validation.parse_integer(values[key], key)
                for key in SIZE_KEYS}
        if not any(size.values()):
            raise exceptions.InvalidInput(
                'vcpus', 'a server needs some vCPUs, memory or disk')
        return size

    def validate_query(self, values):
        """Check an availability query, of either form (as a proposal's)."""
        if instance_capacity.is_capacity_request(values):
            return self.capacity.validate_query(values)
        return self.validate_proposal(values)

    def prepare_proposal(self, ctx, values):
        """See :meth:`ResourcePlugin.prepare_proposal`."""
        if instance_capacity.is_capacity_request(values):
            return self.capacity.prepare_proposal(ctx, values)
        return values

    def timeline(self, session, values, span, busy, for_update=False):
        """See :meth:`ResourcePlugin.timeline`."""
        if instance_capacity.is_capacity_request(values):
            return self.capacity.timeline(session, values, span, busy,
                                          for_update)
        capacity, allocations, generations = planner.read_slice_schedules(
            session, span, busy, host_capacity.from_nova_conf(self.conf))
        return timelines.Slices(
            span, capacity, allocations,
            tuple(values[key] for key in SIZE_KEYS), generations=generations)

    def prepare_create(self, ctx, reservation_id, values, projects):
        """See :meth:`ResourcePlugin.prepare_create`."""
        if instance_capacity.is_capacity(values):
            return self.capacity.prepare_create(ctx, reservation_id, values,
                                                projects)
        return values

    def undo_create(self, ctx, reservation_id, values):
        """See :meth:`ResourcePlugin.undo_create`."""
        if instance_capacity.is_capacity(values):
            self.capacity.undo_create(ctx, reservation_id, values)

    def reserve(self, session, ctx, lease, reservation_id, values,
                hold=None):
        """See :meth:`ResourcePlugin.reserve`."""
        if instance_capacity.is_capacity(values):
            return self.capacity.reserve(session, ctx, lease,
                                         reservation_id, values, hold)
        if values['shared_pool']:
            if lease['starts_later']:
                raise exceptions.InvalidInput(
                    'shared_pool', 'only a lease that starts now runs in '
                    'the shared pool')
            if self.conf.reservation.fill_gaps:
                self._fill_gap(session, reservation_id, lease, values)
        elif hold is not None:
            self._book(session, reservation_id, lease, values, (
                HOSTS.c.id.in_(planner.held_hosts(
                    session, hold.proposal_id, hold.proposal_item)),),
                ignore_proposal=hold.proposal_id)
        else:
            self._book(session, reservation_id, lease, values)
        store_instances.add(session, reservation_id, dict(
            build_args=values.get(BUILD_ARGS),
            **{key: values[key] for key in _COLUMNS}))
        return values['server_id']

    def get_details(self, session, reservation_ids):
        """See :meth:`ResourcePlugin.get_details`."""
        details = self.capacity.get_details(session, reservation_ids)
        for row in session.execute(
                sa.select(INSTANCE_RESERVATIONS, HOSTS.c.hypervisor_hostname)
                .outerjoin(ALLOCATIONS, ALLOCATIONS.c.reservation_id ==
                           INSTANCE_RESERVATIONS.c.reservation_id)
                .outerjoin(HOSTS, HOSTS.c.id == ALLOCATIONS.c.host_id)
                .where(INSTANCE_RESERVATIONS.c.reservation_id
                       .in_(reservation_ids),
                       INSTANCE_RESERVATIONS.c.server_id.is_not(None))):
            view = {key: getattr(row, key) for key in _COLUMNS
                    if getattr(row, key) is not None}
            view['shared_pool'] = row.hypervisor_hostname is None
            if row.hypervisor_hostname is not None:
                view['host'] = row.hypervisor_hostname
            details[row.reservation_id] = view
        return details

    def prepare_update(self, ctx, reservation, values):
        """Return the update's values, with the size of a new flavor."""
        if instance_capacity.is_capacity(reservation):
            return self.capacity.prepare_update(ctx, reservation, values)
        validation.check_schema(values, UPDATE_SCHEMA)
        if 'flavor_id' not in values:
            return values
        flavor = self.nova.flavor(values['flavor_id'])
        if flavor is None:
            raise exceptions.InvalidInput(
                'flavor_id', 'no flavor %s' % values['flavor_id'])
        # As Nova counts a server's disk on its host; a volume-backed
        # server is counted with its root disk: more, never less.
        return dict(values, vcpus=flavor['vcpus'], memory_mb=flavor['ram'],
                    disk_gb=flavor['disk'] + flavor.get(
                        'OS-FLV-EXT-DATA:ephemeral', 0) +
                    math.ceil((flavor.get('swap') or 0) / 1024))

    def update(self, session, ctx, lease, reservation, values):
        """Re-book for a new window or flavor; the new flavor goes to Nova.

        Only a server that waits for its start changes flavor (a built one
        is Nova's to resize); it may move to any host that fits. A
        started server stays where it runs.
        """
        if instance_capacity.is_capacity(reservation):
            return self.capacity.update(session, ctx, lease, reservation,
                                        values)
        request = dict({key: reservation.get(key) for key in _COLUMNS},
                       **values)
        resized = any(request[key] != reservation.get(key)
                      for key in SIZE_KEYS + ('flavor_id',))
        if resized:
            _check_waiting(reservation)
        # Only a booking that is still to be used moves.
        if not reservation['shared_pool'] and reservation['status'] in (
                ReservationStatus.PENDING, ReservationStatus.ACTIVE):
            self._rebook(session, lease, reservation, request)
        store_instances.change(session, reservation['id'],
                               {key: request[key] for key in _COLUMNS})
        if resized:
            return functools.partial(
                _set_flavor, self.nova, reservation['server_id'],
                lease['id'], request['flavor_id'])
        return None

    def _fill_gap(self, session, reservation_id, lease, size):
        """Book the slice of a reservable host that is free until the end.

        The tightest gap: a host that carries slices in the window first,
        then the one whose next booking comes soonest after it; an empty
        host with nothing booked later last (the planner's ``tightest``
        order). No host has one: nothing is written, the server runs in
        the shared pool. A host that recycles takes no new server, so it
        has no gap.
        """
        try:
            self._book(session, reservation_id, lease, size, (
                HOSTS.c.id.not_in(sa.select(RECYCLING.c.host_id)),),
                tightest=True)
        except exceptions.NotEnoughResources:
            pass

    def _rebook(self, session, lease, reservation, size):
        conditions = ()
        # A server that started (or fills a gap from now) stays where it
        # is built; only its window may change there.
        if (reservation['status'] == ReservationStatus.ACTIVE or
                lease['start_date'] <= self.clock.now()):
            conditions = (HOSTS.c.hypervisor_hostname == reservation['host'],)
        booked = planner.booked_hosts(session, reservation['id'])
        try:
            planner.release(session, reservation['id'])
            self._book(session, reservation['id'], lease, size, conditions)
        except exceptions.NotEnoughResources as exc:
            latest = booked and planner.latest_slice_end(
                session, booked[0], lease['start_date'],
                tuple(size[key] for key in SIZE_KEYS),
                self.busy(ignore_reservation=reservation['id']),
                host_capacity.from_nova_conf(self.conf))
            raise base.blocked_extension(exc, latest or None, lease)

    def heal_request(self, reservation):
        """Return a slice of the server's size on any reservable host.

        A built server stays on its failed host: only its booking moves,
        so that the room is there when the operator evacuates it
        (``openstack server evacuate --host <the booking's host>``); a
        server still waiting for its start is built on the new host.
        """
        if instance_capacity.is_capacity(reservation):
            return self.capacity.heal_request(reservation)
        return healing.Request(usable=host_capacity.from_nova_conf(self.conf))

    def on_heal(self, ctx, lease, reservation, moves):
        """See :meth:`ResourcePlugin.on_heal`."""
        if instance_capacity.is_capacity(reservation):
            return self.capacity.on_heal(ctx, lease, reservation, moves)
        for failed, replacement in moves:
            LOG.warning('Server %s of lease %s stays on failed host %s; its '
                        'booking moved to %s, where an evacuation may put '
                        'it', reservation['server_id'], lease['id'], failed,
                        replacement)

    def on_start(self, ctx, lease, reservation):
        """See :meth:`ResourcePlugin.on_start`."""
        if instance_capacity.is_capacity(reservation):
            return self.capacity.on_start(ctx, lease, reservation)
        if not reservation['shared_pool']:
            self.nova.start_server(reservation['server_id'], lease['id'])

    def on_end(self, ctx, lease, reservation):
        """See :meth:`ResourcePlugin.on_end`."""
        if instance_capacity.is_capacity(reservation):
            return self.capacity.on_end(ctx, lease, reservation)
        self.nova.end_server(reservation['server_id'], reservation['on_end'])

    def on_delete(self, ctx, lease, reservation):
        """See :meth:`ResourcePlugin.on_delete`."""
        if instance_capacity.is_capacity(reservation):
            return self.capacity.on_delete(ctx, lease, reservation)
        # Before the start the server is the lease's alone: it goes too.
        if reservation['status'] == ReservationStatus.PENDING:
            self.nova.delete_servers([reservation['server_id']])
        elif reservation['status'] == ReservationStatus.ACTIVE:
            self.on_end(ctx, lease, reservation)

    def _book(self, session, reservation_id, lease, size, conditions=(),
              tightest=False, **ignore):
        """Book a slice of ``size`` (a dict of SIZE_KEYS) for the lease.

        ``tightest``: in the tightest gap rather than on the lowest host.
        """
        planner.allocate_slice(
            session, planner.Owner(reservation_id), lease['start_date'],
            lease['end_date'], tuple(size[key] for key in SIZE_KEYS),
            self.busy(**ignore),
            usable=host_capacity.from_nova_conf(self.conf),
            conditions=conditions, tightest=tightest)

    def billing_resources(self, session, reservations):
        """Return each reservation's server with its flavor's size."""
        resources = self.capacity.billing_resources(session, reservations)
        return dict(resources, **{row.reservation_id: [{
            'id': row.server_id, 'flavor_id': row.flavor_id,
            'amount': row.amount, 'vcpus': row.vcpus,
            'memory_mb': row.memory_mb, 'disk_gb': row.disk_gb}]
            for row in session.execute(sa.select(INSTANCE_RESERVATIONS).where(
                INSTANCE_RESERVATIONS.c.reservation_id.in_(
                    [reservation['id'] for reservation in reservations]),
                INSTANCE_RESERVATIONS.c.server_id.is_not(None)))})


def _check_waiting(reservation):
    if reservation['shared_pool'] or (
            reservation['status'] != ReservationStatus.PENDING):
        raise exceptions.InvalidInput(
            'flavor_id', 'server %s is built already: resize it with Nova'
            % reservation['server_id'])


def _set_flavor(nova, server_id, lease_id, flavor_id, ctx):
    nova.set_reserved_flavor(server_id, lease_id, flavor_id)
