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

"""Builds that wait for their lease: a RESERVED server is a BuildRequest.

Nova creates a server in two steps: nova-api writes the BuildRequest,
RequestSpec and InstanceMapping, then casts ``schedule_and_build_instances``
to the conductor, which schedules, claims in Placement and builds. Nova has
no way to stop after the first step, so :func:`install` wraps the
conductor API's method: inside :func:`capture`, the cast's arguments are
recorded and, for a deferred build, the cast is not made. The server is
then what Nova shows while it boots (a BuildRequest: no host, no cell, no
Placement allocation) until :func:`start` makes the cast, pinned to the
booked host. Outside :func:`capture` the wrapper only calls Nova's method.
A capture may also be given a ``before_cast`` callable: it gets the
request specs of the builds just before they are cast (or held), to
record what the scheduler must see.

A server whose lease starts now is held back too, only while its lease is
created in the same request: :func:`cast` then makes the cast Nova asked
for, as it was captured (password and files included), pinned to the
booked host if there is one, so that the scheduler sees the booking.

What the cast needs and Nova does not keep (the image, the requested
networks and resources, the block device mappings and tags as the cast
has them, request-level scheduling parameters) is serialized by
:func:`dump` into the leases DB. The admin password and injected files are
not kept: a server built later gets neither.
"""

import contextlib
import contextvars
import dataclasses

from nova.compute import api as compute_api
from nova.conductor import api as conductor_api
from nova import objects
from oslo_serialization import jsonutils

from reservation_ext.clients import compute as compute_client
from reservation_ext.nova_api import host_room
from reservation_ext.nova_api import wrapping

# What the cast and the RequestSpec carry that Nova does not keep.
# (Class names: Nova registers its objects at start-up.)
_CAST_OBJECTS = {'requested_networks': 'NetworkRequestList',
                 'block_device_mapping': 'BlockDeviceMappingList',
                 'tags': 'TagList'}
_SPEC_OBJECTS = {'network_metadata': 'NetworkMetadata',
                 'request_level_params': 'RequestLevelParams'}
_CAPTURE = contextvars.ContextVar('reservation_build_capture', default=None)


@dataclasses.dataclass
class Capture:
    """Collect the builds a create asked for; held back when ``deferred``."""

    deferred: bool
    builds: list = dataclasses.field(default_factory=list)
    before_cast: object = None


@contextlib.contextmanager
def capture(deferred, before_cast=None):
    """Record (and, if ``deferred``, hold back) the builds of a create.

    :param before_cast: called with the builds' request specs before the
        cast.
    """
    token = _CAPTURE.set(Capture(deferred, before_cast=before_cast))
    try:
        yield _CAPTURE.get()
    finally:
        _CAPTURE.reset(token)


def install():
    """Wrap Nova's ``ComputeTaskAPI.schedule_and_build_instances`` once."""
    wrapping.wrap_once(conductor_api.ComputeTaskAPI,
                       'schedule_and_build_instances', _capturing)


def _capturing(original):
    def schedule_and_build_instances(self, context, build_requests,
                                     request_spec, image, *args, **kwargs):
        current = _CAPTURE.get()
        if current is not None:
            current.builds.append(dict(kwargs, build_requests=build_requests,
                                       request_spec=request_spec))
            current.builds[-1]['image'] = image
            if current.before_cast is not None:
                current.before_cast(request_spec)
            if current.deferred:
                return None
        return original(self, context, build_requests, request_spec, image,
                        *args, **kwargs)
    return schedule_and_build_instances


def dump(captured):
    """Return the JSON text that :func:`start` needs of a captured build."""
    [spec] = captured['request_spec']
    args = {'image': captured['image']}
    for name in _CAST_OBJECTS:
        args[name] = _primitive(captured.get(name))
    for name in _SPEC_OBJECTS:
        args[name] = _primitive(spec.obj_attr_is_set(name) and
                                getattr(spec, name))
    args['requested_resources'] = [
        group.obj_to_primitive() for group in spec.requested_resources or ()]
    return jsonutils.dumps(args)


