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

"""The server reservation middleware of nova-api's compute API.

The project's api-paste.ini puts it after ``keystonecontext`` in both v2.1
pipelines, so it sees Nova's request context of every compute call:

``POST /servers`` with the hints ``reserved`` / ``lease_params`` (see
:mod:`reservation_ext.leases.hints`), or any boot with ``[reservation]
reserve_all_instances``
    The hints are checked first (400 naming the field; nothing created).
    Nova then creates the server as usual, except that its build is held
    back (:mod:`.held_builds`); then the lease is created with one
    ``virtual:instance`` reservation carrying the server's flavor, which
    books a host for a later start (409 when none fits), or for a start
    now the gap of a reservable host (``[reservation] fill_gaps``) when
    one fits. If the lease cannot be created, the server is deleted: the
    user gets the error and nothing remains. A server whose lease starts
    later waits (RESERVED); one that starts now is built at once, after
    its booking exists: in the shared pool, or on the booked host when
    Placement has room for it there now (:mod:`.host_room`). When it has
    not (preemptible servers use the gap), the server waits (RESERVED, no
    ``adminPass`` in the answer, no injected files) for its lease's start,
    due at once: the engine stops the preemptibles in the way, then
    builds it there. The build args are written with every lease
    (``build_args``); a build is cast by whoever takes them first, the
    middleware or the lease's start.
``POST /servers`` with the hint ``preemptible_runtime``
    400 naming it, before anything is created, when it is not a whole
    number of seconds up to a year, or the server would not be
    preemptible (read from its flavor). The flavor's extra spec
    ``reservation:preemptible_runtime`` is checked by Nova when it is
    set (:mod:`.extra_specs`).
``POST /servers`` with an instance-capacity reservation's flavor
    The boot takes seats of the reservation (:mod:`.capacity_boots`).
``GET /servers``, ``/servers/detail``, ``/servers/{id}``
    Leased servers (and those on the seats of an instance-capacity
    reservation) show their lease in their ``metadata`` only
    (``reservation:lease_id``, ``reservation:end``), for who may show
    the lease (see :mod:`reservation_ext.leases.metadata`), also in the
    server a rename or rebuild answers with; ``/servers/{id}/metadata``
    is what Nova stores, the user's keys. No key is added outside Nova's
    documented response schemas, which strict clients (tempest) check
    with ``additionalProperties: false``: not to a view, not to a
    create's answer. Servers waiting for their start show ``"status":
    "RESERVED"`` in the views that have a status (not ``GET /servers``).
    The leases DB is read once per page. A preemptible server on a host
    with a booking ahead shows ``reservation:reclaim_after`` there, to
    whoever sees the server: when the engine reclaims it at the latest
    (:mod:`.reclaim_views`, a few queries per page).
Metadata that names ``reservation:lease_id``, ``reservation:end`` or
``reservation:reclaim_after``
    400 naming the key, before Nova sees the request: a create's or
    rebuild's ``metadata``, and ``/servers/{id}/metadata[/{key}]``.
Any other change to a RESERVED server
    409, except its delete; first, as for any server, Nova's 404 for a
    project that does not see it and Nova's rule of the call (403 for a
    reader), see :mod:`.server_access`.
``DELETE /servers/{id}``
    Nova deletes the server, then its lease is deleted (or its seat of
    an instance-capacity reservation freed).
``POST /servers/{id}/action {"os-reservation-start": {"lease_id": ...}}``
    (the engine's service user or an administrator: rule
    ``reservation:servers:start``) builds a RESERVED server on its booked
    host.

Errors of reservation-ext become Nova-style fault bodies in
:func:`_fault`, the one place where they meet the compute API.
"""

import contextlib
import functools
import math
import re

from nova.compute import api as compute_api
from nova.compute import task_states
from nova import context as nova_context
from nova import exception as nova_exc
from nova import objects
from oslo_log import log as logging
import webob
import webob.dec

