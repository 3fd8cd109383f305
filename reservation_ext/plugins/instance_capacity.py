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

"""Instance-capacity reservations: ``amount`` servers of one size.

Blazar 18's instance reservation, as two request forms::

    {"resource_type": "virtual:instance", "amount": 3, "vcpus": 2,
     "memory_mb": 2048, "disk_gb": 20, "affinity": false,
     "resource_properties": ""}
    {"resource_type": "flavor:instance", "flavor_id": "<flavor>",
     "amount": 3, "affinity": null}

A ``virtual:instance`` request without ``server_id`` is this form (the
one-server form of ``nova boot --hint reserved=True`` always has one:
:mod:`.virtual_instance` dispatches here); ``flavor:instance`` takes the
size (vCPUs, RAM, root + ephemeral + swap disk) and extra specs of an
existing flavor. ``affinity`` may also be the text python-blazarclient
sends ("True", "False", "None").

Protocol:

create
    The planner books ``amount`` slices (seats,
    :mod:`reservation_ext.planning.seats`) in one search
    (:func:`~reservation_ext.planning.planner.allocate_slices`): affinity
    true on one host, false on as many hosts, null packed from the lowest
    host up. They are the rows of the one-server leases' slices, so
    neither over-books the other.

    Before the booking, as Blazar 18 does: a private flavor whose id is
    the reservation id, with the size and the extra spec ``reservation:id``
    (flavor:instance: plus the source's extra specs), usable by the
    lease's projects; and for affinity true/false a server group
    (affinity / anti-affinity), made as the caller so that it is in the
    lease owner's project. Both are in the view from the creation on;
    both are deleted again when the booking is refused.
start
    Nothing more (a reservation made before its flavor was made at
    creation gets it now). Servers booted with the flavor take a seat
    each in nova-api (:mod:`reservation_ext.nova_api.capacity_boots`,
    which refuses them before the start) and the scheduler filter pins
    each to its seat's host.
end
    The seated servers end as ``on_end`` says (default ``[reservation]
    instance_on_end``), then the flavor and server group are deleted; a
    lease deleted before its start deletes them too.
update
    Before the start the window, ``amount`` and size are booked anew (a
    new size makes the flavor anew after the transaction); once started,
    only the window moves, on the hosts the seats are on.

Every engine action is idempotent: what exists or is gone already is
fine.

Schedule proposals take either form as a lease create does (a
``flavor:instance``'s flavor is looked up, and its access checked for
the caller's project, before the search); each proposal holds the
``amount`` slices where the planner would place them by ``affinity``,
and a lease made from it books exactly those
(:mod:`reservation_ext.planning.capacity_proposals`). A request that no
window can ever fit is a 400 naming the field that makes it so.
Availability counts ``servers``: the most servers of the size that one
reservation of the affinity could book at each moment (``amount`` may
be left out of the query: the count does not depend on it).
"""

import functools
import json

import sqlalchemy as sa

from db import api as db_api
from db import tables
from reservation_ext import exceptions
from reservation_ext.planning import capabilities
from reservation_ext.planning import capacity_proposals
from reservation_ext.planning import healing
from reservation_ext.planning import host_capacity
from reservation_ext.planning import planner
from reservation_ext.planning import seats
from reservation_ext.plugins import base
from reservation_ext.states import ReservationStatus
from reservation_ext.store import instance_reservations as store_instances
from reservation_ext import validation

FLAVOR_RESOURCE_TYPE = 'flavor:instance'
INSTANCE_RESERVATIONS = tables.INSTANCE_RESERVATIONS
SIZE_KEYS = ('vcpus', 'memory_mb', 'disk_gb')
ON_END = ('delete', 'snapshot_delete', 'shelve')
# The name of the private flavor that Blazar 18 made for a reservation.
BLAZAR_FLAVOR_NAME = 'reservation:%s'
_AFFINITY = {'true': True, 'false': False, 'none': None, 'null': None}
_POLICIES = {True: 'affinity', False: 'anti-affinity'}
_COMMON = {
    'amount': validation.INTEGER,
    'affinity': {'type': ['boolean', 'null', 'string'],
                 'description': 'true, false or null'},
    # A capability query as physical:host's; compiling checks it.
    'resource_properties': {},
    'on_end': {'enum': list(ON_END)},
}
SCHEMA = {
    'type': 'object',
    'properties': dict(_COMMON, **{key: validation.INTEGER
                                   for key in SIZE_KEYS}),
    'additionalProperties': False,
    'required': ['amount'] + list(SIZE_KEYS),
}
FLAVOR_SCHEMA = {
    'type': 'object',
    'properties': dict(_COMMON, flavor_id={
        'type': ['string', 'integer'], 'minLength': 1,
        'description': 'a flavor id'}),
    'additionalProperties': False,
    'required': ['amount', 'flavor_id'],
}
UPDATE_SCHEMA = {
    'type': 'object',
    'properties': {key: validation.INTEGER
                   for key in ('amount',) + SIZE_KEYS},
    'additionalProperties': False,
}
_COLUMNS = ('amount', 'affinity', 'resource_properties', 'on_end') + \
    SIZE_KEYS