def start(ctx, server_id, build_args, host, node, started=()):
    """Cast the held-back build of ``server_id`` to the conductor.

    :param build_args: what :func:`dump` returned.
    :param host: the compute service host it must land on; ``node`` its
        hypervisor hostname.
    :param started: the servers whose builds were cast to ``node`` before
        (:func:`host_room.fits_now`).
    :raises BuildRequestNotFound: the server is not waiting any more.
    :raises NoRoomYet: Placement has no room for it on ``node`` yet (a
        lease that ends there has not freed its slice): nothing is cast,
        the start may be tried again.
    """
    args = jsonutils.loads(build_args)
    build_request = objects.BuildRequest.get_by_instance_uuid(ctx, server_id)
    spec = objects.RequestSpec.get_by_instance_uuid(ctx, server_id)
    spec.requested_destination = objects.Destination(host=host, node=node)
    for name, cls in _SPEC_OBJECTS.items():
        if args[name]:
            setattr(spec, name, _object(cls, args[name]))
    spec.requested_resources = [_object('RequestGroup', group)
                                for group in args['requested_resources']]
    if node is not None and not host_room.fits_now(ctx, spec, node,
                                                   started):
        raise NoRoomYet(server_id, node)
    cast = {name: _object(cls, args[name]) if args[name] else None
            for name, cls in _CAST_OBJECTS.items()}
    if cast['requested_networks'] is not None:
        spec.requested_networks = cast['requested_networks']
    conductor_api.ComputeTaskAPI().schedule_and_build_instances(
        ctx, build_requests=[build_request], request_spec=[spec],
        image=args['image'], admin_password=None, injected_files=[], **cast)


class NoRoomYet(Exception):
    """A held-back build's booked host has no room for it yet."""

    def __init__(self, server_id, node):
        super().__init__('Server %s %s %s: the leases that end there have '
                         'not freed it yet.'
                         % (server_id, compute_client.NO_ROOM_YET, node))


def cast(ctx, captured, host=None, node=None, started=()):
    """Make a captured cast now, on ``host`` / ``node`` when given.

    :param captured: one of :attr:`Capture.builds`, made outside
        :func:`capture` (the wrapper passes it to Nova).
    :param started: as for :func:`start`.
    :raises NoRoomYet: as :func:`start`.
    """
    [spec] = captured['request_spec']
    if node is not None and not host_room.fits_now(ctx, spec, node,
                                                   started):
        raise NoRoomYet(spec.instance_uuid, node)
    if host is not None:
        spec.requested_destination = objects.Destination(host=host,
                                                         node=node)
    conductor_api.ComputeTaskAPI().schedule_and_build_instances(
        ctx, **captured)


def set_flavor(ctx, server_id, flavor_id):
    """Give a held-back build the flavor ``flavor_id``.

    Its BuildRequest (what Nova shows of the server) and RequestSpec
    (what it is scheduled and built with) change; Nova's quota is checked
    as for a resize. Setting the flavor it has again changes nothing.

    :raises FlavorNotFound, TooManyInstances: Nova's.
    """
    flavor = objects.Flavor.get_by_flavor_id(ctx, flavor_id)
    build_request = objects.BuildRequest.get_by_instance_uuid(ctx, server_id)
    instance = build_request.instance
    if instance.flavor.flavorid == flavor.flavorid:
        return
    compute_api.API._check_quota_for_upsize(
        ctx, instance, instance.flavor, flavor, is_bfv=False,
        is_revert=False)
    instance.flavor = flavor
    instance.instance_type_id = flavor.id
    for field, size in (('vcpus', 'vcpus'), ('memory_mb', 'memory_mb'),
                        ('root_gb', 'root_gb'),
                        ('ephemeral_gb', 'ephemeral_gb')):
        setattr(instance, field, getattr(flavor, size))
    build_request.save()
    spec = objects.RequestSpec.get_by_instance_uuid(ctx, server_id)
    spec.flavor = flavor
    spec.save()


def _primitive(obj):
    return obj.obj_to_primitive() if obj else None


def _object(cls_name, primitive):
    return getattr(objects, cls_name).obj_from_primitive(primitive)
