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

"""When the preemptible servers of a page of views are reclaimed.

A preemptible server's view shows ``reservation:reclaim_after``
(:mod:`reservation_ext.leases.metadata`): when the engine reclaims it at
the latest, from the next booking of its host. Nova's view does not say
where a server runs to its user (the hypervisor hostname is an
administrator's field), so this reads Nova's own records, as the compute
API does for the page: the instances (host and flavor, one query per
cell), then the bookings ahead on those hosts (one query of the leases
DB), then the scheduler hints of the servers on a booked host whose
flavor does not say already (one query of the API DB). A page costs
those few queries, whatever its length; a page with no server on a
booked host stops after the first two.
"""

from nova import context as nova_context
from nova import objects

from db import api as db_api
from reservation_ext.planning import preemptible_placement


def reclaim_after(ctx, rctx, server_ids, now, conf):
    """Return ``{server id: reclaim time}`` of the preemptible servers.

    :param ctx: Nova's request context (its servers were shown to it).
    :param rctx: the reservation context, to read the leases DB.
    :param server_ids: the servers of the page.
    :param now: from the injected clock (UTC).
    :param conf: a ConfigOpts with the ``[reservation]`` options.
    """
    if not server_ids:
        return {}
    # The caller was shown these servers already: an administrator's
    # read of their records tells nothing more than where they run.
    admin = ctx.elevated()
    instances = _instances(admin, server_ids)
    with db_api.context_manager.reader.using(rctx) as session:
        deadlines = preemptible_placement.reclaim_times_of(
            session, now, {node for node, _specs in instances.values()},
            conf.reservation.preemption_lead_time,
            conf.reservation.cleaning_time)
    booked = {server_id: (node, specs)
              for server_id, (node, specs) in instances.items()
              if node in deadlines}
    if not booked:
        return {}
    hints = _hints(admin, [server_id for server_id, (_node, specs)
                           in booked.items()
                           if not preemptible_placement.is_preemptible(
                               specs, None)])
    return {server_id: deadlines[node]
            for server_id, (node, specs) in booked.items()
            if preemptible_placement.is_preemptible(
                specs, hints.get(server_id))}


def _instances(ctx, server_ids):
    """Return ``{server id: (node, flavor extra specs)}`` of built servers.

    A server in no cell yet (a build request) runs nowhere.
    """
    results = nova_context.scatter_gather_skip_cell0(
        ctx, objects.InstanceList.get_by_filters,
        {'uuid': list(server_ids), 'deleted': False},
        expected_attrs=['flavor'])
    found = {}
    for result in results.values():
        if nova_context.is_cell_failure_sentinel(result):
            # A cell that does not answer: its servers show no key.
            continue
        for instance in result:
            if instance.node:
                found[instance.uuid] = (instance.node,
                                        dict(instance.flavor.extra_specs))
    return found


def _hints(ctx, server_ids):
    """Return ``{server id: scheduler hints}`` (one query of the API DB)."""
    if not server_ids:
        return {}
    return {spec.instance_uuid: spec.scheduler_hints
            for spec in objects.RequestSpec.get_by_instance_uuids(
                ctx, server_ids)
            if spec.scheduler_hints is not None}