from db import api as db_api
from reservation_ext.clients import compute as compute_client
from reservation_ext.clients import plugin_clients
from reservation_ext import clock as clock_mod
from reservation_ext import conf as conf_mod
from reservation_ext import context as rctx_mod
from reservation_ext import dates
from reservation_ext.enforcement import enforcer
from reservation_ext import exceptions
from reservation_ext.leases import hints as lease_hints
from reservation_ext.leases import metadata as lease_metadata
from reservation_ext.leases import notifications
from reservation_ext.leases import parsing as lease_requests
from reservation_ext.leases import service as lease_service
from reservation_ext.nova_api import capacity_boots
from reservation_ext.nova_api import extra_specs
from reservation_ext.nova_api import held_builds
from reservation_ext.nova_api import nova_quotas
from reservation_ext.nova_api import reclaim_views
from reservation_ext.nova_api import server_access
from reservation_ext.nova_api import server_records
from reservation_ext.planning import preemptible_placement
from reservation_ext import plugins
from reservation_ext.plugins import virtual_instance
from reservation_ext import policy
from reservation_ext.states import LeaseStatus
from reservation_ext import validation

LOG = logging.getLogger(__name__)
METADATA = '/metadata'
RESERVED = 'RESERVED'
HINT_KEYS = ('os:scheduler_hints', 'OS-SCH-HNT:scheduler_hints')
# A server path below the optional project id: /servers[/{id}[/...]];
# /os-volumes_boot is Nova's other name of /servers.
SERVER_PATH = re.compile(
    r'^(?:/[^/]+)?/(?:servers|os-volumes_boot)'
    r'(?:/(?P<id>[^/]+)(?P<sub>/.*)?)?/?$')
LIST_IDS = ('detail',)
SERVER_KEYS = lease_metadata.SERVER_KEYS
_FAULTS = {400: 'badRequest', 403: 'forbidden', 404: 'itemNotFound',
           409: 'conflictingRequest', 503: 'serviceUnavailable'}


class InProcessNova:
    """Make the virtual:instance plugin's Nova calls inside nova-api.

    The middleware deletes the lease of a server that Nova deletes or
    could not be given a lease: deleting the server again here (not
    through the API, which would come back to the middleware) is enough.
    """

    def __init__(self):
        self.compute_api = compute_api.API()

    def delete_servers(self, server_ids):
        """Delete the servers that Nova is not deleting already."""
        ctx = nova_context.get_admin_context()
        for server_id in server_ids:
            try:
                instance = self.compute_api.get(ctx, server_id)
                if instance.task_state != task_states.DELETING:
                    self.compute_api.delete(ctx, instance)
            except nova_exc.InstanceNotFound:
                pass

    def end_server(self, server_id, on_end):
        """End a server's lease in nova-api: delete the server."""
        self.delete_servers([server_id])


