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

Nova's own check of a create counts the project's servers *now*: for a
server whose lease starts later it would make leases in disjoint windows
compete (a project at its limit now could book nothing for tomorrow).
:func:`install` wraps that check (``check_num_instances_quota``, or
``enforce_num_instances_and_resources`` with unified limits) so that,
inside :func:`checked_over_window`, it lets the create through: the
lease's check over its window, in the same request, replaces it. The
conductor's recheck when the build is cast, at the start, is Nova's.
"""

import contextlib
import contextvars

from nova.compute import utils as compute_utils
import nova.conf as nova_conf
from nova import context as nova_context
from nova.limit import placement as placement_limits
from nova.limit import utils as limit_utils
from nova import objects
from nova import quota as nova_quota

from reservation_ext.nova_api import wrapping

RESOURCES = ('instances', 'cores', 'ram')
_OVER_WINDOW = contextvars.ContextVar('reservation_quota_over_window',
                                      default=False)


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

    As Nova counts them: by default the servers not deleted in all cells
    (a server waiting for its lease is a BuildRequest, in no cell yet);
    with unified limits or ``[quota] count_usage_from_placement``, the
    instance mappings for ``instances`` (a BuildRequest has one) and
    Placement's allocations for cores and RAM (only a server built on a
    host has them).
    """
    counted = dict.fromkeys(RESOURCES, 0)
    if not server_ids:
        return counted
    by_placement = (limit_utils.use_unified_limits() or
                    nova_conf.CONF.quota.count_usage_from_placement)
    results = nova_context.scatter_gather_all_cells(
        ctx, objects.InstanceList.get_by_filters,
        {'uuid': list(server_ids), 'project_id': project_id,
         'deleted': False}, expected_attrs=[])
    for result in results.values():
        if nova_context.is_cell_failure_sentinel(result):
            continue
        for instance in result:
            counted['instances'] += 1
            if not by_placement or instance.host:
                counted['cores'] += instance.vcpus
                counted['ram'] += instance.memory_mb
    if by_placement:
        counted['instances'] = sum(
            1 for mapping in objects.InstanceMappingList.get_by_instance_uuids(
                ctx, list(server_ids)) if mapping.queued_for_delete is False)
    return counted


def install():
    """Wrap Nova's instance quota checks of a create, once."""
    wrapping.wrap_once(compute_utils, 'check_num_instances_quota',
                       _db_check)
    wrapping.wrap_once(placement_limits,
                       'enforce_num_instances_and_resources',
                       _unified_limits_check)


@contextlib.contextmanager
def checked_over_window():
    """Leave the quota check of the creates made inside to the lease's."""
    token = _OVER_WINDOW.set(True)
    try:
        yield
    finally:
        _OVER_WINDOW.reset(token)


def _db_check(original):
    """Return Nova's DB quota check, which lets all through over a window."""
    def check_num_instances_quota(context, flavor, min_count, max_count,
                                  *args, **kwargs):
        """Let all through over a window; else Nova's check."""
        if _OVER_WINDOW.get():
            return max_count
        return original(context, flavor, min_count, max_count, *args,
                        **kwargs)
    return check_num_instances_quota


def _unified_limits_check(original):
    """Return Nova's unified limits check, letting all through likewise."""
    def enforce_num_instances_and_resources(context, project_id,
                                            request_spec, min_count,
                                            max_count, *args, **kwargs):
        """Let all through over a window; else Nova's check."""
        if _OVER_WINDOW.get():
            return max_count
        return original(context, project_id, request_spec, min_count,
                        max_count, *args, **kwargs)
    return enforce_num_instances_and_resources
