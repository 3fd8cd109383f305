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

"""Cinder's volume quotas of a project, read inside cinder-api.

The reader of :class:`reservation_ext.enforcement.window_quotas.
WindowQuotas` for Cinder: Cinder's own quota engine (``cinder.quota.
QUOTAS``, as cinder.conf configures it), its project limits of
``volumes`` and ``gigabytes`` (``openstack quota set --volumes N
--gigabytes G``) and its usage (in use and reserved).
"""

from cinder import context as cinder_context
from cinder import exception as cinder_exc
from cinder import objects
from cinder import quota

from cinder_ext import reserved_volumes

RESOURCES = ('volumes', 'gigabytes')


class CinderQuotas:
    """Read a project's volumes and gigabytes quotas and usage."""

    def read(self, project_id, volume_ids):
        """Return ``(limits, usage, leased)`` of the project.

        :param volume_ids: leased volumes; ``leased`` is what Cinder
            counts of them (a volume still ``reserved`` holds no quota).
        """
        ctx = cinder_context.get_admin_context()
        quotas = quota.QUOTAS.get_project_quotas(ctx, project_id,
                                                 usages=True)
        limits = {name: quotas[name]['limit'] for name in RESOURCES}
        usage = {name: quotas[name].get('in_use', 0) +
                 quotas[name].get('reserved', 0) for name in RESOURCES}
        return limits, usage, _counted(ctx, volume_ids)


def _counted(ctx, volume_ids):
    """Return ``{resource: n}`` that Cinder counts of ``volume_ids``."""
    counted = dict.fromkeys(RESOURCES, 0)
    for volume_id in volume_ids:
        try:
            volume = objects.Volume.get_by_id(ctx, volume_id)
        except cinder_exc.VolumeNotFound:
            continue
        if volume.status != reserved_volumes.RESERVED:
            counted['volumes'] += 1
            counted['gigabytes'] += volume.size
    return counted
