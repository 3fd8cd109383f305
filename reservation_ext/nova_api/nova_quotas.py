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

"""Nova's quotas of a project, read inside nova-api.

The reader of :class:`reservation_ext.enforcement.window_quotas.
WindowQuotas`: Nova's own quota engine (``nova.quota.QUOTAS``) with the
driver that nova.conf's ``[quota] driver`` names, so the limits are
Nova's DB quotas (``openstack quota set``) or, with
``nova.quota.UnifiedLimitsDriver``, Keystone's unified limits
(``servers``, ``class:VCPU``, ``class:MEMORY_MB``), and the usage is what
Nova counts for its own API check.
"""

from nova import context as nova_context
from nova import objects
from nova import quota as nova_quota

RESOURCES = ('instances', 'cores', 'ram')


class NovaQuotas:
    """Read a project's instances, cores and RAM quotas and usage."""

    def read(self, project_id, server_ids):
        """Return ``(limits, usage, leased)`` of the project.

        :param server_ids: servers whose usage Nova counts but the caller
            counts otherwise; ``leased`` is what Nova counts of them.
        """
        ctx = nova_context.get_admin_context()
        quotas = nova_quota.QUOTAS.get_project_quotas(ctx, project_id,
                                                      usages=True)
        limits = {name: quotas[name]['limit'] for name in RESOURCES}
        usage = {name: quotas[name].get('in_use', 0) for name in RESOURCES}
        return limits, usage, _counted(ctx, project_id, server_ids)


def _counted(ctx, project_id, server_ids):
    """Return ``{resource: n}`` that Nova counts of the servers ``server_ids``.

    As Nova's cell count does: the servers not deleted in all cells (a
    server waiting for its lease is a BuildRequest, in no cell yet).
    """
    counted = dict.fromkeys(RESOURCES, 0)
    if not server_ids:
        return counted
    results = nova_context.scatter_gather_all_cells(
        ctx, objects.InstanceList.get_by_filters,
        {'uuid': list(server_ids), 'project_id': project_id,
         'deleted': False}, expected_attrs=[])
    for result in results.values():
        if nova_context.is_cell_failure_sentinel(result):
            continue
        for instance in result:
            counted['instances'] += 1
            counted['cores'] += instance.vcpus
            counted['ram'] += instance.memory_mb
    return counted
