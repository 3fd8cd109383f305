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

"""The WSGI application of the lease API (Blazar v1 on the wire).

nova-api mounts it at ``/reservation`` behind keystonemiddleware, so paths
here are relative (``/v1/leases``) and the caller is known from the
headers that keystonemiddleware sets (``X-User-Id``, ``X-Project-Id``,
``X-Roles``, ...). Bodies are JSON both ways. Errors are mapped to
responses here, once: a :class:`~reservation_ext.exceptions.ReservationError`
becomes its status code with Blazar's error body

    {"error_code": 404, "error_message": "...", "error_name": "NotFound"}

but a :class:`~reservation_ext.exceptions.PluginError` (Nova or Cinder
failed a call) is logged and answered with a generic 503, and anything
else is logged and answered with a generic 500: neither shows internals.
"""

import functools

from oslo_log import log as logging
import routes
import webob
import webob.dec

from db import api as db_api
from reservation_ext.api.handlers import floatingips as fip_handlers
from reservation_ext.api.handlers import hosts as host_handlers
from reservation_ext.api.handlers import leases as lease_handlers
from reservation_ext.api.handlers import networks as network_handlers
from reservation_ext.api.handlers import storage_pools as pool_handlers
from reservation_ext.clients import block_storage_quotas
from reservation_ext.clients import compute as compute_client
from reservation_ext.clients import plugin_clients
from reservation_ext import clock
from reservation_ext import conf as conf_mod
from reservation_ext import context
from reservation_ext.enforcement import enforcer
from reservation_ext import exceptions
from reservation_ext.floatingips import inventory as fip_inventory
from reservation_ext.hosts import inventory
from reservation_ext.leases import availability
from reservation_ext.leases import notifications
from reservation_ext.leases import proposals
from reservation_ext.leases import service as lease_service
from reservation_ext.network_segments import inventory as network_inventory
from reservation_ext.nova_api import nova_quotas
from reservation_ext import plugins
from reservation_ext.storage_pools import inventory as pool_inventory
from reservation_ext import validation

LOG = logging.getLogger(__name__)

# Path templates, with ``{name}`` for one path segment, the service their
# handlers take, and the handlers by method. Fixed paths such as
# ``/v1/os-hosts/allocations`` (``/v1/leases/proposals``) come before
# ``/v1/os-hosts/{host_id}`` (``/v1/leases/{lease_id}``) so
# that they win whatever the Routes version (2.5 also tries the longest
# fixed beginnings first).
ROUTE_DECLARATIONS = [
    ('/v1/leases', 'leases', {
        'GET': lease_handlers.list_leases,
        'POST': lease_handlers.create_lease,
    }),
    ('/v1/leases/proposals', 'proposals', {
        'POST': lease_handlers.propose,
    }),
    ('/v1/leases/{lease_id}', 'leases', {
        'GET': lease_handlers.show_lease,
        'PUT': lease_handlers.update_lease,
        'DELETE': lease_handlers.delete_lease,
    }),
    ('/v1/plugins', 'leases', {
        'GET': lease_handlers.list_plugins,
    }),
    ('/v1/availability', 'availability', {
        'GET': lease_handlers.show_availability,
    }),
    ('/v1/os-hosts', 'hosts', {
        'GET': host_handlers.list_hosts,
        'POST': host_handlers.create_host,
    }),
    ('/v1/os-hosts/allocations', 'hosts', {
        'GET': host_handlers.list_allocations,
    }),
    ('/v1/os-hosts/properties', 'hosts', {
        'GET': host_handlers.list_properties,
    }),
    ('/v1/os-hosts/properties/{property_name}', 'hosts', {
        'PATCH': host_handlers.update_property,
    }),
    ('/v1/os-hosts/{host_id}', 'hosts', {
        'GET': host_handlers.show_host,
        'PUT': host_handlers.update_host,
        'DELETE': host_handlers.delete_host,
    }),
    ('/v1/os-hosts/{host_id}/allocation', 'hosts', {
        'GET': host_handlers.show_allocation,
    }),
    ('/v1/floatingips', 'floatingips', {
        'GET': fip_handlers.list_floatingips,
        'POST': fip_handlers.create_floatingip,
    }),
    ('/v1/floatingips/{floatingip_id}', 'floatingips', {
        'GET': fip_handlers.show_floatingip,
        'DELETE': fip_handlers.delete_floatingip,
    }),
    ('/v1/networks', 'networks', {
        'GET': network_handlers.list_networks,
        'POST': network_handlers.create_network,
    }),
    ('/v1/networks/allocations', 'networks', {
        'GET': network_handlers.list_allocations,
    }),
    ('/v1/networks/{network_id}', 'networks', {
        'GET': network_handlers.show_network,
        'PUT': network_handlers.update_network,
        'DELETE': network_handlers.delete_network,
    }),
    ('/v1/networks/{network_id}/allocation', 'networks', {
        'GET': network_handlers.show_allocation,
    }),
    ('/v1/storage-pools', 'storage_pools', {
        'GET': pool_handlers.list_storage_pools,
        'POST': pool_handlers.create_storage_pool,
    }),
    ('/v1/storage-pools/{pool_id}', 'storage_pools', {
        'GET': pool_handlers.show_storage_pool,
        'PUT': pool_handlers.update_storage_pool,
        'DELETE': pool_handlers.delete_storage_pool,
    }),
]


