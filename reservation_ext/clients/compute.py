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

"""The calls reservation-ext makes to Nova's compute API.

The service user of ``[reservation_client]`` (keystoneauth1 session, auth
and adapter options) makes them through openstacksdk's compute proxy
(:func:`.service_user.catalog_proxy`), found through the catalog. Every call is
idempotent, so that an engine may repeat an action another engine left
half-done: adding a host that is already in an aggregate, removing one
that is not, or deleting what is gone, succeeds.

openstacksdk's proxy methods make the plain calls (aggregates, services,
availability zones, flavor access and extra specs, deletes, shelving)
and its waits wait for one server status and for deletes. Sent as they
are through the proxy (:func:`.service_user.call`): the actions of
nova-api's reservation middleware (:data:`START_ACTION`,
:data:`FLAVOR_ACTION`), which openstacksdk does not know; the views the
callers read as Nova shows them at :data:`MICROVERSION` and
:data:`HINTS_MICROVERSION` (hypervisors with their sizes, servers with
their hints and flavor extra specs, flavors), which openstacksdk's
resources rename or drop; the flavor create, whose body is Nova's view;
and the two creates sent once (below), as openstacksdk retries every
request alike.

Failures are retried as :mod:`.service_user` says. Two creates are not
idempotent (Nova gives a server group or a snapshot image a new id each
time): after one that may have been carried out, the group or image is
looked for by its name or server before it is asked for again. Nova
answers 409 to an action on a server busy with another one: the server
is read again, and the action asked again with backoff unless the
server has reached (or is on its way to) what the action wants.
"""

import functools
import time

from openstack.compute.v2 import server as sdk_server
from openstack import exceptions as sdk_exc

from reservation_ext.clients import deferral
from reservation_ext.clients import image as image_client
from reservation_ext.clients import polling
from reservation_ext.clients import service_user
from reservation_ext import exceptions

SERVICE = 'Nova'
# 2.53: hypervisors by UUID and hostname pattern; 2.87 is the last
# version that shows hypervisor sizes (vcpus, memory_mb, local_gb).
MICROVERSION = '2.87'
# 2.100: a server's view carries its scheduler hints, and (since 2.47)
# its flavor with the extra specs.
HINTS_MICROVERSION = '2.100'
# Metadata keys of a lease aggregate.
OWNER_KEY = 'reservation:owner'
RESERVATION_KEY = 'reservation:id'
# The server action of nova-api's middleware that builds a reserved server.
START_ACTION = 'os-reservation-start'
# What nova-api's 409 to START_ACTION says when the booked host has no
# room yet for the server.
NO_ROOM_YET = 'waits for room on'
FLAVOR_ACTION = 'os-reservation-flavor'
OFFLOADED = 'SHELVED_OFFLOADED'
SHELVED = ('SHELVED', OFFLOADED)
# Task states of a server on its way to SHELVED, and to OFFLOADED.
SHELVING = ('shelving', 'shelving_image_pending_upload',
            'shelving_image_uploading')
OFFLOADING = ('shelving_offloading',)
# The task state of a server that Nova is deleting.
DELETING = 'deleting'