class ServerReservations:
    """Filter nova-api's server calls for reservations (see the module)."""

    def __init__(self, application, conf=conf_mod.CONF,
                 clock=clock_mod.SYSTEM):
        self.application = application
        self.conf = conf
        self.clock = clock
        db_api.configure(conf)
        held_builds.install()
        extra_specs.install()
        nova_quotas.install()
        server_access.install()
        self.nova = InProcessNova()
        clients = plugin_clients.PluginClients(conf, nova=self.nova)
        self.lease_service = lease_service.LeaseService(
            conf, clock, plugins.load_plugins(conf, clock, clients),
            notifications.get_notifier(conf),
            enforcer.from_conf(conf, clock, nova_quotas.NovaQuotas()))
        self.capacity = capacity_boots.CapacityBoots(application, clock)

    @webob.dec.wsgify
    def __call__(self, req):
        """Answer a server call, or pass any other call on to Nova."""
        match = SERVER_PATH.match(req.path_info)
        if match is None:
            return self.application
        server_id, sub = match.group('id'), match.group('sub')
        try:
            if server_id is None and req.method == 'POST':
                return self._create(req)
            if req.method == 'GET' and sub is None:
                return self._view(req)
            if server_id is not None and server_id not in LIST_IDS:
                return self._change(req, server_id, sub)
        except exceptions.ReservationError as exc:
            return _fault(exc)
        return self.application

    # POST /servers

    def _create(self, req):
        body = _json(req)
        server = body.get('server') if isinstance(body, dict) else None
        if not isinstance(server, dict):
            return self.application
        lease_metadata.check_not_set(server.get('metadata'),
                                     'server.metadata', SERVER_KEYS)
        hints = _hints(body)
        _check_kept(hints)
        preemptible_placement.check_hint(hints)
        _check_runtime(req.environ['nova.context'], server, hints)
        response = self.capacity.boot(req, body, hints,
                                      _reservation_context(req))
        if response is not None:
            return response
        now = self.clock.now()
        lease = lease_hints.parse(
            hints, now, None, lease_hints.default_duration(self.conf),
            virtual_instance.ON_END, self.conf.reservation.instance_on_end,
            reserve_all=(self.conf.reservation.reserve_all_instances and
                         lease_hints.RESERVATION not in hints),
            proposal_window=functools.partial(
                self.lease_service.proposal_window,
                _reservation_context(req)))
        if lease is None:
            return self.application
        deferred = lease['starts_later']
        _check_reservable(server, hints, deferred)
        # Held back even when it starts now: the scheduler must see the
        # booking that the lease makes. A later start is checked against
        # Nova's quotas over its window only (Nova's check is of now).
        with held_builds.capture(deferred=True) as captured, (
                nova_quotas.checked_over_window() if deferred
                else contextlib.nullcontext()):
            response = req.get_response(self.application)
        if response.status_int != 202 or len(captured.builds) != 1:
            return response
        self._lease_server(req, lease, captured.builds[0], server, deferred)
        built = not deferred and _build_now(req, captured.builds[0])
        return response if built else _held(response)

    def _lease_server(self, req, lease, build, server, deferred):
        """Create the lease of a created server; delete it on failure."""
        rctx = _reservation_context(req)
        [spec] = build['request_spec']
        server_id = spec.instance_uuid
        if lease['name'] is None:
            lease['name'] = '%s-%s' % (str(server.get('name'))[:40],
                                       server_id)
        reservation = dict(_size(spec), server_id=server_id,
                           flavor_id=spec.flavor.flavorid,
                           shared_pool=not deferred, on_end=lease['on_end'])
        # Written with the lease, in its transaction: a RESERVED server
        # can be built as soon as it exists. One that starts now is built
        # by whoever takes them first (see _build_now).
        reservation[virtual_instance.BUILD_ARGS] = (
            virtual_instance.BuildArgs(held_builds.dump(build)))
        try:
            self.lease_service.create_parsed(
                rctx, lease_requests.with_reservation(
                    lease, self.lease_service.plugins,
                    virtual_instance.RESOURCE_TYPE, reservation))
        except Exception:
            self.nova.delete_servers([server_id])
            raise

    # GET /servers, /servers/detail, /servers/{id}

    def _view(self, req):
        """Return Nova's answer with the leases shown (a view or change)."""
        response = req.get_response(self.application)
        if response.status_int not in (200, 202) or (
                response.content_type != 'application/json'):
            return response
        body = response.json_body
        servers = body.get('servers') or [body.get('server') or {}]
        ctx, rctx = req.environ['nova.context'], _reservation_context(req)
        leased = server_records.shown_servers(
            rctx, [server['id'] for server in servers if 'id' in server])
        # GET /servers shows no metadata: nothing to read for it. A
        # server with a lease of its own is reserved, never preempted,
        # whatever its flavor says.
        reclaims = reclaim_views.reclaim_after(
            ctx, rctx, [server['id'] for server in servers
                        if 'id' in server and 'metadata' in server and
                        server['id'] not in leased],
            self.clock.now(), self.conf)
        viewer = lease_metadata.Viewer(ctx)
        changed = [_show_lease(server, leased.get(server.get('id')), viewer,
                               reclaims.get(server.get('id')))
                   for server in servers]
        if any(changed):
            response.json_body = body
        return response

    # Changes to /servers/{id}

    def _change(self, req, server_id, sub):
        if req.method == 'DELETE' and sub is None:
            return self._delete(req, server_id)
        action = _json(req) if sub == '/action' else None
        _check_metadata_change(req, sub, action)
        if isinstance(action, dict) and compute_client.START_ACTION in action:
            return self._start(req, server_id,
                               action[compute_client.START_ACTION])
        if isinstance(action, dict) and (
                compute_client.FLAVOR_ACTION in action):
            return self._set_flavor(req, server_id,
                                    action[compute_client.FLAVOR_ACTION])
        if req.method in ('GET', 'HEAD'):
            return self.application
        leased = server_records.leased_server(
            _reservation_context(req), server_id)
        if leased is None or not leased.reserved:
            # A rename's and a rebuild's answers are server views too.
            shows_server = ((req.method == 'PUT' and sub is None) or
                            _action_name(action) == 'rebuild')
            return self._view(req) if shows_server else self.application
        ctx = req.environ['nova.context']
        instance = server_access.visible_server(self.nova.compute_api, ctx,
                                                server_id)
        if instance is None:
            # Nova answers, as for any server it does not show the caller.
            return self.application
        server_access.authorize_change(ctx, instance, req.method, sub,
                                       _action_name(action))
        raise exceptions.Conflict(
            'Server %s is reserved: it is built when lease %s starts at '
            '%s; until then it can only be shown or deleted.' % (
                server_id, leased.lease_id,
                dates.format_date(leased.start_date)))

    def _delete(self, req, server_id):
        rctx = _reservation_context(req)
        leased = server_records.leased_server(rctx, server_id)
        response = req.get_response(self.application)
        if response.status_int == 204:
            self.capacity.free_seat(rctx, server_id)
        if (leased is None or response.status_int != 204 or
                leased.lease_status not in LeaseStatus.STABLE):
            return response
        try:
            self.lease_service.delete(rctx, leased.lease_id)
        except exceptions.ReservationError as exc:
            # The server is deleted all the same; the lease ends at its
            # end date.
            LOG.warning('Lease %s of deleted server %s stays: %s',
                        leased.lease_id, server_id, exc.message)
        return response

    def _start(self, req, server_id, args):
        ctx, rctx, leased = self._engine_action(req, server_id, args)
        if not leased.reserved:
            # Built, or being built (an engine's rerun after its wait):
            # its build was taken already.
            return webob.Response(status=202)
        node = leased.hypervisor_hostname
        try:
            with server_records.taking_build(rctx, server_id,
                                             node) as taken:
                if taken.build_args is not None:
                    held_builds.start(ctx, server_id, taken.build_args,
                                      leased.service_host, node,
                                      taken.started)
        except held_builds.NoRoomYet as exc:
            raise exceptions.Conflict(str(exc))
        return webob.Response(status=202)

    def _set_flavor(self, req, server_id, args):
        """Give a server that waits for its lease the lease's new flavor."""
        ctx, _rctx, leased = self._engine_action(req, server_id, args)
        if not leased.reserved:
            raise exceptions.Conflict('Server %s is built already.'
                                      % server_id)
        flavor_id = args.get('flavor_id')
        try:
            held_builds.set_flavor(ctx, server_id, flavor_id)
        except nova_exc.FlavorNotFound:
            raise exceptions.InvalidInput('flavor_id',
                                          'no flavor %s' % flavor_id)
        except nova_exc.TooManyInstances as exc:
            raise exceptions.Forbidden(str(exc))
        return webob.Response(status=202)

    @staticmethod
    def _engine_action(req, server_id, args):
        """Return Nova's elevated context, ours, and the lease's server.

        Nova's own context is checked with our rule: the reservation
        service user (role service), or an administrator. The server is
        another project's: Nova's admin view of it acts on it.
        """
        ctx = req.environ['nova.context']
        policy.authorize(ctx, 'start', ctx.project_id, policy.SERVERS)
        rctx = _reservation_context(req)
        leased = server_records.leased_server(rctx, server_id)
        lease_id = args.get('lease_id') if isinstance(args, dict) else None
        if leased is None or leased.lease_id != lease_id:
            raise exceptions.Conflict('Server %s is not reserved for lease '
                                      '%s.' % (server_id, lease_id))
        return ctx.elevated(), rctx, leased


