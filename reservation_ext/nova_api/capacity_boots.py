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

"""Boots with an instance-capacity reservation's flavor, in nova-api.

``POST /servers`` whose ``flavorRef`` is the id of an instance-capacity
reservation (:mod:`reservation_ext.plugins.instance_capacity`: its
private flavor has that id), from one of the lease's projects:

1. 409 before the lease's start and from its end on (the flavor exists
   only in between, but the user learns why).
2. As many seats as the boot makes servers (``max_count``, else
   ``min_count``, else 1) are claimed in one compare-and-swap
   (:func:`reservation_ext.planning.seats.claim`): 409 when fewer are
   free; nothing is created.
3. Nova creates the servers; just before its cast to the conductor
   (:mod:`.held_builds`' ``before_cast``), each claimed seat is bound to
   one server's uuid and the builds carry the seats in the hint
   ``reservation_seats``, so the scheduler filter pins them to the seats'
   hosts. They join the reservation's server group, whose policy Nova's
   group filters then apply among the seats' hosts. A ``group`` hint
   naming that group (as Blazar's users give it) is taken out first: the
   group is in the lease owner's project, where Nova would not find it
   for a project the lease is shared with. A hint naming another group
   is refused (400), unless the reservation has no group.
4. Whatever happened, the seats that no server took are freed.

A boot from any other project is Nova's alone: the flavor is private to
the lease's projects, so Nova says it does not exist and nothing leaks.
Deleting a server frees its seat (:meth:`CapacityBoots.free_seat`).
"""

import functools

from nova import context as nova_context
from nova import exception as nova_exception
from nova import objects

from db import api as db_api
from reservation_ext import dates
from reservation_ext import exceptions
from reservation_ext.leases import hints as lease_hints
from reservation_ext.nova_api import held_builds
from reservation_ext.planning import seats
from reservation_ext.states import LeaseStatus
from reservation_ext import validation

# Nova's scheduler hint of the server group a server joins.
GROUP_HINT = 'group'


