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

"""The Cinder API extension: volume reservation in cinder-api.

cinder.conf loads it beside Cinder's own extensions::

    osapi_volume_extension = cinder.api.contrib.standard_extensions
    osapi_volume_extension = cinder_ext.extension.Reservation

A volume create with the hints ``reserved`` and ``lease_params`` (see
:mod:`reservation_ext.leases.hints`) makes a lease with one
``virtual:volume`` reservation and a volume in status ``reserved``,
instead of Cinder's create; bad hints are a 400, an unfit window a
409, and a window in which the project would go over its Cinder quotas
Cinder's own 413 (:mod:`.volume_quotas`), with nothing created. Every
volume view with ``metadata`` (``openstack volume show``'s
``properties``) of a leased volume shows its lease there, and only
there: ``reservation:lease_id`` and ``reservation:end``, for who may
show the lease (see :mod:`reservation_ext.leases.metadata`); no key is
added outside Cinder's documented response schemas, which strict
clients (tempest) check with ``additionalProperties: false``. A create,
update or metadata call that would set or delete either key is a 400
naming it. Deleting a leased volume deletes its lease.
Cinder's own actions on a reserved volume are 409 (after Cinder's 404
for a project that does not see it and Cinder's rule of the action: 403
for a reader); it can be shown, updated and deleted.
The engine drives the reservation through two actions,
``os-reservation-start`` and ``os-reservation-end``, for its service user
or an administrator (rules ``reservation:volumes:start`` and ``:end``).

Errors of reservation-ext become HTTP errors in :func:`_http_errors`,
the one place where they meet Cinder's API.
"""

import contextlib
import copy
import functools
import uuid

from cinder.api.contrib import scheduler_hints
from cinder.api import extensions
from cinder.api import microversions as mv
from cinder.api.openstack import wsgi
from cinder.api.schemas import volumes as schema
from cinder.api.v3.views import volumes as volume_views
from cinder.api import validation
from cinder import context as cinder_context
from cinder import exception as cinder_exc
from cinder import objects
from cinder import policies as cinder_policies
from cinder.policies import volumes as volume_policy
from cinder import utils
from cinder.volume import api as volume_api
from cinder.volume import volume_types
from oslo_config import cfg
from oslo_log import log as logging
from oslo_serialization import jsonutils
import webob

from cinder_ext import reserved_volumes
from cinder_ext import volume_quotas
from db import api as db_api
from reservation_ext.clients import plugin_clients
from reservation_ext import clock as clock_mod
from reservation_ext import conf as conf_mod
from reservation_ext import context as rctx_mod
from reservation_ext.enforcement import enforcer
from reservation_ext import exceptions
from reservation_ext.leases import hints as lease_hints
from reservation_ext.leases import metadata as lease_metadata
from reservation_ext.leases import notifications
from reservation_ext.leases import parsing as lease_requests
from reservation_ext.leases import service as lease_service
from reservation_ext import operation_rules
from reservation_ext.plugins import virtual_volume
from reservation_ext import policy

LOG = logging.getLogger(__name__)
HINTS_KEY = 'OS-SCH-HNT:scheduler_hints'
# Sources of a volume's data; a reserved volume starts empty.
_SOURCES = ('snapshot_id', 'source_volid', 'imageRef', 'image_id',
            'backup_id', 'consistencygroup_id', 'group_id')
_ACTION_RULES = operation_rules.OperationRules(cinder_policies.list_rules(),
                                               '/volumes/{volume_id}')


class InProcessCinder:
    """Make the virtual:volume plugin's Cinder calls inside cinder-api.

    Deleting a lease from here (a reserved volume's delete) runs the
    plugin's clean-up without a round trip through the API.
    """

    def start_volume(self, volume_id, lease_id):
        """Create the reserved volume of a starting lease on a backend."""
        reserved_volumes.start(cinder_context.get_admin_context(),
                               volume_id, lease_id)

    def end_volume(self, volume_id, lease_id, snapshot=False):
        """Delete the volume of an ending lease."""
        # Only a reserved or deleted volume's lease is deleted from
        # cinder-api: there is nothing to upload.
        reserved_volumes.end(cinder_context.get_admin_context(),
                             volume_id, lease_id, snapshot)


