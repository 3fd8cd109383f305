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

"""Reserved volumes inside cinder-api: the record, its start and its end.

A reserved volume is a row of Cinder's ``volumes`` table in status
``reserved``, written directly through Cinder's objects: Cinder's create
flow would reserve quota, schedule it and let the volume manager set it
``available``. It holds no backend storage and no quota until its lease
starts (its ``use_quota`` is false until then, so that Cinder's recount
of a project's usage from its volumes table leaves it out). Then
:func:`start` sends the record through the second half of
Cinder's create flow, the scheduler's ``create_volume`` cast, which the
volume manager finishes (``creating`` -> ``available``), after
committing the project's volume quota. :func:`end` deletes it: a
reserved record directly (Cinder's delete refuses the status), a
started volume through Cinder's ordinary delete. With ``snapshot`` it
first uploads the volume to an image owned by the volume's project
(Cinder's ``os-volume_upload_image``): a Cinder snapshot cannot outlive
its volume, an image can.

Which lease a volume belongs to is the leases DB's knowledge
(``volume_reservations.volume_id``), read with one statement for any
number of volumes (:func:`leases`).
"""

from cinder.db import api as db
from cinder import exception as cinder_exc
from cinder.image import glance
from cinder import objects
from cinder import quota
from cinder.scheduler import rpcapi as scheduler_rpcapi
from cinder.volume import api as volume_api
import sqlalchemy as sa

from db import api as db_api
from db import tables
from reservation_ext import context as rctx_mod
from reservation_ext import exceptions
from reservation_ext.leases import metadata as lease_metadata

RESERVED = 'reserved'
# The volume's admin metadata (hidden from its users) names the image
# its end uploads to.
END_IMAGE_KEY = 'reservation_end_image_id'
VOLUME_RESERVATIONS = tables.VOLUME_RESERVATIONS
RESERVATIONS = tables.RESERVATIONS
LEASES = tables.LEASES
QUOTAS = quota.QUOTAS


def leases(volume_ids):
    """Return ``{volume_id: metadata.Lease}`` of the volumes with a lease."""
    if not volume_ids:
        return {}
    with db_api.context_manager.reader.using(
            rctx_mod.get_admin_context()) as session:
        rows = session.execute(
            sa.select(VOLUME_RESERVATIONS.c.volume_id, LEASES.c.id,
                      LEASES.c.project_id, LEASES.c.end_date)
            .join(RESERVATIONS,
                  RESERVATIONS.c.id == VOLUME_RESERVATIONS.c.reservation_id)
            .join(LEASES, LEASES.c.id == RESERVATIONS.c.lease_id)
            .where(VOLUME_RESERVATIONS.c.volume_id.in_(list(volume_ids))))
        return {row.volume_id: lease_metadata.Lease(*row[1:])
                for row in rows}


def lease_ids(volume_ids):
    """Return ``{volume_id: lease_id}`` of the volumes that have a lease."""
    return {volume_id: lease.id
            for volume_id, lease in leases(volume_ids).items()}


def create_record(ctx, volume_id, fields, volume_type):
    """Write the ``reserved`` record of a volume; return the object.

    Through Cinder's DB API: the volume object's create() will not take
    the id, which the lease has named already.
    """
    db.volume_create(ctx, {
        'id': volume_id, 'size': fields['size'], 'user_id': ctx.user_id,
        'project_id': ctx.project_id, 'status': RESERVED,
        'attach_status': 'detached', 'display_name': fields.get('name'),
        'display_description': fields.get('description'),
        'availability_zone': fields['availability_zone'],
        'volume_type_id': volume_type.id,
        # Cinder counts a project's usage anew from its volumes table
        # (when its usage row is missing or refreshed): only volumes that
        # use quota count, which a reserved one does not until its start.
        'use_quota': False,
        'metadata': fields.get('metadata') or {}})
    return objects.Volume.get_by_id(ctx, volume_id)


def start(ctx, volume_id, lease_id):
    """Create the reserved volume of ``lease_id`` on a backend.

    A volume that left ``reserved`` already (another engine started it)
    is left alone.

    :raises InvalidState: the volume is not the lease's.
    :raises NotFound: there is no such volume.
    """
    volume = _lease_volume(ctx, volume_id, lease_id)
    if volume.status != RESERVED:
        return
    # Reserved before the record uses quota, as Cinder's create reserves
    # before its record exists: a recount now does not count it twice.
    reservations = _reserve_quota(ctx, volume)
    if not volume.conditional_update({'status': 'creating',
                                      'use_quota': True},
                                     {'status': RESERVED}):
        # Another engine started it meanwhile.
        QUOTAS.rollback(ctx, reservations, project_id=volume.project_id)
        return
    QUOTAS.commit(ctx, reservations, project_id=volume.project_id)
    scheduler_rpcapi.SchedulerAPI().create_volume(
        ctx, volume, request_spec=_request_spec(volume),
        filter_properties={})