def filter_factory(global_conf, **local_conf):
    """Return the middleware (paste filter factory; ``cfg.CONF``'s)."""
    return ServerReservations


def _json(req):
    """Return the JSON body, or None when not JSON (Nova answers that).

    :raises InvalidInput: a body that nobody can read (too deep, lone
        surrogates, not UTF-8), which would fail Nova's own parsing.
    """
    return validation.readable_json(req.body)


def _action_name(action):
    """Return the name of a server action's body, as Nova dispatches it."""
    if isinstance(action, dict) and len(action) == 1:
        return next(iter(action))
    return None


def _hints(body):
    for key in HINT_KEYS:
        if isinstance(body.get(key), dict):
            return body[key]
    return {}


# The hints this middleware reads.
OWN_HINTS = (lease_hints.RESERVED, lease_hints.LEASE_PARAMS,
             lease_hints.PROPOSAL, lease_hints.RESERVATION,
             preemptible_placement.HINT, preemptible_placement.RUNTIME_HINT)


def _check_kept(hints):
    """Refuse (400) a hint of ours that Nova could not keep, naming it.

    Nova keeps every hint as a list of strings: an object (``lease_params``
    as JSON rather than its text), a nested list or a null would fail
    Nova's request spec after the lease was made.
    """
    for key in OWN_HINTS:
        if key not in hints:
            continue
        value = hints[key]
        values = value if isinstance(value, list) else [value]
        if any(item is None or isinstance(item, (dict, list))
               for item in values):
            raise exceptions.InvalidInput(
                key, 'must be a string (lease_params: its JSON text)')