class ReservationController(wsgi.Controller):
    """Serve reserved volumes: create, views, delete, the engine's actions."""

    def __init__(self, clock=clock_mod.SYSTEM):
        super().__init__()
        self.clock = clock
        self.volume_api = volume_api.API()
        self._lease_service = None
        # Cinder's own actions, each refused on a reserved volume.
        self.wsgi_extensions = list(self.wsgi_extensions) + [
            ('_refuse_on_reserved', action)
            for action in _ACTION_RULES.actions()]

    @property
    def lease_service(self):
        """Return the lease service, made at first use from cinder.conf."""
        if self._lease_service is None:
            conf = conf_mod.CONF
            db_api.configure(conf)
            plugin = virtual_volume.VirtualVolumePlugin(
                conf, self.clock, plugin_clients.PluginClients(
                    conf, cinder=InProcessCinder()))
            self._lease_service = lease_service.LeaseService(
                conf, self.clock, {virtual_volume.RESOURCE_TYPE: plugin},
                notifications.get_notifier(conf),
                enforcer.from_conf(
                    conf, self.clock,
                    volume_quotas=volume_quotas.CinderQuotas()))
        return self._lease_service

    @wsgi.extends
    def create(self, req, body=None):
        """Answer a reserved create; leave any other to Cinder.

        Without a body Cinder would fail its own call with a message that
        names nothing: the 400 says what is missing.
        """
        if body is None:
            raise webob.exc.HTTPBadRequest(
                explanation='body: is required (a JSON object)')
        _check_metadata(body, 'volume')
        yield self._create_reserved(req, body)

    @wsgi.extends
    def update(self, req, id, body=None):
        """Keep our keys out of an update's metadata; show the lease."""
        _check_metadata(body, 'volume')
        resp_obj = yield None
        _show_leases(req, [resp_obj.obj['volume']])

    @wsgi.extends
    def show(self, req, resp_obj, id):
        """Show the volume's lease in Cinder's view of it."""
        _show_leases(req, [resp_obj.obj['volume']])

    @wsgi.extends
    def index(self, req, resp_obj):
        """Show the volumes' leases in Cinder's list."""
        _show_leases(req, resp_obj.obj['volumes'])

    @wsgi.extends
    def detail(self, req, resp_obj):
        """Show the volumes' leases in Cinder's detailed list."""
        _show_leases(req, resp_obj.obj['volumes'])

    @wsgi.extends
    def delete(self, req, id):
        """Delete a leased volume with its lease; others are Cinder's."""
        yield self._delete_leased(req, id)

    def _refuse_on_reserved(self, req, id, body):
        """Refuse Cinder's own actions on a reserved volume."""
        yield self._reserved_refusal(req, id, body)

    def _reserved_refusal(self, req, volume_id, body):
        """Refuse (409) a reserved volume's action; else None: Cinder acts.

        Cinder answers for a volume the caller does not see (404, as for
        one that does not exist), and Cinder's rule of the action refuses
        a reader (403) first. Cinder's own ``reserved`` status (of an
        attachment being made) would let some actions through on a
        volume that has no backend yet.
        """
        ctx = req.environ['cinder.context']
        volume, lease_id = self._seen_volume(ctx, volume_id)
        if (volume is None or lease_id is None or
                volume.status != reserved_volumes.RESERVED):
            return None
        action = next(iter(body)) if len(body) == 1 else None
        rule = _ACTION_RULES.rule('POST', '/action', action)
        if rule is not None:
            ctx.authorize(rule, target_obj=volume)
        raise webob.exc.HTTPConflict(explanation=(
            'Volume %s is reserved: it is created when lease %s starts; '
            'until then it can only be shown, updated or deleted.'
            % (volume_id, lease_id)))

    @wsgi.response(202)
    @wsgi.action('os-reservation-start')
    def _start(self, req, id, body):
        """Create the reserved volume of a starting lease (the engine)."""
        ctx = _engine_context(req, 'start')
        with _http_errors():
            reserved_volumes.start(ctx, id, _lease_id(body,
                                                      'os-reservation-start'))

    @wsgi.response(202)
    @wsgi.action('os-reservation-end')
    def _end(self, req, id, body):
        """Delete the volume of an ending lease (the engine).

        With ``"snapshot": true`` the volume is uploaded to an image
        first; the engine calls again until ``deleting`` is true.
        """
        ctx = _engine_context(req, 'end')
        args = body.get('os-reservation-end') or {}
        snapshot = args.get('snapshot', False)
        if not isinstance(snapshot, bool):
            raise webob.exc.HTTPBadRequest(
                explanation='snapshot: must be a boolean')
        with _http_errors():
            deleting = reserved_volumes.end(
                ctx, id, _lease_id(body, 'os-reservation-end'), snapshot)
        return {'deleting': deleting}

    @wsgi.response(202)
    @wsgi.action('os-reservation-size')
    def _size(self, req, id, body):
        """Give a reserved volume its updated lease's size (the lease API).

        The volume holds no quota and no storage before its start: only
        its record changes.
        """
        ctx = _engine_context(req, 'start')
        size = (body.get('os-reservation-size') or {}).get('size')
        if not isinstance(size, int) or isinstance(size, bool) or size < 1:
            raise webob.exc.HTTPBadRequest(
                explanation='size: must be an integer of at least 1')
        with _http_errors():
            reserved_volumes.resize(ctx, id, _lease_id(
                body, 'os-reservation-size'), size)

    def _create_reserved(self, req, body):
        """Create a reserved volume; return the 202, or None if not one."""
        ctx = req.environ['cinder.context']
        # Cinder's own check of the body before anything here reads it
        # (Cinder checks again the creates it serves itself).
        self._check_volume_body(req, body=body)
        hints = _hints(req, copy.deepcopy(body))
        volume_id = str(uuid.uuid4())
        rctx = rctx_mod.from_service_context(ctx)
        with _http_errors():
            lease = lease_hints.parse(
                hints, self.clock.now(),
                _lease_name(body.get('volume'), volume_id),
                lease_hints.default_duration(conf_mod.CONF),
                virtual_volume.ON_END, 'delete',
                proposal_window=functools.partial(
                    self.lease_service.proposal_window, rctx))
        if lease is None:
            return None
        # Cinder's rule of a create, which its create flow would ask.
        ctx.authorize(volume_policy.CREATE_POLICY)
        fields = _volume_fields(body['volume'])
        fields['availability_zone'] = _availability_zone(
            self.volume_api, fields['availability_zone'])
        volume_type = _volume_type(ctx, fields.get('volume_type'))
        with _http_errors():
            view = self.lease_service.create_parsed(
                rctx, lease_requests.with_reservation(
                    lease, self.lease_service.plugins,
                    virtual_volume.RESOURCE_TYPE, {
                        'size_gb': fields['size'], 'volume_id': volume_id,
                        'volume_type': volume_type.name,
                        'availability_zone': fields['availability_zone'],
                        'on_end': lease['on_end']}))
        try:
            volume = reserved_volumes.create_record(ctx, volume_id, fields,
                                                    volume_type)
        except Exception:
            with _http_errors():
                self.lease_service.delete(rctx, view['id'])
            raise
        return _volume_response(req, volume)

    # Cinder's own validation of a volume create, by microversion: the
    # decorators of cinder.api.v3.volumes.VolumeController.create.
    @validation.schema(schema.create, mv.BASE_VERSION,
                       mv.get_prior_version(mv.GROUP_VOLUME))
    @validation.schema(schema.create_volume_v313, mv.GROUP_VOLUME,
                       mv.get_prior_version(mv.VOLUME_CREATE_FROM_BACKUP))
    @validation.schema(schema.create_volume_v347,
                       mv.VOLUME_CREATE_FROM_BACKUP,
                       mv.get_prior_version(mv.SUPPORT_VOLUME_SCHEMA_CHANGES))
    @validation.schema(schema.create_volume_v353,
                       mv.SUPPORT_VOLUME_SCHEMA_CHANGES)
    def _check_volume_body(self, req, body):
        pass

    def _delete_leased(self, req, volume_id):
        """Delete a leased volume; return the 202, or None for others.

        A reserved volume goes with its lease (the plugin deletes the
        record); a started one is Cinder's to delete, and its lease is
        deleted once Cinder accepted.
        """
        ctx = req.environ['cinder.context']
        volume, lease_id = self._seen_volume(ctx, volume_id)
        if volume is None:
            return None
        if volume.status == reserved_volumes.RESERVED:
            ctx.authorize(volume_policy.DELETE_POLICY, target_obj=volume)
            if lease_id is None:
                reserved_volumes.destroy_record(volume)
                return webob.Response(status=202)
            with _http_errors():
                self.lease_service.delete(
                    rctx_mod.from_service_context(ctx), lease_id)
        elif lease_id is not None:
            _cinder_delete(req, self.volume_api, volume)
            self._delete_lease_of_deleted(ctx, lease_id, volume_id)
        else:
            return None
        return webob.Response(status=202)

    def _seen_volume(self, ctx, volume_id):
        """Return ``(volume, lease_id)`` as Cinder shows them to ``ctx``.

        ``(None, None)`` for a volume Cinder does not show the caller, so
        that Cinder answers (404, as for one that does not exist);
        ``lease_id`` is None for a volume without a lease.
        """
        try:
            volume = self.volume_api.get(ctx, volume_id)
        except cinder_exc.VolumeNotFound:
            return None, None
        return volume, reserved_volumes.lease_ids([volume_id]).get(volume_id)

    def _delete_lease_of_deleted(self, ctx, lease_id, volume_id):
        try:
            self.lease_service.delete(rctx_mod.from_service_context(ctx),
                                      lease_id)
        except exceptions.ReservationError as exc:
            # The volume is being deleted all the same; the lease ends at
            # its end date.
            LOG.warning('Lease %s of deleted volume %s stays: %s',
                        lease_id, volume_id, exc.message)