def is_capacity(values):
    """Say whether a virtual:instance request or view is of this form.

    The one-server form always names its server (nova-api's middleware
    makes it); a view of it always shows it.
    """
    return 'server_id' not in values and 'build_args' not in values


def is_capacity_request(values):
    """Say whether a virtual:instance proposal or query is of this form.

    It has a field only this form has (``amount``, ``affinity``,
    ``resource_properties``, ``on_end``); a server's, the ``proposal``
    hint's of ``nova boot``, has only the size.
    """
    return any(key in values for key in _COMMON)


class InstanceCapacityPlugin(base.ResourcePlugin):
    """Reserve capacity for a number of servers of one size."""

    # The fields that give a server's size, as the user writes them.
    SIZE_FIELDS = SIZE_KEYS

    def validate(self, values):
        """See :meth:`ResourcePlugin.validate`."""
        validation.check_schema(values, SCHEMA)
        out = {key: _count(values, key, 0) for key in SIZE_KEYS}
        if not any(out.values()):
            raise exceptions.InvalidInput(
                'vcpus', 'a server needs some vCPUs, memory or disk')
        return dict(out, **self._common(values))

    def _common(self, values):
        """Return the fields both forms have, normalized."""
        query = values.get('resource_properties') or ''
        query = query if isinstance(query, str) else json.dumps(query)
        capabilities.compile(query, 'resource_properties')
        return {'amount': _count(values, 'amount', 1),
                'affinity': _affinity(values.get('affinity')),
                'resource_properties': query,
                'on_end': values.get('on_end', self.conf.reservation
                                     .instance_on_end),
                'source_flavor': None}

    def prepare_create(self, ctx, reservation_id, values, projects):
        """Make the reservation's flavor and server group (module doc).

        The group is made as the caller, in the lease owner's project.
        """
        self._check_flavor_access(ctx, projects[0], values)
        return dict(values, server_group_id=self._make(
            dict(values, id=reservation_id), projects,
            ctx.user_auth_plugin))

    def undo_create(self, ctx, reservation_id, values):
        """Delete the flavor and server group :meth:`prepare_create` made."""
        self._unmake(dict(values, id=reservation_id))

    def _make(self, reservation, projects, auth=None):
        """Make the group and flavor; return the group's id (or None).

        ``auth``: the caller's auth plugin, whose project gets the group
        (by default the service user's).
        """
        policy = _POLICIES.get(reservation['affinity'])
        group_id = policy and self.nova.ensure_server_group(
            'reservation-%s' % reservation['id'], policy, auth)
        self._make_flavor(reservation, projects)
        return group_id

    def _make_flavor(self, reservation, projects):
        source = json.loads(reservation.get('source_flavor') or '{}')
        self.nova.ensure_private_flavor(
            _flavor(reservation, source),
            dict(source.get('extra_specs', {}),
                 **{seats.FLAVOR_SPEC: reservation['id']}),
            projects)

    def _unmake(self, reservation):
        self.nova.delete_flavor(reservation['id'])
        if reservation.get('server_group_id'):
            self.nova.delete_server_group(reservation['server_group_id'])

    def validate_proposal(self, values):
        """Check a reservation of a proposals request: as for a lease."""
        return self.validate(values)

    def validate_query(self, values):
        """Check an availability query: a lease's fields, ``amount`` optional.

        The count (servers that one reservation could book) does not
        depend on ``amount``; a query may give it all the same, as the
        reservation it is about has it.
        """
        return self.validate_proposal(dict({'amount': 1}, **values))

    def timeline(self, session, values, span, busy, for_update=False):
        """Return the timeline of the servers placed by affinity."""
        return capacity_proposals.timeline(
            session, self._request(values), span, busy,
            host_capacity.from_nova_conf(self.conf), for_update)

    def _request(self, values):
        """Return the :class:`~.capacity_proposals.Request` of ``values``."""
        return capacity_proposals.Request(
            _size(values), values['amount'], values['affinity'],
            (capabilities.compile(values['resource_properties'],
                                  'resource_properties'),),
            self.SIZE_FIELDS)

    def reserve(self, session, ctx, lease, reservation_id, values,
                hold=None):
        """See :meth:`ResourcePlugin.reserve`.

        From a proposal (``hold``), exactly the slices it holds.
        """
        if hold is None:
            self._book(session, reservation_id, lease, values)
        else:
            capacity_proposals.book_held(
                session, reservation_id,
                (lease['start_date'], lease['end_date']),
                self._request(values), hold,
                self.busy(ignore_proposal=hold.proposal_id),
                host_capacity.from_nova_conf(self.conf))
        store_instances.add(session, reservation_id, dict(
            source_flavor=values['source_flavor'],
            server_group_id=values.get('server_group_id'),
            **{key: values[key] for key in _COLUMNS}))
        return reservation_id

    def _check_flavor_access(self, ctx, project_id, values):
        """Check nothing: by default there is no flavor to check."""

    def _book(self, session, reservation_id, lease, request):
        planner.allocate_slices(
            session, planner.Owner(reservation_id), lease['start_date'],
            lease['end_date'], _size(request), self.busy(),
            amount=request['amount'], affinity=request['affinity'],
            usable=host_capacity.from_nova_conf(self.conf),
            conditions=(capabilities.compile(
                request['resource_properties'], 'resource_properties'),))

    def get_details(self, session, reservation_ids):
        """See :meth:`ResourcePlugin.get_details`."""
        return {row.reservation_id: _view(row) for row in session.execute(
            sa.select(INSTANCE_RESERVATIONS).where(
                INSTANCE_RESERVATIONS.c.reservation_id.in_(reservation_ids),
                INSTANCE_RESERVATIONS.c.server_id.is_(None)))}

    def prepare_update(self, ctx, reservation, values):
        """See :meth:`ResourcePlugin.prepare_update`."""
        validation.check_schema(values, UPDATE_SCHEMA)
        return {key: _count(values, key, 1 if key == 'amount' else 0)
                for key in values}

    def update(self, session, ctx, lease, reservation, values):
        """Book the request anew before the start; move the window after.

        A started reservation keeps its seats (servers sit there): only
        its window moves, if every seat's host has the room for it.
        """
        request = dict({key: reservation[key] for key in _COLUMNS},
                       **values)
        if reservation['status'] == ReservationStatus.PENDING:
            planner.release(session, reservation['id'])
            self._book(session, reservation['id'], lease, request)
        elif reservation['status'] == ReservationStatus.ACTIVE:
            base.check_unchanged({key: value for key, value in values.items()
                                  if value != reservation[key]},
                                 'started instance-capacity')
            self._move(session, lease, reservation)
        store_instances.change(session, reservation['id'],
                               {key: request[key] for key in _COLUMNS})
        if _size(request) == _size(reservation):
            return None
        # Nova's flavors do not change: it is made anew (no server may
        # boot with it before the start).
        return functools.partial(self._remake_flavor, _projects(lease),
                                 dict(reservation, **request))

    def _remake_flavor(self, projects, reservation, ctx):
        self.nova.delete_flavor(reservation['id'])
        self._make_flavor(dict(reservation, source_flavor=None), projects)

    def _move(self, session, lease, reservation):
        busy = self.busy(ignore_reservation=reservation['id'])
        try:
            planner.move_slices(session, reservation['id'],
                                lease['start_date'], lease['end_date'],
                                busy, host_capacity.from_nova_conf(self.conf))
        except exceptions.NotEnoughResources as exc:
            latest = planner.latest_slices_end(
                session, reservation['id'], lease['start_date'], busy,
                host_capacity.from_nova_conf(self.conf))
            raise base.blocked_extension(exc, latest, lease)

    def heal_request(self, reservation):
        """Return a replacement seat: same size, matching host, affinity kept.

        Seats of an affinity reservation move together onto one host; an
        anti-affinity seat moves to a host without another of its seats.
        A server on a moved seat stays on the failed host until the
        operator evacuates it (the seat holds its room on the new host).
        """
        return healing.Request(
            conditions=(capabilities.compile(
                reservation['resource_properties'], 'resource_properties'),),
            usable=host_capacity.from_nova_conf(self.conf),
            together=reservation['affinity'] is True,
            apart=reservation['affinity'] is False)

    def on_start(self, ctx, lease, reservation):
        """See :meth:`ResourcePlugin.on_start`."""
        # Made at the creation; a reservation of an older release, which
        # made them at the start, gets them now.
        flavor = self.nova.flavor(reservation['id'])
        if flavor is not None and flavor['name'] != BLAZAR_FLAVOR_NAME % (
                reservation['id']):
            return
        if flavor is not None:
            # Blazar's, of a reservation imported from Blazar before its
            # start: its extra specs ask Placement for Blazar's own
            # resource class, which nobody makes now. Ours replaces it,
            # under the same id, before any server could use it.
            self.nova.delete_flavor(reservation['id'])
        with db_api.context_manager.reader.using(ctx) as session:
            source = session.scalar(
                sa.select(INSTANCE_RESERVATIONS.c.source_flavor).where(
                    INSTANCE_RESERVATIONS.c.reservation_id ==
                    reservation['id']))
        if reservation.get('server_group_id'):
            self._make_flavor(dict(reservation, source_flavor=source),
                              _projects(lease))
            return
        group_id = self._make(dict(reservation, source_flavor=source),
                              _projects(lease))
        if group_id is not None:
            with db_api.writer(ctx, self.clock) as session:
                store_instances.set_server_group(session, reservation['id'],
                                                 group_id)

    def on_end(self, ctx, lease, reservation):
        """See :meth:`ResourcePlugin.on_end`."""
        with db_api.context_manager.reader.using(ctx) as session:
            taken = seats.servers(session, reservation['id'])
        # A claim's token is no server: Nova answers 404, which is fine.
        for server_id in taken:
            self.nova.end_server(server_id, reservation['on_end'])
        self._unmake(reservation)

    def on_delete(self, ctx, lease, reservation):
        """See :meth:`ResourcePlugin.on_delete`."""
        # The flavor and group exist from the creation on; before the
        # start no server is seated.
        self.on_end(ctx, lease, reservation)

    def billing_resources(self, session, reservations):
        """Return each reservation's flavor with the amount and size."""
        details = self.get_details(session, [reservation['id'] for
                                             reservation in reservations])
        return {rid: [{'id': None, 'flavor_id': rid, 'amount': view['amount'],
                       **{key: view[key] for key in SIZE_KEYS}}]
                for rid, view in details.items()}