def _check_runtime(ctx, server, hints):
    """Refuse (400) a ``preemptible_runtime`` hint that means nothing.

    Not a runtime (:func:`preemptible_placement.check_runtime`), or on a
    server that is not preemptible: one with reservation hints, or
    neither the ``preemptible`` hint nor a preemptible flavor. Only a
    boot with the hint reads its flavor; a flavor that cannot be read is
    Nova's to refuse.
    """
    if preemptible_placement.runtime(None, hints) is None:
        return
    flavor_ref = server.get('flavorRef')
    if not isinstance(flavor_ref, str):
        return
    try:
        # Nova also takes a flavor's link: its id is the last segment.
        flavor = objects.Flavor.get_by_flavor_id(
            ctx, flavor_ref.rstrip('/').rsplit('/', 1)[-1])
    except nova_exc.FlavorNotFound:
        return
    reserved = any(key in hints for key in lease_hints.BOOKING_HINTS)
    if reserved or not preemptible_placement.is_preemptible(
            flavor.extra_specs, hints):
        raise exceptions.InvalidInput(
            preemptible_placement.RUNTIME_HINT,
            'only a preemptible server declares a runtime: give '
            'preemptible=true or a preemptible flavor, and no reservation '
            'hints')


def _check_reservable(server, hints, deferred):
    """Refuse (400) what a reserved boot cannot have, naming the field."""
    if 'reservation' in hints:
        raise exceptions.InvalidInput(
            'reservation', 'a server in a host lease cannot have a lease of '
            'its own; give reserved/lease_params or reservation, not both')
    if preemptible_placement.check_hint(hints):
        raise exceptions.InvalidInput(
            preemptible_placement.HINT,
            'a reserved server cannot be preemptible; give '
            'reserved/lease_params or preemptible, not both')
    for key in ('min_count', 'max_count'):
        if str(server.get(key, 1)) != '1':
            raise exceptions.InvalidInput(
                key, 'a reserved boot makes one server; boot one at a time')
    if deferred and server.get('personality'):
        raise exceptions.InvalidInput(
            'personality', 'files are not kept until the lease starts; '
            'pass them in user_data')