class LeaseMetadataController(wsgi.Controller):
    """Keep our keys out of ``/volumes/{id}/metadata`` changes."""

    @wsgi.extends
    def create(self, req, volume_id, body=None):
        """Refuse metadata to add that names our keys."""
        _check_metadata(body, None)
        yield None

    @wsgi.extends
    def update_all(self, req, volume_id, body=None):
        """Refuse metadata to set that names our keys."""
        _check_metadata(body, None)
        yield None

    @wsgi.extends
    def update(self, req, volume_id, id, body=None):
        """Refuse to set one of our keys."""
        _check_metadata_key(id)
        _check_metadata(body, None)
        yield None

    @wsgi.extends
    def delete(self, req, volume_id, id):
        """Refuse to delete one of our keys."""
        _check_metadata_key(id)
        yield None


class Reservation(extensions.ExtensionDescriptor):
    """Time-based reservation (leases) of volumes."""

    name = 'Reservation'
    alias = 'os-reservation'
    updated = '2026-11-23T00:00:00+00:00'

    def get_controller_extensions(self):
        """Return the extensions of the volume and metadata controllers."""
        return [extensions.ControllerExtension(
            self, 'volumes', ReservationController()),
            extensions.ControllerExtension(
                self, 'volume_metadata', LeaseMetadataController())]