class FlavorInstancePlugin(InstanceCapacityPlugin):
    """Reserve capacity for a number of servers of an existing flavor."""

    # The flavor gives every part of the size.
    SIZE_FIELDS = ('flavor_id',) * len(SIZE_KEYS)

    def validate(self, values):
        """See :meth:`ResourcePlugin.validate`."""
        validation.check_schema(values, FLAVOR_SCHEMA)
        flavor_id = str(values['flavor_id'])
        flavor = self.nova.flavor(flavor_id)
        if flavor is None:
            raise _no_flavor(flavor_id)
        return dict(self._common(values),
                    **flavor_request(flavor_id, flavor))

    def validate_proposal(self, values):
        """Check a reservation of a proposals request, but its flavor.

        The flavor is looked up by :meth:`prepare_proposal`, which knows
        the caller's project.
        """
        validation.check_schema(values, FLAVOR_SCHEMA)
        return dict(self._common(values), flavor_id=str(values['flavor_id']))

    def prepare_proposal(self, ctx, values):
        """Return the request with its flavor's size, for the project.

        :raises InvalidInput: (``flavor_id``) no such flavor, or a private
            one of other projects (as a create says).
        """
        flavor = self.nova.flavor(values['flavor_id'])
        if flavor is None:
            raise _no_flavor(values['flavor_id'])
        request = dict(values, **flavor_request(values['flavor_id'], flavor))
        self._check_flavor_access(ctx, ctx.project_id, request)
        return request

    def validate_query(self, values):
        """Check an availability query; return it with the flavor's size.

        A query has no project to check a private flavor's access for:
        only public flavors are looked up, and a private one is answered
        as one that does not exist (nothing leaks); its size can be asked
        as ``virtual:instance``.

        :raises InvalidInput: (``flavor_id``) no such public flavor.
        """
        values = self.validate_proposal(dict({'amount': 1}, **values))
        flavor = self.nova.flavor(values['flavor_id'])
        if flavor is None or not flavor.get('os-flavor-access:is_public',
                                            True):
            raise exceptions.InvalidInput(
                'flavor_id', 'no public flavor %s (ask for a private '
                "flavor's size as virtual:instance with vcpus, memory_mb "
                'and disk_gb)' % values['flavor_id'])
        return dict(values, **flavor_request(values['flavor_id'], flavor))

    def _check_flavor_access(self, ctx, project_id, values):
        """Check that a private source flavor is the lease's project's."""
        source = json.loads(values['source_flavor'])
        if not source['public'] and project_id not in (
                self.nova.flavor_projects(source['id'])):
            # As for a flavor that does not exist: nothing leaks.
            raise _no_flavor(source['id'])

    def prepare_update(self, ctx, reservation, values):
        """See :meth:`ResourcePlugin.prepare_update`."""
        # As Blazar: a flavor-based reservation changes only its window.
        base.check_unchanged(values, FLAVOR_RESOURCE_TYPE)
        return values


