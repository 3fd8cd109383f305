"""The calls reservation-ext makes to the image API (Glance v2).

The service user of ``[reservation_client]`` makes them, found through the
catalog (``image``): the engine waits there for the snapshots that end
``snapshot_delete`` server leases.
"""

import time

from reservation_ext.clients import service_user
from reservation_ext import exceptions

FAILED = ('killed', 'deleted', 'deactivated')


class ImageClient:
    """Image API calls of the reservation service user."""

    def __init__(self, conf):
        self._adapter = service_user.adapter(conf, 'image')

    def find(self, **properties):
        """The images whose properties have these values."""
        return self._call('GET', '/v2/images', params=properties)['images']

    def wait_active(self, image_id, timeout, interval=1):
        """Wait until the image is ``active``.

        :raises PluginError: it failed, or is not active in time.
        """
        deadline = time.monotonic() + timeout
        while True:
            status = self._call('GET', '/v2/images/%s' % image_id)['status']
            if status == 'active':
                return
            if status in FAILED or time.monotonic() > deadline:
                raise exceptions.PluginError(
                    'Image %s is %s, not active.' % (image_id, status))
            time.sleep(interval)

    def _call(self, method, path, **kwargs):
        return service_user.call(self._adapter, 'The image API', method,
                                 path, **kwargs)