_HTTP_ERRORS = {400: webob.exc.HTTPBadRequest, 403: webob.exc.HTTPForbidden,
                404: webob.exc.HTTPNotFound, 409: webob.exc.HTTPConflict,
                413: webob.exc.HTTPRequestEntityTooLarge,
                503: webob.exc.HTTPServiceUnavailable}


@contextlib.contextmanager
def _http_errors():
    """Turn reservation-ext's errors into Cinder's HTTP errors."""
    try:
        yield
    except exceptions.ReservationError as exc:
        LOG.info('Reservation request refused: %s', exc.message)
        code = exc.code
        if isinstance(exc, exceptions.VolumeQuotaExceeded):
            # Cinder's own answer to a create over quota (OverQuota), which
            # its clients expect; the lease API's is Blazar's 403.
            code = 413
        error = _HTTP_ERRORS.get(code, webob.exc.HTTPInternalServerError)
        raise error(explanation=exc.message) from exc


def _cinder_delete(req, api, volume):
    """Delete a started volume as Cinder's API does.

    As ``cinder.api.v3.volumes``: ``cascade``, and ``force`` from 3.23.
    """
    ctx = req.environ['cinder.context']
    cascade = utils.get_bool_param('cascade', req.params)
    force = (req.api_version_request.matches(mv.VOLUME_DELETE_FORCE) and
             utils.get_bool_param('force', req.params))
    if force:
        ctx.authorize(volume_policy.FORCE_DELETE_POLICY, target_obj=volume)
    api.delete(ctx, volume, cascade=cascade, force=force)


def _hints(req, body):
    """Return the scheduler hints of a create, checked by Cinder's schema.

    Cinder's helper moves them into ``body['volume']``: give it a copy.
    """
    if not isinstance(body.get('volume'), dict):
        return {}
    body = scheduler_hints.create(req, body)
    return body['volume'].get('scheduler_hints') or {}


