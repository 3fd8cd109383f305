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

"""The calls reservation-ext makes to Cinder's block storage API.

The service user of ``[reservation_client]`` makes them, found through the
catalog (``volumev3``), as for Nova
(:mod:`reservation_ext.clients.compute`). They are the two volume actions
of the Cinder extension (:mod:`cinder_ext`):
``os-reservation-start`` creates a ``reserved`` volume on a backend,
``os-reservation-end`` deletes it (a reserved one: its DB record), after
uploading it to an image with ``snapshot``; ``os-reservation-size``
changes a reserved volume's size when its lease is updated. All
name the lease, which the extension checks against the volume, so that a
reservation can only act on the volume reserved for its own lease. Both
are idempotent: starting a volume that is being created or is available,
or ending one that is gone, succeeds. :meth:`CinderClient.quota_set` and
:meth:`CinderClient.find_volume` read what the check of Cinder's quotas
over a lease's window needs in nova-api
(:mod:`.block_storage_quotas`). :meth:`CinderClient.storage_pools` reads
the pools the volume services report, for the storage pool inventory.

They are sent as they are through keystoneauth1's adapter
(:func:`.service_user.call`) and waited for with
:func:`.polling.wait_for`, not through openstacksdk's block storage
proxy: the actions are the extension's own, which openstacksdk does not
know; a start fails on any status but ``reserved``, ``creating`` and
``available`` (openstacksdk's ``wait_for_status`` fails on the statuses
it is given only); an end repeats its action until Cinder deletes the
volume. That leaves the last wait, for the volume to go, to
openstacksdk's ``wait_for_delete``, and its proxy needs Cinder's version
document when it is made: keystoneauth1 asks ``/v3`` for it without a
token, which Cinder's harness (noauth, ``admin_token`` plugin) refuses,
and a token endpoint plugin does not fall back to the catalog's URL, so
that proxy fails where the adapter's requests work. The pools are read
through openstacksdk's block storage proxy all the same, made without
the version document (:func:`.service_user.catalog_proxy`).
"""

import functools

from reservation_ext.clients import deferral
from reservation_ext.clients import polling
from reservation_ext.clients import service_user
from reservation_ext import exceptions

SERVICE = 'Cinder'
START_ACTION = 'os-reservation-start'
END_ACTION = 'os-reservation-end'
SIZE_ACTION = 'os-reservation-size'
# Statuses a volume goes through until its backend volume exists.
STARTING = ('reserved', 'creating')
# A volume's status while Cinder uploads it to an image.
UPLOADING = ('uploading',)
# Cinder's action that uploads a volume to an image.
UPLOAD_ACTION = 'os-volume_upload_image'