def flavor_request(flavor_id, flavor):
    """Return a flavor-based request's size and source flavor.

    :param flavor: Nova's view of the flavor ``flavor_id``, with its
        ``extra_specs`` (as Blazar 18 also recorded it).
    :returns: ``vcpus``, ``memory_mb``, ``disk_gb`` (root, ephemeral and
        swap) and ``source_flavor`` (JSON), as the request's row has them.
    """
    ephemeral = flavor.get('OS-FLV-EXT-DATA:ephemeral') or 0
    # Nova (and so Blazar's copy) says "" for no swap.
    swap = flavor.get('swap') or 0
    return {
        'vcpus': flavor['vcpus'], 'memory_mb': flavor['ram'],
        'disk_gb': seats.flavor_disk_gb(flavor['disk'], ephemeral, swap),
        'source_flavor': json.dumps({
            'id': flavor_id, 'public': flavor.get(
                'os-flavor-access:is_public', True),
            'disk': flavor['disk'], 'ephemeral': ephemeral, 'swap': swap,
            'extra_specs': flavor.get('extra_specs') or {}})}


def _view(row):
    view = {key: getattr(row, key) for key in _COLUMNS}
    view.update(flavor_id=row.reservation_id,
                server_group_id=row.server_group_id, aggregate_id=None)
    if row.source_flavor:
        view['source_flavor_id'] = json.loads(row.source_flavor)['id']
    return view