def _lease_name(volume, volume_id):
    """Return the default lease name: the volume's name (if any) and id."""
    name = volume.get('name') if isinstance(volume, dict) else None
    return '%s-%s' % ((name or 'volume').strip()[:40] or 'volume',
                      volume_id)


def _volume_fields(volume):
    """Return the fields of a reserved volume; refuse what it cannot have."""
    for key in _SOURCES:
        if volume.get(key) is not None:
            raise webob.exc.HTTPBadRequest(
                explanation='%s: a reserved volume starts empty; it cannot '
                            'be created from a source' % key)
    if volume.get('size') is None:
        raise webob.exc.HTTPBadRequest(
            explanation='size: is required for a reserved volume')
    fields = {key: volume.get(key) for key in
              ('name', 'description', 'volume_type', 'metadata')}
    fields['size'] = int(volume['size'])
    fields['availability_zone'] = volume.get('availability_zone')
    return fields


def _availability_zone(api, requested):
    """Return the zone of a reserved volume, checked as Cinder's create.

    The volume is created at the lease's start; an unknown zone must be
    Cinder's 400 at the reservation (with the zone fallback Cinder
    configures), not a failure at start.
    """
    default = (cfg.CONF.default_availability_zone or
               cfg.CONF.storage_availability_zone)
    zone = requested or default
    # A zone added since Cinder's cache was filled is found on refresh.
    if zone in _zones(api, refresh=False) or zone in _zones(api,
                                                            refresh=True):
        return zone
    if cfg.CONF.allow_availability_zone_fallback:
        return default
    raise webob.exc.HTTPBadRequest(
        explanation="availability_zone: Availability zone '%s' is invalid."
                    % zone)


def _zones(api, refresh):
    """Return the availability zones Cinder creates volumes in."""
    zones = {zone['name'] for zone in api.list_availability_zones(
        enable_cache=True, refresh_cache=refresh)}
    if cfg.CONF.storage_availability_zone:
        zones.add(cfg.CONF.storage_availability_zone)
    return zones


def _volume_type(ctx, name_or_id):
    """Return the requested volume type, or the default one."""
    if not name_or_id:
        name_or_id = volume_types.get_default_volume_type(ctx)['id']
    return objects.VolumeType.get_by_name_or_id(ctx, name_or_id)


def _engine_context(req, action):
    """Return Cinder's admin context of an engine action, if allowed.

    Our rule, on Cinder's own context: the engine's service user (role
    service), or an administrator. The volume is another project's:
    Cinder's admin view of it starts and ends it.
    """
    ctx = req.environ['cinder.context']
    if not policy.allowed(ctx, action, ctx.project_id, policy.VOLUMES):
        raise webob.exc.HTTPForbidden(
            explanation='Policy does not allow %s to be performed.'
                        % (policy.VOLUMES % action))
    return ctx.elevated()


def _lease_id(body, action):
    lease_id = (body.get(action) or {}).get('lease_id')
    if not isinstance(lease_id, str):
        raise webob.exc.HTTPBadRequest(explanation='lease_id: is required')
    return lease_id


def _check_metadata(body, member):
    """Refuse (400) our keys in a body's ``metadata`` (of ``member``).

    A body Cinder cannot read is Cinder's to refuse.
    """
    if member is not None:
        body = body.get(member) if isinstance(body, dict) else None
    if isinstance(body, dict):
        field = 'metadata' if member is None else member + '.metadata'
        with _http_errors():
            lease_metadata.check_not_set(body.get('metadata'), field)
            if member is None:
                lease_metadata.check_not_set(body.get('meta'), 'meta')


def _check_metadata_key(key):
    with _http_errors():
        lease_metadata.check_not_set(key)


def _show_leases(req, volumes):
    """Show each volume's lease in its view, if the caller sees it.

    One read of the leases DB for the page.
    """
    leases = reserved_volumes.leases([volume['id'] for volume in volumes])
    viewer = lease_metadata.Viewer(req.environ['cinder.context'])
    for volume in volumes:
        lease = leases.get(volume['id'])
        lease = lease if viewer.sees(lease) else None
        if 'metadata' in volume:
            volume['metadata'] = lease_metadata.shown(volume['metadata'],
                                                      lease)


def _volume_response(req, volume):
    view = volume_views.ViewBuilder().detail(req, volume)
    _show_leases(req, [view['volume']])
    return webob.Response(status=202, body=jsonutils.dump_as_bytes(view),
                          content_type='application/json')