class NovaClient:
    """Compute API calls of the reservation service user.

    Nothing is sent before the first call: the proxy is made then.

    :param transport: the ``requests.Session`` that sends the requests
        (see :func:`.service_user.adapter`).
    """

    def __init__(self, conf, transport=None):
        self._conf = conf
        self._transport = transport
        self._adapter = service_user.adapter(conf, 'compute', transport)

    @functools.cached_property
    def _compute(self):
        return service_user.catalog_proxy(self._adapter, SERVICE,
                                          MICROVERSION)

    def find_hypervisor(self, name):
        """Find the hypervisor whose id, hostname or service host is ``name``.

        :raises NotFound: Nova has no such compute host.
        """
        found = self._get('/os-hypervisors/detail',
                          params={'hypervisor_hostname_pattern': name},
                          missing_ok=True)
        for hypervisor in (found or {}).get('hypervisors', []):
            if name in (hypervisor['hypervisor_hostname'],
                        hypervisor['service']['host']):
                return hypervisor
        # Nova answers 400 to an id that is not a UUID.
        by_id = self._call('GET', '/os-hypervisors/%s' % name, ok=(400, 404))
        if by_id:
            return by_id['hypervisor']
        raise exceptions.NotFound(kind='Nova compute host', id=name)

    def availability_zone_of(self, service_host):
        """Return the availability zone of a compute service host, or None."""
        zones = self._sdk('GET /os-availability-zone/detail', lambda: list(
            self._compute.availability_zones(details=True)))
        for zone in zones:
            if service_host in (zone.hosts or {}):
                return zone.name
        return None

    def ensure_aggregate(self, name, metadata=None):
        """Return the aggregate called ``name``, created when missing."""
        aggregate = self.find_aggregate(name)
        if aggregate is None:
            created = self._sdk('POST /os-aggregates',
                                self._compute.create_aggregate, name=name,
                                ok=(409,))
            # 409: another engine created it meanwhile. The create answer
            # shows neither hosts nor metadata.
            aggregate = (dict(_view(created), hosts=[], metadata={})
                         if created else self.find_aggregate(name))
        if metadata and any(aggregate['metadata'].get(key) != value
                            for key, value in metadata.items()):
            aggregate = _view(self._sdk(
                _aggregate_action(aggregate, 'set_metadata'),
                self._compute.set_aggregate_metadata, aggregate['id'],
                metadata))
        return aggregate

    def add_to_aggregate(self, aggregate, service_host, missing_ok=False):
        """Put a host into an aggregate (a member already is fine).

        :param missing_ok: a host Nova does not know (any more) is fine.
        """
        if service_host not in aggregate['hosts']:
            self._sdk(_aggregate_action(aggregate, 'add_host'),
                      self._compute.add_host_to_aggregate, aggregate['id'],
                      service_host,
                      ok=(409, 404) if missing_ok else (409,))

    def remove_from_aggregate(self, aggregate, service_host):
        """Take a host out of an aggregate (a non-member is fine)."""
        if service_host in aggregate['hosts']:
            self._sdk(_aggregate_action(aggregate, 'remove_host'),
                      self._compute.remove_host_from_aggregate,
                      aggregate['id'], service_host, ok=(404, 409))

    def delete_aggregate(self, name):
        """Delete the aggregate called ``name`` if it exists."""
        aggregate = self.find_aggregate(name)
        if aggregate is None:
            return
        for host in aggregate['hosts']:
            self.remove_from_aggregate(aggregate, host)
        self._sdk('DELETE /os-aggregates/%s' % aggregate['id'],
                  self._compute.delete_aggregate, aggregate['id'])

    def servers_on(self, service_host):
        """List the servers of every project on a compute host."""
        found = self._get('/servers/detail',
                          params={'all_tenants': 1, 'host': service_host})
        return found['servers']

    def servers_with_hints_on(self, service_host):
        """List the servers on a host, with flavor extra specs and hints."""
        return self._call('GET', '/servers/detail',
                          params={'all_tenants': 1, 'host': service_host},
                          microversion=HINTS_MICROVERSION)['servers']

    def servers_with_hints(self):
        """List every project's servers, with flavor extra specs and hints.

        Page after page, as Nova cuts a long list (``[api] max_limit``).
        """
        return every_server(lambda params: self._call(
            'GET', '/servers/detail', params=params,
            microversion=HINTS_MICROVERSION), {'all_tenants': 1})

    def shelve_offload(self, server_id, timeout=300, interval=1):
        """Shelve a server and offload it: it keeps no compute resources.

        Waits until it is SHELVED_OFFLOADED (a server that is gone is
        fine).
        """
        if not self._act(server_id, 'shelve', SHELVED, SHELVING):
            return
        self._wait_for_shelved(server_id, timeout, interval)
        self._act(server_id, 'shelveOffload', (OFFLOADED,), OFFLOADING)
        self._wait_for_server(server_id, OFFLOADED, timeout, interval)

    def _act(self, server_id, action, statuses, task_states):
        """Ask for a server action unless it is done or under way.

        Done: the server is in one of ``statuses``; under way: in one of
        ``task_states``. A 409 (the server is busy) is tried again.
        Return False when the server is gone.
        """
        ask = {'shelve': self._compute.shelve_server,
               'shelveOffload': self._compute.shelve_offload_server}[action]

        def attempt():
            server = self._server(server_id)
            if server is None:
                return False
            if server.status not in statuses and (
                    server.task_state not in task_states):
                self._sdk('POST /servers/%s/action %s' % (server_id, action),
                          ask, server_id)
            return True

        return service_user.retrying(self._adapter, attempt,
                                     service_user.Busy)

    def delete_servers(self, server_ids, timeout=300, interval=1):
        """Delete servers and wait until they are gone."""
        if deferral.active():
            self._defer_deletes(server_ids, timeout)
            return
        for server_id in server_ids:
            self._delete(server_id)
        deadline = time.monotonic() + timeout
        for number, server_id in enumerate(server_ids):
            # Each server is looked at once at least, even when the ones
            # before it took the whole timeout.
            try:
                self._sdk('GET /servers/%s' % server_id,
                          self._compute.wait_for_delete,
                          sdk_server.Server.new(id=server_id),
                          interval=interval,
                          wait=max(deadline - time.monotonic(), interval))
            except sdk_exc.ResourceTimeout:
                raise exceptions.PluginError(
                    'Servers %s were not deleted within %d s.' % (
                        ', '.join(server_ids[number:]), timeout))

    def _delete(self, server_id):
        self._sdk('DELETE /servers/%s' % server_id,
                  self._compute.delete_server, server_id)

    def _defer_deletes(self, server_ids, timeout):
        """Delete the servers; raise :class:`.deferral.Waiting` for them.

        They are looked at first, so that the action's run after its wait
        asks Nova for no delete that it is carrying out already.
        """
        left = [server for server in map(self._server, server_ids)
                if server is not None]
        for server in left:
            if server.task_state != DELETING:
                self._delete(server.id)
        if left:
            raise deferral.Waiting([
                deferral.Wait(deferral.SERVER, server.id,
                              since=server.updated_at)
                for server in left], timeout)

    def changed_servers(self, since):
        """Return the servers changed since ``since``, and the latest change.

        ``({id: status}, latest)``: of every project, deleted ones
        included (``DELETED``), as Nova lists those too when asked for
        changes; ``latest`` is the latest ``updated`` among them (None if
        none). ``since`` is by Nova's clock (a server's ``updated``), at
        or after which a change is listed.
        """
        servers = self._sdk('GET /servers/detail?changes-since', lambda: list(
            self._compute.servers(details=True, all_projects=True,
                                  changes_since=since)))
        return ({server.id: server.status for server in servers},
                max((server.updated_at for server in servers), default=None))

    def server_status(self, server_id):
        """Return the server's status, or None if it is gone."""
        server = self._server(server_id)
        return server and server.status

    def image_status(self, image_id):
        """Return the status of an image (a snapshot), None if it is gone."""
        return self._images.status(image_id)

    def start_server(self, server_id, lease_id, timeout=600, interval=1):
        """Build a server reserved for ``lease_id``; wait until ACTIVE.

        :raises NotYet: its booked host has no room for it yet (a lease
            that ends there has not freed it); said for ``timeout``
            seconds past the start.
        """
        try:
            self._call('POST', '/servers/%s/action' % server_id,
                       json={START_ACTION: {'lease_id': lease_id}})
        except service_user.Busy as exc:
            if NO_ROOM_YET not in str(exc):
                raise
            raise exceptions.NotYet(str(exc), for_at_most=timeout)
        self._wait_for_server(server_id, 'ACTIVE', timeout, interval)

    def flavor(self, flavor_id):
        """Return the flavor ``flavor_id`` (Nova's view), or None."""
        found = self._get('/flavors/%s' % flavor_id, missing_ok=True)
        return found and found['flavor']

    def find_flavor(self, name_or_id):
        """Return a flavor (Nova's view, extra specs too) by id or name.

        None if Nova has no such flavor.
        """
        found = self._sdk('GET /flavors/%s' % name_or_id,
                          self._compute.find_flavor, name_or_id,
                          ignore_missing=True, get_extra_specs=True)
        return found and _view(found)

    def ensure_private_flavor(self, flavor, extra_specs, projects):
        """Make the private flavor ``flavor`` (Nova's create body) once.

        It gets ``extra_specs`` and access for ``projects``; what exists
        already is fine, so that an engine may redo a start.
        """
        flavor_id = flavor['id']
        if self.flavor(flavor_id) is None:
            self._call('POST', '/flavors', ok=(409,), json={'flavor': dict(
                flavor, **{'os-flavor-access:is_public': False})})
        self._sdk('POST /flavors/%s/os-extra_specs' % flavor_id,
                  self._compute.create_flavor_extra_specs, flavor_id,
                  extra_specs)
        for project_id in projects:
            self._sdk('POST /flavors/%s/action addTenantAccess' % flavor_id,
                      self._compute.flavor_add_tenant_access, flavor_id,
                      project_id, ok=(409,))

    def flavor_projects(self, flavor_id):
        """List the projects a private flavor is shared with."""
        found = self._sdk('GET /flavors/%s/os-flavor-access' % flavor_id,
                          self._compute.get_flavor_access, flavor_id,
                          ok=(404,))
        return [access['tenant_id'] for access in found or []]

    def delete_flavor(self, flavor_id):
        """Delete a flavor (one that is gone is fine)."""
        self._sdk('DELETE /flavors/%s' % flavor_id,
                  self._compute.delete_flavor, flavor_id)

    def ensure_server_group(self, name, policy, auth=None):
        """Return the id of the server group ``name``, made once.

        :param auth: the keystoneauth1 plugin of the user in whose
            project the group is (the request's caller); by default the
            service user's.
        """
        def find():
            found = self._call('GET', '/os-server-groups', auth=auth)
            return next((group['id'] for group in found['server_groups']
                         if group['name'] == name), None)

        return self._ensure(find, lambda: self._call(
            'POST', '/os-server-groups', once=True, json={
                'server_group': {'name': name, 'policy': policy}},
            auth=auth)['server_group']['id'])

    def delete_server_group(self, group_id):
        """Delete a server group (one that is gone is fine)."""
        self._sdk('DELETE /os-server-groups/%s' % group_id,
                  self._compute.delete_server_group, group_id)

    def set_reserved_flavor(self, server_id, lease_id, flavor_id):
        """Give a server that waits for ``lease_id`` another flavor."""
        self._call('POST', '/servers/%s/action' % server_id,
                   json={FLAVOR_ACTION: {'lease_id': lease_id,
                                         'flavor_id': flavor_id}})

    def end_server(self, server_id, on_end, timeout=900, interval=1):
        """End a server as ``on_end`` says (a server that is gone is fine).

        ``snapshot_delete`` makes one image of the server (named
        ``<server name>-snapshot``; Nova shares an admin's snapshot with
        the server's project) and deletes the server once it is active.
        """
        if on_end == 'shelve':
            if self._act(server_id, 'shelve', SHELVED, SHELVING):
                self._wait_for_shelved(server_id, timeout, interval)
            return
        server = self._server(server_id)
        if server is None:
            return
        if on_end == 'snapshot_delete':
            self.snapshot_server(server, timeout, interval)
        self.delete_servers([server_id], timeout, interval)

    def snapshot(self, server_id, timeout=900, interval=1):
        """Make one active image of a server; return its id (None: gone)."""
        server = self._server(server_id)
        return server and self.snapshot_server(server, timeout, interval)

    def snapshot_server(self, server, timeout=900, interval=1):
        """Make one active image of ``server`` (an earlier try's, if any).

        ``server`` is the server's view; the image is named ``<server
        name>-snapshot``. Return the image's id.
        """
        def find():
            images = self._images.find(instance_uuid=server['id'])
            return images[0]['id'] if images else None

        image_id = self._ensure(find, lambda: self._call(
            'POST', '/servers/%s/action' % server['id'], once=True,
            json={'createImage': {'name': server['name'] + '-snapshot'}}
        )['image_id'])
        self._images.wait_active(image_id, timeout, interval)
        return image_id

    def _ensure(self, find, create):
        """Return what ``find()`` finds, else what ``create()`` makes.

        A create that may have been carried out (or that Nova refused as
        busy) is tried again with backoff, after looking again.
        """
        def attempt():
            found = find()
            return create() if found is None else found

        return service_user.retrying(
            self._adapter, attempt,
            (service_user.Unanswered, service_user.Busy))

    @functools.cached_property
    def _images(self):
        return image_client.ImageClient(self._conf, self._transport)

    def _server(self, server_id):
        """Get openstacksdk's server ``server_id``, or None if it is gone."""
        return self._sdk('GET /servers/%s' % server_id,
                         self._compute.get_server, server_id, ok=(404,))

    def _wait_for_server(self, server_id, status, timeout, interval):
        """Wait until the server is in ``status`` (openstacksdk's wait).

        :raises PluginError: it went to ERROR, or time is up.
        """
        if deferral.active():
            self._defer_server(server_id, (status,), timeout)
            return
        server = sdk_server.Server.new(id=server_id)
        try:
            self._sdk('GET /servers/%s' % server_id,
                      self._compute.wait_for_server, server, status=status,
                      interval=interval, wait=timeout)
        except sdk_exc.ResourceFailure:
            raise exceptions.PluginError('Server %s went to ERROR: %s' % (
                server_id, (server.fault or {}).get('message')))
        except sdk_exc.ResourceTimeout:
            raise exceptions.PluginError(_late(server_id, (status,),
                                               timeout, server.status))

    def _defer_server(self, server_id, statuses, timeout):
        """Look at the server once: wait (deferred) unless in ``statuses``.

        :raises PluginError: it is in ERROR or gone.
        """
        server = self._server(server_id)
        if server is None:
            raise exceptions.PluginError('Server %s is gone.' % server_id)
        if server.status == 'ERROR':
            raise exceptions.PluginError('Server %s went to ERROR: %s' % (
                server_id, (server.fault or {}).get('message')))
        if server.status not in statuses:
            raise deferral.Waiting([deferral.Wait(
                deferral.SERVER, server_id, until=statuses + ('ERROR',),
                since=server.updated_at)], timeout)

    def _wait_for_shelved(self, server_id, timeout, interval):
        """Wait until the server is SHELVED or SHELVED_OFFLOADED.

        openstacksdk's waits wait for one status: Nova offloads a server
        that it shelves at once when ``shelved_offload_time`` is 0.
        """
        if deferral.active():
            self._defer_server(server_id, SHELVED, timeout)
            return

        def ready(server):
            if server['status'] == 'ERROR':
                raise exceptions.PluginError(
                    'Server %s went to ERROR: %s' % (
                        server_id, server.get('fault', {}).get('message')))
            return server['status'] in SHELVED

        polling.wait_for(
            lambda: self._get('/servers/%s' % server_id)['server'], ready,
            timeout, interval,
            lambda server: _late(server_id, SHELVED, timeout,
                                 server['status']))

    def compute_services(self):
        """List the nova-compute services, as ``GET /os-services`` shows them.

        ``[{'host', 'state', 'status', 'disabled_reason'}]``: ``state``
        is ``up`` or ``down``, ``status`` ``enabled`` or ``disabled``.
        """
        return [{key: service[key] for key in ('host', 'state', 'status',
                                               'disabled_reason')}
                for service in self._services()]

    def compute_service(self, service_host):
        """Return a host's nova-compute service view, or None if Nova has none.

        As ``GET /os-services`` shows it: ``id``, ``state``, ``status``,
        ``disabled_reason``...
        """
        services = self._services(host=service_host)
        return services[0] if services else None

    def set_compute_service(self, service_host, enabled, reason=None):
        """Enable a host's nova-compute service, or disable it.

        ``reason`` is the ``disabled_reason`` of a disable. Idempotent;
        since microversion 2.53 the service is named by its id.
        """
        service = self.compute_service(service_host)
        if service is None:
            raise exceptions.NotFound(kind='nova-compute service',
                                      id=service_host)
        body = {'status': 'enabled'} if enabled else {
            'status': 'disabled', 'disabled_reason': reason}
        self._sdk('PUT /os-services/%s' % service['id'],
                  self._compute.update_service, service['id'], **body)

    def find_aggregate(self, name):
        """Return the aggregate called ``name`` (Nova's view), or None."""
        aggregates = self._sdk('GET /os-aggregates', lambda: list(
            self._compute.aggregates()))
        for aggregate in aggregates:
            if aggregate.name == name:
                return _view(aggregate)
        return None

    def _services(self, **query):
        """List the nova-compute services' views (of ``host=...``)."""
        return [_view(service) for service in self._sdk(
            'GET /os-services', lambda: list(self._compute.services(
                binary='nova-compute', **query)))]

    def _get(self, path, params=None, missing_ok=False):
        return self._call('GET', path, params=params,
                          ok=(404,) if missing_ok else ())

    def _call(self, method, path, ok=(), **kwargs):
        return service_user.call(self._compute, SERVICE, method, path, ok,
                                 **kwargs)

    def _sdk(self, request, function, *args, **kwargs):
        return service_user.sdk_call(SERVICE, request, function, *args,
                                     **kwargs)


def every_server(get, params):
    """Return the servers of every page of a server listing.

    :param get: ``get(params)`` returns the body of
        ``GET /servers/detail`` with those query parameters.
    :param params: the query of the first page; the next pages add the
        ``marker``, as Nova cuts a long list (``[api] max_limit``).
    """
    servers = []
    while True:
        body = get(params)
        servers.extend(body['servers'])
        # Nova links the next page only when this one is full.
        if not body['servers'] or not body.get('servers_links'):
            return servers
        params = dict(params, marker=body['servers'][-1]['id'])


def _view(resource):
    """Show an openstacksdk resource as Nova shows it (Nova's names)."""
    return resource.to_dict(computed=False, original_names=True)


def _aggregate_action(aggregate, action):
    """Name an aggregate action as errors name it."""
    return 'POST /os-aggregates/%s/action %s' % (aggregate['id'], action)


def _late(server_id, statuses, timeout, status):
    """Give the reason of a server that was not in ``statuses`` in time."""
    return 'Server %s was not %s within %d s (status %s).' % (
        server_id, ' or '.join(statuses), timeout, status)