class CapacityBoots:
    """Serve the server middleware's boots with a capacity flavor."""

    def __init__(self, application, clock):
        self.application = application
        self.clock = clock

    def boot(self, req, body, hints, rctx):
        """Return Nova's response to a capacity-flavor boot (else None).

        :param body: the request's JSON; ``hints`` its scheduler hints;
            ``rctx`` the caller's reservation context.
        """
        server = body['server']
        nova_ctx = req.environ['nova.context']
        capacity = self._capacity(rctx, server.get('flavorRef'))
        size, starting = None, False
        if capacity is None:
            capacity, size = self._stack_seats(rctx, nova_ctx, hints,
                                               server.get('flavorRef'))
            starting = True
        if capacity is None or nova_ctx.project_id not in capacity.projects:
            return None
        _check_hints(hints, capacity)
        if _own_group(hints, capacity):
            del hints[GROUP_HINT]
            req.json_body = body
        self._check_window(capacity, starting)
        count = _count(server)
        with db_api.writer(rctx, self.clock) as session:
            token, seat_ids = seats.claim(
                session, capacity.reservation_id, count, size)
        try:
            with held_builds.capture(False, before_cast=functools.partial(
                    self._bind, rctx, token, seat_ids,
                    capacity.server_group_id)):
                return req.get_response(self.application)
        finally:
            with db_api.writer(rctx, self.clock) as session:
                seats.free(session, token)

    def free_seat(self, rctx, server_id):
        """Free the seat of a deleted server, if it had one."""
        with db_api.writer(rctx, self.clock) as session:
            seats.free_server(session, server_id)

    @staticmethod
    def _capacity(rctx, flavor_ref):
        if not isinstance(flavor_ref, str) or not flavor_ref:
            return None
        # Nova also takes a flavor's link: its id is the last segment.
        flavor_id = flavor_ref.rstrip('/').rsplit('/', 1)[-1]
        with db_api.context_manager.reader.using(rctx) as session:
            return seats.capacity(session, flavor_id)

    @staticmethod
    def _stack_seats(rctx, nova_ctx, hints, flavor_ref):
        """Return the stack reservation of a boot by Heat, and its size.

        ``(None, None)`` for a boot of no reservation's stack. The size
        is the flavor's, as the booking counted it (root, ephemeral and
        swap disk).
        """
        reservation_id = seats.stack_reservation_id(
            hints.get(seats.STACK_HINT))
        if reservation_id is None or not isinstance(flavor_ref, str):
            return None, None
        with db_api.context_manager.reader.using(rctx) as session:
            capacity = seats.stack_capacity(session, reservation_id)
        if capacity is None:
            return None, None
        try:
            flavor = objects.Flavor.get_by_flavor_id(
                nova_ctx, flavor_ref.rstrip('/').rsplit('/', 1)[-1])
        except nova_exception.FlavorNotFound:
            # Nova says so itself.
            return None, None
        return capacity, (flavor.vcpus, flavor.memory_mb,
                          seats.flavor_disk_gb(flavor.root_gb,
                                               flavor.ephemeral_gb,
                                               flavor.swap))

    def _check_window(self, capacity, starting=False):
        """Refuse a boot outside the lease's window.

        :param starting: the boot may come while the lease starts (a
            stack's servers: its start makes them).
        """
        now = self.clock.now()
        early = (LeaseStatus.PENDING,) if starting else (
            LeaseStatus.PENDING, LeaseStatus.STARTING)
        if now < capacity.start_date or capacity.lease_status in early:
            raise exceptions.Conflict(
                'Reservation %s starts at %s: its flavor can be used from '
                'then until its end.' % (capacity.reservation_id,
                                         _date(capacity.start_date)))
        if now >= capacity.end_date or capacity.lease_status not in (
                (LeaseStatus.ACTIVE, LeaseStatus.STARTING) if starting
                else (LeaseStatus.ACTIVE,)):
            raise exceptions.Conflict(
                'Reservation %s ended at %s: its flavor can no longer be '
                'used.' % (capacity.reservation_id,
                           _date(capacity.end_date)))

    def _bind(self, rctx, token, seat_ids, group_id, request_specs):
        """Seat each build's server; the builds carry the seats."""
        taken = seat_ids[:len(request_specs)]
        with db_api.writer(rctx, self.clock) as session:
            for spec, seat_id in zip(request_specs, taken):
                seats.bind(session, token, seat_id, spec.instance_uuid)
        for spec in request_specs:
            spec.scheduler_hints = dict(spec.scheduler_hints or {},
                                        **{seats.HINT: list(taken)})
        if group_id is not None:
            _join_group(request_specs, group_id)


def _join_group(request_specs, group_id):
    """Make the builds members of the reservation's server group."""
    ctx = nova_context.get_admin_context()
    objects.InstanceGroup.add_members(
        ctx, group_id, [spec.instance_uuid for spec in request_specs])
    group = objects.InstanceGroup.get_by_uuid(ctx, group_id)
    for spec in request_specs:
        spec.instance_group = group


def _check_hints(hints, capacity):
    for hint in (lease_hints.RESERVED, lease_hints.LEASE_PARAMS):
        if hint in hints:
            raise exceptions.InvalidInput(
                hint, 'a server booted with the flavor of reservation %s '
                'runs in that reservation; it has no lease of its own'
                % capacity.reservation_id)


def _own_group(hints, capacity):
    """Say whether the ``group`` hint names the reservation's own group.

    :raises InvalidInput: it names another group, and the reservation
        has one.
    """
    group = hints.get(GROUP_HINT)
    if group is None or capacity.server_group_id is None:
        return False
    if group != capacity.server_group_id:
        raise exceptions.InvalidInput(
            GROUP_HINT, 'a server booted with the flavor of reservation %s '
            'joins its server group %s' % (capacity.reservation_id,
                                           capacity.server_group_id))
    return True


def _count(server):
    """Return how many servers the boot makes, at most."""
    for key in ('max_count', 'min_count'):
        if key in server:
            return validation.parse_integer(server[key], key, minimum=1)
    return 1


def _date(moment):
    return moment.strftime(dates.BLAZAR_DATE_FORMAT)
