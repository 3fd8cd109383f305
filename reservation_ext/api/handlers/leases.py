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

"""Handlers of ``/v1/leases``: Blazar v1 lease list, create, show, update
and delete, and ``/v1/plugins``; schedule proposals and availability.

Every handler takes the
:class:`~reservation_ext.leases.service.LeaseService`, the request (a
:class:`reservation_ext.api.wsgi.Request`) and the arguments of
its path, and returns ``(status, body)``; errors are raised as
:class:`~reservation_ext.exceptions.ReservationError` and turned into
responses by the application.
"""


def list_leases(service, req):
    """``GET /v1/leases[?status=&name=&project_id=&start=&end=]``.

    Every project's leases for an administrator, as in Blazar, the
    project's own for the others; the query narrows the list.
    """
    return 200, {'leases': service.list(req.context, req.GET)}


def list_plugins(service, req):
    """``GET /v1/plugins``: the resource types leases may reserve."""
    return 200, {'plugins': service.list_plugins(req.context)}


def create_lease(service, req):
    """``POST /v1/leases``: create the lease the body describes."""
    return 201, {'lease': service.create(req.context, req.read_json())}


def show_lease(service, req, lease_id):
    """``GET /v1/leases/{lease_id}``."""
    return 200, {'lease': service.get(req.context, lease_id)}


def update_lease(service, req, lease_id):
    """``PUT /v1/leases/{lease_id}``: apply the body to the lease."""
    return 200, {'lease': service.update(req.context, lease_id,
                                         req.read_json())}


def delete_lease(service, req, lease_id):
    """``DELETE /v1/leases/{lease_id}``."""
    service.delete(req.context, lease_id)
    return 204, None


def propose(service, req):
    """``POST /v1/leases/proposals``: windows for a lease, held a while.

    ``service`` is the
    :class:`~reservation_ext.leases.proposals.ProposalService`.
    """
    return 201, {'proposals': service.propose(req.context, req.read_json())}


def show_availability(service, req):
    """``GET /v1/availability?resource_type=...&start=...&end=...``.

    ``service`` is the
    :class:`~reservation_ext.leases.availability.AvailabilityService`.
    """
    return 200, {'availability': service.show(req.context, req.GET)}
