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
    """List leases: ``GET /v1/leases[?status=&name=&project_id=&...]``.

    Every project's leases for an administrator, as in Blazar, the
    project's own for the others; the query (also ``start``, ``end``)
    narrows the list.
    """
    return 200, {'leases': service.list(req.context, req.GET)}


def list_plugins(service, req):
    """List the resource types leases may reserve: ``GET /v1/plugins``."""
    return 200, {'plugins': service.list_plugins(req.context)}


def create_lease(service, req):
    """Create the lease the body describes: ``POST /v1/leases``."""
    return 201, {'lease': service.create(req.context, req.read_json())}


def show_lease(service, req, lease_id):
    """Show a lease: ``GET /v1/leases/{lease_id}``."""
    return 200, {'lease': service.get(req.context, lease_id)}


def update_lease(service, req, lease_id):
    """Apply the body to the lease: ``PUT /v1/leases/{lease_id}``."""
    return 200, {'lease': service.update(req.context, lease_id,
                                         req.read_json())}


def delete_lease(service, req, lease_id):
    """Delete a lease: ``DELETE /v1/leases/{lease_id}``."""
    service.delete(req.context, lease_id)
    return 204, None


def propose(service, req):
    """Propose windows for a lease, held a while.

    ``POST /v1/leases/proposals``.

    ``service`` is the
    :class:`~reservation_ext.leases.proposals.ProposalService`.
    """
    return 201, {'proposals': service.propose(req.context, req.read_json())}


def show_availability(service, req):
    """Show the free capacity of a type over a window.

    ``GET /v1/availability?resource_type=...&start=...&end=...``.

    ``service`` is the
    :class:`~reservation_ext.leases.availability.AvailabilityService`.
    """
    return 200, {'availability': service.show(req.context, req.GET)}
