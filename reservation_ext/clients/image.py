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

"""The calls reservation-ext makes to the image API (Glance v2).

The service user of ``[reservation_client]`` makes them, found through the
catalog (``image``): the engine waits there for the snapshots that end
``snapshot_delete`` server leases.

They are sent as they are (:func:`.service_user.call`), and the wait is
:func:`.polling.wait_for`, rather than through openstacksdk's image
proxy: an image catalog endpoint names no version, and openstacksdk's
proxy finds its ``/v2`` by one version discovery request at its creation,
sent without retries; when that request fails, the proxy keeps the bare
endpoint and every call of it fails, where these calls name ``/v2`` and
are retried. Finding images by ``instance_uuid`` (an image property) is
not among openstacksdk's image queries either.
"""

from reservation_ext.clients import deferral
from reservation_ext.clients import polling
from reservation_ext.clients import service_user
from reservation_ext import exceptions

FAILED = ('killed', 'deleted', 'deactivated')


class ImageClient:
    """Image API calls of the reservation service user.

    :param transport: the ``requests.Session`` that sends the requests
        (see :func:`.service_user.adapter`).
    """

    def __init__(self, conf, transport=None):
        self._adapter = service_user.adapter(conf, 'image', transport)

    def find(self, **properties):
        """Find the images whose properties have these values."""
        return self._call('GET', '/v2/images', params=properties)['images']

    def wait_active(self, image_id, timeout, interval=1):
        """Wait until the image is ``active``.

        :raises PluginError: it failed, or is not active in time.
        """
        def not_active(status):
            return 'Image %s is %s, not active.' % (image_id, status)

        def active(status):
            if status in FAILED:
                raise exceptions.PluginError(not_active(status))
            return status == 'active'

        polling.wait_for(
            lambda: self._call('GET', '/v2/images/%s' % image_id)['status'],
            active, timeout, interval, not_active,
            deferral.Wait(deferral.IMAGE, image_id,
                          until=('active',) + FAILED))

    def status(self, image_id):
        """Return the image's status, or None if it is gone."""
        found = self._call('GET', '/v2/images/%s' % image_id, ok=(404,))
        return found and found['status']

    def _call(self, method, path, **kwargs):
        return service_user.call(self._adapter, 'The image API', method,
                                 path, **kwargs)
