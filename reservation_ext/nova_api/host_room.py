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

"""Whether a held-back build fits its booked host now, as Placement says.

The planner books reservable capacity as if the preemptible servers on it
were not there (:mod:`reservation_ext.planning.preemptible_placement`):
they give
way when a booking starts (:mod:`reservation_ext.engine.reclaim`). A
server booked into the gap of a reservable host from now is therefore
built at once only when Placement has room for it there now. The question
is the one Nova's scheduler asks for the same RequestSpec (flavor, image
traits, the ports' resources): allocation candidates, restricted to the
booked host's provider tree (``in_tree``, the compute node's provider is
named after its hypervisor hostname). No candidate, or no answer from
Placement, means "not now": the caller leaves the build to the lease's
start, which frees the host first.

Builds cast to the host a moment before are not in Placement until the
scheduler claims for them: each start asks for room for its own build
and for the builds taken before it on that host
(:func:`reservation_ext.nova_api.server_records.taking_build`) that
Placement has not seen yet (no allocation on the host, BuildRequest still
there). A build that Placement sees already, or that failed, is not
counted twice.
"""

from nova import exception as nova_exc
from nova import objects
from nova.scheduler.client import report
from nova.scheduler import utils as scheduler_utils

# The provider uuid of each hypervisor hostname, as Placement named it.
_PROVIDERS = {}


def fits_now(ctx, spec, node, started=()):
    """Return whether Placement has room now for a build on ``node``.

    :param ctx: Nova's request context (for the global request id).
    :param spec: the build's RequestSpec.
    :param node: the booked host's hypervisor hostname.
    :param started: the ids of servers whose builds were cast to ``node``
        before this one.
    """
    cached = node in _PROVIDERS
    fits = _fits(ctx, spec, node, started)
    if not fits and cached:
        # Again with the provider read afresh: the node may have a new one.
        fits = _fits(ctx, spec, node, started)
    return fits


def _fits(ctx, spec, node, started):
    placement = report.report_client_singleton()
    try:
        provider = _provider(ctx, placement, node)
        unclaimed = _unclaimed(ctx, placement, provider, started)
    except (nova_exc.ResourceProviderNotFound,
            nova_exc.ResourceProviderAllocationRetrievalFailed,
            nova_exc.PlacementAPIConnectFailure):
        _PROVIDERS.pop(node, None)
        return False
    request = scheduler_utils.ResourceRequest.from_request_spec(spec)
    group = request.get_request_group(None)
    group.in_tree = provider
    for other in unclaimed:
        wanted = scheduler_utils.ResourceRequest.from_request_spec(other)
        for resource, amount in wanted.merged_resources().items():
            group.resources[resource] = (
                group.resources.get(resource, 0) + amount)
    # (None, None, None), or None, when Placement did not answer.
    answer = placement.get_allocation_candidates(ctx, request)
    if not (answer and answer[0]):
        _PROVIDERS.pop(node, None)
        return False
    return True


def _provider(ctx, placement, node):
    """Return the uuid of ``node``'s provider, read once per process."""
    if node not in _PROVIDERS:
        _PROVIDERS[node] = placement.get_provider_by_name(ctx, node)['uuid']
    return _PROVIDERS[node]


def _unclaimed(ctx, placement, provider_uuid, server_ids):
    """Return the RequestSpecs of the builds Placement has not seen yet."""
    if not server_ids:
        return []
    claimed = placement.get_allocations_for_resource_provider(
        ctx, provider_uuid).allocations
    specs = []
    for server_id in server_ids:
        if server_id in claimed:
            continue
        try:
            # Nova deletes it once the build is scheduled, or has failed.
            objects.BuildRequest.get_by_instance_uuid(ctx, server_id)
            specs.append(objects.RequestSpec.get_by_instance_uuid(
                ctx, server_id))
        except (nova_exc.BuildRequestNotFound,
                nova_exc.RequestSpecNotFound):
            continue
    return specs
