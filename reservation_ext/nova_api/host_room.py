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
start, which frees the host first. A wrong "yes" cannot happen but by a
race with another claim on that host, which Nova's scheduler then
reports as for any boot.
"""

from nova import exception as nova_exc
from nova.scheduler.client import report
from nova.scheduler import utils as scheduler_utils


def fits_now(ctx, spec, node):
    """Return whether Placement has room now for a build on ``node``.

    :param ctx: Nova's request context (for the global request id).
    :param spec: the build's RequestSpec.
    :param node: the booked host's hypervisor hostname.
    """
    placement = report.report_client_singleton()
    try:
        provider = placement.get_provider_by_name(ctx, node)
    except (nova_exc.ResourceProviderNotFound,
            nova_exc.PlacementAPIConnectFailure):
        return False
    request = scheduler_utils.ResourceRequest.from_request_spec(spec)
    request.get_request_group(None).in_tree = provider['uuid']
    # (None, None, None), or None, when Placement did not answer.
    answer = placement.get_allocation_candidates(ctx, request)
    return bool(answer and answer[0])