class MethodNotAllowed(exceptions.ReservationError):
    """The path exists, but not with this method (405)."""

    code = 405

    def __init__(self, method, allowed):
        self.allowed = sorted(allowed)
        super().__init__('Method %s is not allowed here; allowed: %s.'
                         % (method, ', '.join(self.allowed)))


class Request(webob.Request):
    """Read a request of the lease API: its caller, body and flags."""

    @functools.cached_property
    def context(self):
        """Return the caller's context, from keystonemiddleware's headers.

        Who counts as an administrator is policy's decision (the
        ``context_is_admin`` rule), not the context's.
        """
        return context.RequestContext.from_environ(self.environ)

    def read_json(self):
        """Return the JSON body (:func:`validation.load_json`), checked."""
        return validation.load_json(self.body)

    def check_text(self):
        """Raise InvalidInput unless the path and query string are UTF-8.

        webob decodes them when first read, wherever that is: read them
        here, before any handler does.
        """
        for field, read in (('path', lambda: self.path_info),
                            ('query string', lambda: self.GET)):
            try:
                read()
            except UnicodeDecodeError:
                raise exceptions.InvalidInput(field, 'is not UTF-8 text')

    def flag(self, name):
        """Return the boolean query parameter ``name`` (default false)."""
        return validation.parse_boolean(self.GET.get(name, 'false'), name)


class App:
    """Route requests to the handlers and the services they take.

    ``leases`` is a :class:`~reservation_ext.leases.service.LeaseService`,
    ``hosts`` a :class:`~reservation_ext.hosts.inventory.HostInventory`,
    ``proposals`` a
    :class:`~reservation_ext.leases.proposals.ProposalService` and
    ``availability`` an
    :class:`~reservation_ext.leases.availability.AvailabilityService`;
    ``networks`` a :class:`~reservation_ext.network_segments.inventory.
    NetworkInventory`; ``floatingips`` a
    :class:`~reservation_ext.floatingips.inventory.FloatingIPInventory`;
    ``storage_pools`` a :class:`~reservation_ext.storage_pools.inventory.
    StoragePoolInventory`.
    """

    def __init__(self, leases, hosts, proposals, availability,
                 networks=None, floatingips=None, storage_pools=None):
        self._services = {'leases': leases, 'hosts': hosts,
                          'proposals': proposals,
                          'availability': availability,
                          'networks': networks,
                          'floatingips': floatingips,
                          'storage_pools': storage_pools}
        self._map = make_map(ROUTE_DECLARATIONS)

    @webob.dec.wsgify(RequestClass=Request)
    def __call__(self, req):
        """Answer ``req`` with its handler's JSON, or an error's."""
        try:
            handler, service, path_args = self._route(req)
            status, body = handler(service, req, **path_args)
        except exceptions.PluginError as exc:
            # What Nova or Cinder said is for the operator's log, not the
            # user: the call's path and answer are internals.
            LOG.error('%s %s failed: %s', req.method, req.path, exc.message)
            return _error_response(exceptions.ServiceUnavailable())
        except exceptions.ReservationError as exc:
            return _error_response(exc)
        except Exception:
            LOG.exception('Unexpected error in %s %s', req.method, req.path)
            return _error_response(exceptions.ReservationError())
        return _json_response(status, body)

    def _route(self, req):
        """Return the handler of ``req``, its service and path arguments."""
        req.check_text()
        # The path as webob decodes it (UTF-8) rather than the environ's
        # latin-1 PATH_INFO; the environ for the method conditions.
        match = self._map.match(req.path_info, req.environ)
        if match is None:
            raise exceptions.NotFound(kind='Resource', id=req.path_info)
        handler = match.pop('handler')
        service = self._services[match.pop('service')]
        return handler, service, match