def _size(spec):
    """Return the slice of a host the server's flavor takes (Placement's).

    A volume-backed server's root disk is not on the host.
    """
    flavor = spec.flavor
    root = 0 if spec.obj_attr_is_set('is_bfv') and spec.is_bfv \
        else flavor.root_gb
    return {'vcpus': flavor.vcpus, 'memory_mb': flavor.memory_mb,
            'disk_gb': root + flavor.ephemeral_gb +
            math.ceil(flavor.swap / 1024)}


def _build_now(req, build):
    """Cast the build of a lease that starts now, if it can start at once.

    In the shared pool it can; on a booked host only if Placement has
    room there now. Otherwise preemptible servers hold the room: the
    build stays held back (RESERVED) and the lease's start, due now,
    stops them (the engine reclaims before the plugins start) and then
    builds the server on its host. Whoever takes the build args builds:
    the engine may have taken them already.

    :returns: whether the build was cast here (with what Nova captured:
        the admin password and files included).
    """
    [spec] = build['request_spec']
    ctx, rctx = req.environ['nova.context'], _reservation_context(req)
    leased = server_records.leased_server(rctx, spec.instance_uuid)
    node = leased.hypervisor_hostname
    try:
        with server_records.taking_build(rctx, spec.instance_uuid,
                                         node) as taken:
            if taken.build_args is None:
                return False
            # Without room, kept for the lease's start (an exception
            # gives the build args back).
            held_builds.cast(ctx, build, leased.service_host, node,
                             taken.started)
    except held_builds.NoRoomYet:
        LOG.info('Server %s waits for its lease %s to free %s',
                 spec.instance_uuid, leased.lease_id, node)
        return False
    return True


def _held(response):
    """Nova's create answer of a server built later: no password is set."""
    body = response.json_body
    body['server'].pop('adminPass', None)
    response.json_body = body
    return response


def _check_metadata_change(req, sub, action):
    """Refuse (400) a change of a server's metadata naming our keys.

    The body is Nova's to check otherwise (and a server the caller does
    not see is refused whatever its id, so nothing is learnt).
    """
    if isinstance(action, dict) and isinstance(action.get('rebuild'), dict):
        lease_metadata.check_not_set(action['rebuild'].get('metadata'),
                                     'rebuild.metadata', SERVER_KEYS)
    if sub is None or not (sub == METADATA or
                           sub.startswith(METADATA + '/')):
        return
    key = sub[len(METADATA) + 1:]
    if key and req.method in ('PUT', 'DELETE'):
        lease_metadata.check_not_set(key, ours=SERVER_KEYS)
    if req.method in ('PUT', 'POST'):
        body = _json(req)
        if isinstance(body, dict):
            for field in ('metadata', 'meta'):
                lease_metadata.check_not_set(body.get(field), field,
                                             SERVER_KEYS)


def _show_lease(server, leased, viewer, reclaim_after=None):
    """Show a server's lease in its view; return whether it changed.

    ``reclaim_after``: when the server, a preemptible one, is reclaimed
    at the latest (or None).
    """
    lease = None if leased is None else server_records.lease_of(leased)
    lease = lease if viewer.sees(lease) else None
    # GET /servers shows no status (nor may it: Nova's schema).
    reserved = (leased is not None and leased.reserved and
                'status' in server)
    changed = reserved
    if 'metadata' in server:
        metadata = lease_metadata.shown(server['metadata'], lease,
                                        reclaim_after, SERVER_KEYS)
        changed = changed or metadata != server['metadata']
        server['metadata'] = metadata
    if reserved:
        server['status'] = RESERVED
        # Nova shows a build request as being scheduled; it is not yet.
        if 'OS-EXT-STS:task_state' in server:
            server['OS-EXT-STS:task_state'] = None
    return changed


def _reservation_context(req):
    return rctx_mod.from_service_context(req.environ['nova.context'])


def _fault(exc):
    """Return Nova's fault response, with its body, for our error."""
    LOG.info('Server reservation request refused: %s', exc.message)
    name = _FAULTS.get(exc.code, 'computeFault')
    return webob.Response(
        status=exc.code, content_type='application/json',
        json_body={name: {'code': exc.code, 'message': exc.message}})