class CinderClient:
    """Block storage API calls of the reservation service user.

    :param transport: the ``requests.Session`` that sends the requests
        (see :func:`.service_user.adapter`).
    """

    def __init__(self, conf, transport=None):
        self._adapter = service_user.adapter(conf, 'volumev3', transport)

    def start_volume(self, volume_id, lease_id, timeout=300, interval=1):
        """Create the reserved volume on a backend; wait until available.

        :raises PluginError: Cinder refused, the volume went to error, or
            it was not available within ``timeout`` seconds.
        """
        self._action(volume_id, START_ACTION, {'lease_id': lease_id})

        def available(status):
            if status not in STARTING + ('available',):
                raise exceptions.PluginError(
                    'Volume %s went to status %s instead of available.'
                    % (volume_id, status))
            return status == 'available'

        polling.wait_for(lambda: self._volume(volume_id)['status'],
                         available, timeout, interval,
                         self._late(volume_id, 'available'),
                         deferral.Wait(deferral.VOLUME, volume_id,
                                       pending=STARTING))

    def set_reserved_size(self, volume_id, lease_id, size):
        """Give a volume that waits for ``lease_id`` another size (GB)."""
        self._action(volume_id, SIZE_ACTION, {'lease_id': lease_id,
                                              'size': size})

    def end_volume(self, volume_id, lease_id, snapshot=False, timeout=900,
                   interval=1):
        """Delete the volume; wait until it is gone (or it is already).

        With ``snapshot``, Cinder uploads it to an image first: the end
        action is repeated until Cinder deletes it. The upload and the
        delete may each take ``timeout`` seconds.
        """
        body = {'lease_id': lease_id, 'snapshot': snapshot}
        polling.wait_for(
            lambda: self._action(volume_id, END_ACTION, body, ok=(404,)),
            lambda answer: not answer or answer['deleting'], timeout,
            interval, self._late(volume_id, 'uploaded'),
            deferral.Wait(deferral.VOLUME, volume_id, pending=UPLOADING))
        self._wait_gone(volume_id, timeout, interval)

    def upload_volume(self, auth, volume_id, name):
        """Start uploading a volume to a new image; return the image's id.

        Sent with ``auth``, a user of the volume's project, whose project
        owns the image. An attached volume is uploaded as it is, which
        cinder.conf's ``enable_force_upload`` must allow.
        """
        return self._call('POST', '/volumes/%s/action' % volume_id,
                          once=True, auth=auth, json={UPLOAD_ACTION: {
                              'image_name': name, 'force': True,
                              'disk_format': 'raw',
                              'container_format': 'bare'}})[
            UPLOAD_ACTION]['image_id']

    def wait_uploaded(self, volume_id, timeout=900, interval=1):
        """Wait until Cinder is done uploading a volume to an image."""
        polling.wait_for(
            lambda: self.volume_status(volume_id),
            lambda status: status not in UPLOADING, timeout, interval,
            self._late(volume_id, 'uploaded'),
            deferral.Wait(deferral.VOLUME, volume_id, pending=UPLOADING))

    def delete_pool_volumes(self, pools, project_ids, timeout=900,
                            interval=1):
        """Delete the projects' volumes on ``pools``; wait until gone.

        ``pools`` are names (``host@backend#pool``) as a volume's
        ``os-vol-host-attr:host`` shows them; snapshots of the volumes go
        with them (Cinder's ``cascade``). Each delete may take
        ``timeout`` seconds.
        """
        pools = set(pools)
        found = [volume.id for project_id in project_ids
                 for volume in service_user.sdk_call(
                     SERVICE, 'GET /volumes/detail', lambda: list(
                         self._block_storage.volumes(
                             details=True, all_projects=True,
                             project_id=project_id)))
                 if volume.host in pools]
        for volume_id in found:
            self._call('DELETE', '/volumes/%s?cascade=True' % volume_id,
                       ok=(404,))
        for volume_id in found:
            self._wait_gone(volume_id, timeout, interval)

    def _wait_gone(self, volume_id, timeout, interval):
        polling.wait_for(
            lambda: self._call('GET', '/volumes/%s' % volume_id, ok=(404,)),
            lambda volume: not volume, timeout, interval,
            self._late(volume_id, 'deleted'),
            deferral.Wait(deferral.VOLUME, volume_id))

    def quota_set(self, project_id):
        """Return Cinder's quota set of a project, with its usage.

        ``{resource: {'limit': n, 'in_use': n, 'reserved': n}}``; the
        service user reads another project's (Cinder's rule
        ``volume_extension:quotas:show``: an admin).
        """
        return self._call('GET', '/os-quota-sets/%s?usage=True'
                          % project_id)['quota_set']

    def storage_pools(self):
        """Return ``{name: capabilities}`` of the pools Cinder reports.

        ``name`` is ``host@backend#pool``, as the volume services report
        it to the scheduler (``GET /scheduler-stats/get_pools?detail=True``,
        an admin's call: Cinder's rule
        ``scheduler_extension:scheduler_stats:get_pools``).
        """
        return {pool.name: pool.capabilities for pool in
                service_user.sdk_call(
                    SERVICE, 'GET /scheduler-stats/get_pools',
                    lambda: list(self._block_storage.backend_pools()))}

    @functools.cached_property
    def _block_storage(self):
        return service_user.catalog_proxy(self._adapter, SERVICE, None)

    def volume_status(self, volume_id):
        """Return the volume's status, or None if it is gone."""
        found = self.find_volume(volume_id)
        return found and found['status']

    def find_volume(self, volume_id):
        """Return the volume's view, or None if Cinder has none."""
        found = self._call('GET', '/volumes/%s' % volume_id, ok=(404,))
        return found and found['volume']

    @staticmethod
    def _late(volume_id, what):
        return lambda _value: 'Volume %s was not %s in time.' % (volume_id,
                                                                 what)

    def _volume(self, volume_id):
        return self._call('GET', '/volumes/%s' % volume_id)['volume']

    def _action(self, volume_id, action, body, ok=()):
        return self._call('POST', '/volumes/%s/action' % volume_id,
                          json={action: body}, ok=ok)

    def _call(self, method, path, ok=(), **kwargs):
        return service_user.call(self._adapter, SERVICE, method, path, ok,
                                 **kwargs)