def make_map(declarations):
    """Return the :class:`routes.Mapper` of ``declarations`` (Placement's).

    Each method of a path is a route with a method condition; a last
    route of the path, without one, takes the other methods to a handler
    that answers 405 with the allowed methods.
    """
    mapper = routes.Mapper()
    for path, service, methods in declarations:
        for method, handler in methods.items():
            mapper.connect(path, handler=handler, service=service,
                           conditions={'method': [method]})
        mapper.connect(path, handler=_method_not_allowed(methods),
                       service=service)
    return mapper


def _method_not_allowed(allowed):
    """Return a handler that raises MethodNotAllowed naming ``allowed``."""
    def handler(service, req, **path_args):
        raise MethodNotAllowed(req.method, allowed)
    return handler


def _json_response(status, body):
    if body is None:
        return webob.Response(status=status, content_type=None)
    return webob.Response(status=status, json_body=body,
                          content_type='application/json')


def _error_response(exc):
    response = _json_response(exc.code, {
        'error_code': exc.code,
        'error_message': exc.message,
        'error_name': exc.name,
    })
    if isinstance(exc, MethodNotAllowed):
        response.allow = exc.allowed
    return response


def app_factory(global_conf, **local_conf):
    """Return the lease API configured from ``cfg.CONF`` (paste factory)."""
    conf = conf_mod.CONF
    db_api.configure(conf)
    return build_app(conf, clock.SYSTEM,
                     plugins.load_plugins(conf, clock.SYSTEM),
                     notifications.get_notifier(conf),
                     compute_client.NovaClient(conf),
                     enforcer.from_conf(
                         conf, clock.SYSTEM, nova_quotas.NovaQuotas(),
                         block_storage_quotas.BlockStorageQuotas(conf)))


def build_app(conf, clock, loaded_plugins, notifier, nova,
              enforcement=None, neutron=None, cinder=None):
    """Build the lease API's services; return the :class:`App` over them.

    :param loaded_plugins: ``{resource_type: ResourcePlugin}``.
    :param nova: the Nova client of the host inventory.
    :param enforcement: the lease service's
        :class:`~reservation_ext.enforcement.enforcer.Enforcement` (by
        default none).
    :param neutron: the Neutron client of the floating IP inventory (by
        default the service user's, made at first use).
    :param cinder: the Cinder client of the storage pool inventory (by
        default the service user's, made at first use).
    """
    clients = plugin_clients.PluginClients(conf, network=neutron,
                                           cinder=cinder)
    return App(
        lease_service.LeaseService(conf, clock, loaded_plugins, notifier,
                                   enforcement),
        inventory.HostInventory(conf.reservation, clock, nova),
        proposals.ProposalService(conf, clock, loaded_plugins),
        availability.AvailabilityService(conf, clock, loaded_plugins),
        networks=network_inventory.NetworkInventory(clock),
        floatingips=fip_inventory.FloatingIPInventory(clock, clients),
        storage_pools=pool_inventory.StoragePoolInventory(clock, clients))