def _flavor(reservation, source):
    """Return Nova's create body of a reservation's private flavor."""
    return {'id': reservation['id'], 'name': 'reservation-%s'
            % reservation['id'], 'vcpus': reservation['vcpus'],
            'ram': reservation['memory_mb'],
            'disk': source.get('disk', reservation['disk_gb']),
            'OS-FLV-EXT-DATA:ephemeral': source.get('ephemeral', 0),
            'swap': source.get('swap', 0)}


def _projects(lease):
    """Return the lease's projects, its owner's first."""
    return list(dict.fromkeys([lease['project_id'], *lease['projects']]))


def _size(request):
    return tuple(request[key] for key in SIZE_KEYS)


def _count(values, key, minimum):
    """Read a number of the request; python-blazarclient sends "" for none."""
    value = values.get(key)
    if value is None or value == '':
        raise validation.missing(key)
    return validation.parse_integer(value, key, minimum)


def _affinity(value):
    """Return True, False or None, also from the text the Blazar CLI sends."""
    if value is None or isinstance(value, bool):
        return value
    try:
        return _AFFINITY[value.strip().lower()]
    except KeyError:
        raise exceptions.InvalidInput(
            'affinity', 'must be true, false or null') from None


def _no_flavor(flavor_id):
    return exceptions.InvalidInput('flavor_id', 'no flavor %s' % flavor_id)