def resize(ctx, volume_id, lease_id, size):
    """Set the size of the reserved volume of ``lease_id``.

    :raises InvalidState: the volume is not the lease's, or it is not
        reserved any more (it was created on a backend).
    """
    volume = _lease_volume(ctx, volume_id, lease_id)
    if volume.size == size:
        return
    if not volume.conditional_update({'size': size}, {'status': RESERVED}):
        raise exceptions.InvalidState(
            'Volume %s is created already: extend it with Cinder.'
            % volume_id)


def end(ctx, volume_id, lease_id, snapshot=False):
    """Delete the volume of ``lease_id``; a volume that is gone is fine.

    With ``snapshot``, a started volume (not one in error) is uploaded
    to an image first: the first call starts the upload, and the volume
    is deleted by a call made once the image is active. Call again while
    this is False.

    :returns: True once the volume is deleted or being deleted.
    :raises Conflict: the volume cannot be uploaded, or its upload failed
        (the next call starts another).
    """
    try:
        volume = _lease_volume(ctx, volume_id, lease_id)
    except exceptions.NotFound:
        return True
    if volume.status == RESERVED:
        volume.destroy()
        return True
    if volume.status == 'deleting':
        return True
    # A volume in error holds nothing to upload (its creation failed at
    # the start): it is deleted, or its lease could never end.
    uploading = snapshot and volume.status != 'error'
    if uploading and not _uploaded(ctx, volume):
        return False
    volume_api.API().delete(ctx, volume)
    return True


def _uploaded(ctx, volume):
    """Return whether ``volume`` has its end image; start its upload if not."""
    image_id = volume.admin_metadata.get(END_IMAGE_KEY)
    if volume.status == 'uploading':
        return False
    if volume.status != 'available':
        raise exceptions.Conflict(
            'Volume %s is %s: only an available volume can be uploaded to '
            'an image at the end of its lease; detach it.'
            % (volume.id, volume.status))
    if image_id is None:
        _upload(ctx, volume)
        return False
    status = _image_status(ctx, image_id)
    if status == 'active':
        return True
    db.volume_admin_metadata_delete(ctx, volume.id, END_IMAGE_KEY)
    raise exceptions.Conflict(
        'The upload of volume %s to image %s failed (image %s).'
        % (volume.id, image_id, status))


def _upload(ctx, volume):
    metadata = {'name': '%s-snapshot' % (volume.display_name or volume.id),
                'container_format': 'bare', 'disk_format': 'raw',
                'visibility': 'private', 'owner': volume.project_id}
    try:
        image = volume_api.API().copy_volume_to_image(ctx, volume, metadata,
                                                      force=False)
    except cinder_exc.InvalidVolume:
        # Another engine's call started the upload.
        return
    db.volume_admin_metadata_update(
        ctx, volume.id, {END_IMAGE_KEY: image['image_id']}, False)


def _image_status(ctx, image_id):
    try:
        return glance.get_default_image_service().show(ctx, image_id)[
            'status']
    except cinder_exc.ImageNotFound:
        return 'deleted'


def destroy_record(volume):
    """Delete a reserved record (its lease is gone or going)."""
    if volume.status == RESERVED:
        volume.destroy()


def _lease_volume(ctx, volume_id, lease_id):
    if lease_ids([volume_id]).get(volume_id) != lease_id:
        raise exceptions.InvalidState(
            'Volume %s is not reserved for lease %s.' % (volume_id, lease_id))
    try:
        return objects.Volume.get_by_id(ctx, volume_id)
    except cinder_exc.VolumeNotFound:
        raise exceptions.NotFound(kind='Volume', id=volume_id)


def _reserve_quota(ctx, volume):
    """Reserve the volume's quota as Cinder's create does.

    :returns: Cinder's quota reservations.
    """
    deltas = {'volumes': 1, 'gigabytes': volume.size}
    QUOTAS.add_volume_type_opts(ctx, deltas, volume.volume_type_id)
    try:
        return QUOTAS.reserve(ctx, project_id=volume.project_id, **deltas)
    except cinder_exc.OverQuota as exc:
        raise exceptions.Conflict(
            'The project of volume %s is over its volume quota: %s'
            % (volume.id, exc))


def _request_spec(volume):
    """Return what Cinder's create flow hands the scheduler for ``volume``."""
    properties = objects.VolumeProperties(
        size=volume.size, availability_zone=volume.availability_zone,
        project_id=volume.project_id, user_id=volume.user_id,
        status='creating', attach_status='detached',
        display_name=volume.display_name,
        display_description=volume.display_description,
        volume_type_id=volume.volume_type_id, metadata=volume.metadata,
        multiattach=False)
    return objects.RequestSpec(
        volume=volume, volume_id=volume.id, volume_type=volume.volume_type,
        volume_properties=properties, snapshot_id=None, image_id=None,
        source_volid=None, consistencygroup_id=None, cgsnapshot_id=None,
        group_id=None, backup_id=None,
        availability_zones=[volume.availability_zone])
