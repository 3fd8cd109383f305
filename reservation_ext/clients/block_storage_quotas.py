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

"""Cinder's volume quotas of a project, read through Cinder's API.

The reader of :class:`reservation_ext.enforcement.window_quotas.
WindowQuotas` for Cinder where Cinder's quota engine is not in the
process: the lease API, which nova-api serves, checks its
``virtual:volume`` reservations with it. The service user of
``[reservation_client]`` (:class:`.block_storage.CinderClient`) reads
``GET /os-quota-sets/{project_id}?usage=True``: the ``limit`` of
``volumes`` and ``gigabytes`` (``openstack quota set --volumes N
--gigabytes G``) and their usage, ``in_use`` plus ``reserved`` (Cinder's
quota reservations of creates under way), as Cinder's own check adds
them. Cinder's rule of that call (``volume_extension:quotas:show``)
lets an admin read any project's, so the service user needs the admin
role, as for its other calls.

A leased volume still ``reserved`` holds no quota: the Cinder extension
writes its record without Cinder's create flow, and only its start
commits the quota (:mod:`cinder_ext.reserved_volumes`). A started one
is in ``in_use``, and is counted over its window instead: each leased
volume is read (``GET /volumes/{id}``) to subtract it, as
:mod:`cinder_ext.volume_quotas` does in process.

Cinder that cannot be asked makes the change fail with
:class:`~reservation_ext.exceptions.EnforcementUnavailable` (503), as
Keystone does for the time quotas: nothing is written.
"""

import functools

from oslo_log import log as logging

from reservation_ext.clients import block_storage
from reservation_ext import exceptions

LOG = logging.getLogger(__name__)

RESOURCES = ('volumes', 'gigabytes')
# The status of a leased volume that waits for its start.
RESERVED = 'reserved'


class BlockStorageQuotas:
    """Read a project's volumes and gigabytes quotas through Cinder's API.

    :param transport: the ``requests.Session`` of the service user's
        requests (see :func:`.service_user.adapter`).
    """

    def __init__(self, conf, transport=None):
        self._conf = conf
        self._transport = transport

    @functools.cached_property
    def _cinder(self):
        """Make the service user's Cinder client at first use."""
        # A lease API whose leases reserve no volume never needs it.
        return block_storage.CinderClient(self._conf, self._transport)

    def read(self, project_id, volume_ids):
        """Return ``(limits, usage, leased)`` of the project.

        :param volume_ids: leased volumes; ``leased`` is what Cinder
            counts of them.
        :raises EnforcementUnavailable: Cinder could not be asked.
        """
        try:
            quota_set = self._cinder.quota_set(project_id)
            volumes = [self._cinder.find_volume(volume_id)
                       for volume_id in volume_ids]
        except exceptions.PluginError as exc:
            LOG.warning('Reading the Cinder quotas of project %s failed: '
                        '%s', project_id, exc)
            raise exceptions.EnforcementUnavailable(
                "Cinder's quotas cannot be read; please retry later.") \
                from exc
        return quota_usage(quota_set, volumes)


def quota_usage(quota_set, volumes):
    """Return ``(limits, usage, leased)`` of a quota set and leased volumes.

    :param quota_set: Cinder's quota set with usage, ``{resource:
        {'limit': n, 'in_use': n, 'reserved': n}}``.
    :param volumes: the views of the leased volumes (None: Cinder has
        none, such as one deleted).
    """
    limits = {name: quota_set[name]['limit'] for name in RESOURCES}
    usage = {name: quota_set[name].get('in_use', 0) +
             quota_set[name].get('reserved', 0) for name in RESOURCES}
    counted = [volume for volume in volumes
               if volume and volume['status'] != RESERVED]
    leased = {'volumes': len(counted),
              'gigabytes': sum(volume['size'] for volume in counted)}
    return limits, usage, leased
