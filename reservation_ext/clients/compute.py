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
and adapter options) makes them, found through the catalog. Every call is
idempotent, so that an engine may repeat an action another engine left
half-done: adding a host that is already in an aggregate, removing one
that is not, or deleting what is gone, succeeds.

Failures are retried as :mod:`.service_user` says. Two creates are not
idempotent (Nova gives a server group or a snapshot image a new id each
time): after one that may have been carried out, the group or image is
looked for by its name or server before it is asked for again. Nova
answers 409 to an action on a server busy with another one: the server
is read again, and the action asked again with backoff unless the
server has reached (or is on its way to) what the action wants.
"""

import functools

from reservation_ext.clients import image as image_client
from reservation_ext.clients import polling
from reservation_ext.clients import service_user
from reservation_ext import exceptions

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
FLAVOR_ACTION = 'os-reservation-flavor'
OFFLOADED = 'SHELVED_OFFLOADED'
SHELVED = ('SHELVED', OFFLOADED)
# Task states of a server on its way to SHELVED, and to OFFLOADED.
SHELVING = ('shelving', 'shelving_image_pending_upload',
            'shelving_image_uploading')
OFFLOADING = ('shelving_offloading',)
TASK_STATE = 'OS-EXT-STS:task_state'


class NovaClient:
    """Compute API calls of the reservation service user.

    :param transport: the ``requests.Session`` that sends the requests
        (see :func:`.service_user.adapter`).
    """

    def __init__(self, conf, transport=None):
        self._conf = conf
        self._transport = transport
        self._adapter = service_user.adapter(
            conf, 'compute', transport, default_microversion=MICROVERSION)

    def find_hypervisor(self, name):
        """The hypervisor whose id, hostname or service host is ``name``.

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
        """The availability zone of a compute service host, or None."""
        zones = self._get('/os-availability-zone/detail')
        for zone in zones['availabilityZoneInfo']:
            if service_host in (zone.get('hosts') or {}):
                return zone['zoneName']
        return None

    def ensure_aggregate(self, name, metadata=None):
        """The aggregate called ``name``, created when missing."""
        aggregate = self.find_aggregate(name)
        if aggregate is None:
            created = self._call('POST', '/os-aggregates',
                                 json={'aggregate': {'name': name}},
                                 ok=(409,))
            # 409: another engine created it meanwhile. The create answer
            # shows neither hosts nor metadata.
            aggregate = (dict(created['aggregate'], hosts=[], metadata={})
                         if created else self.find_aggregate(name))
        if metadata and any(aggregate['metadata'].get(key) != value
                            for key, value in metadata.items()):
            aggregate = self._action(aggregate['id'], 'set_metadata',
                                     {'metadata': metadata})
        return aggregate

    def add_to_aggregate(self, aggregate, service_host, missing_ok=False):
        """Put a host into an aggregate (a member already is fine).

        :param missing_ok: a host Nova does not know (any more) is fine.
        """
        if service_host not in aggregate['hosts']:
            self._action(aggregate['id'], 'add_host',
                         {'host': service_host},
                         ok=(409, 404) if missing_ok else (409,))

    def remove_from_aggregate(self, aggregate, service_host):
        """Take a host out of an aggregate (a non-member is fine)."""
        if service_host in aggregate['hosts']:
            self._action(aggregate['id'], 'remove_host',
                         {'host': service_host}, ok=(404, 409))

    def delete_aggregate(self, name):
        """Delete the aggregate called ``name`` if it exists."""
        aggregate = self.find_aggregate(name)
        if aggregate is None:
            return
        for host in aggregate['hosts']:
            self.remove_from_aggregate(aggregate, host)
        self._call('DELETE', '/os-aggregates/%s' % aggregate['id'],
                   ok=(404,))

    def servers_on(self, service_host):
        """The servers of every project on a compute host."""
        found = self._get('/servers/detail',
                          params={'all_tenants': 1, 'host': service_host})
        return found['servers']

    def servers_with_hints_on(self, service_host):
        """The servers on a host, with flavor extra specs and hints."""
        return self._call('GET', '/servers/detail',
                          params={'all_tenants': 1, 'host': service_host},
                          microversion=HINTS_MICROVERSION)['servers']

    def shelve_offload(self, server_id, timeout=300, interval=1):
        """Shelve a server and offload it: it keeps no compute resources.

        Waits until it is SHELVED_OFFLOADED (a server that is gone is
        fine).
        """
        if not self._act(server_id, 'shelve', SHELVED, SHELVING):
            return
        self._wait_for_server(server_id, SHELVED, timeout, interval)
        self._act(server_id, 'shelveOffload', (OFFLOADED,), OFFLOADING)
        self._wait_for_server(server_id, (OFFLOADED,), timeout, interval)

    def _act(self, server_id, action, statuses, task_states):
        """Ask for a server action unless it is done or under way.

        Done: the server is in one of ``statuses``; under way: in one of
        ``task_states``. A 409 (the server is busy) is tried again.
        Return False when the server is gone.
        """
        def attempt():
            found = self._get('/servers/%s' % server_id, missing_ok=True)
            if found is None:
                return False
            server = found['server']
            if server['status'] not in statuses and (
                    server.get(TASK_STATE) not in task_states):
                self._call('POST', '/servers/%s/action' % server_id,
                           json={action: None})
            return True

        return service_user.retrying(self._adapter, attempt,
                                     service_user.Busy)

    def delete_servers(self, server_ids, timeout=300, interval=1):
        """Delete servers and wait until they are gone."""
        for server_id in server_ids:
            self._call('DELETE', '/servers/%s' % server_id, ok=(404,))
        pending = list(server_ids)

        def still_there():
            pending[:] = [server_id for server_id in pending
                          if self._get('/servers/%s' % server_id,
                                       missing_ok=True)]
            return pending

        polling.wait_for(
            still_there, lambda left: not left, timeout, interval,
            lambda left: 'Servers %s were not deleted within %d s.'
            % (', '.join(left), timeout))

    def start_server(self, server_id, lease_id, timeout=600, interval=1):
        """Build a server reserved for ``lease_id``; wait until ACTIVE."""
        self._call('POST', '/servers/%s/action' % server_id,
                   json={START_ACTION: {'lease_id': lease_id}})
        self._wait_for_server(server_id, ('ACTIVE',), timeout, interval)

    def flavor(self, flavor_id):
        """The flavor ``flavor_id`` (Nova's view), or None."""
        found = self._get('/flavors/%s' % flavor_id, missing_ok=True)
        return found and found['flavor']

    def ensure_private_flavor(self, flavor, extra_specs, projects):
        """The private flavor ``flavor`` (Nova's create body), made once.

        It gets ``extra_specs`` and access for ``projects``; what exists
        already is fine, so that an engine may redo a start.
        """
        flavor_id = flavor['id']
        if self.flavor(flavor_id) is None:
            self._call('POST', '/flavors', ok=(409,), json={'flavor': dict(
                flavor, **{'os-flavor-access:is_public': False})})
        self._call('POST', '/flavors/%s/os-extra_specs' % flavor_id,
                   json={'extra_specs': extra_specs})
        for project_id in projects:
            self._call('POST', '/flavors/%s/action' % flavor_id, ok=(409,),
                       json={'addTenantAccess': {'tenant': project_id}})

    def flavor_projects(self, flavor_id):
        """The projects a private flavor is shared with."""
        found = self._get('/flavors/%s/os-flavor-access' % flavor_id,
                          missing_ok=True)
        return [access['tenant_id']
                for access in (found or {}).get('flavor_access', [])]

    def delete_flavor(self, flavor_id):
        """Delete a flavor (one that is gone is fine)."""
        self._call('DELETE', '/flavors/%s' % flavor_id, ok=(404,))

    def ensure_server_group(self, name, policy):
        """The id of the service user's server group ``name``, made once."""
        def find():
            for group in self._get('/os-server-groups')['server_groups']:
                if group['name'] == name:
                    return group['id']
            return None

        return self._ensure(find, lambda: self._call(
            'POST', '/os-server-groups', once=True, json={
                'server_group': {'name': name, 'policy': policy}})[
                    'server_group']['id'])

    def delete_server_group(self, group_id):
        """Delete a server group (one that is gone is fine)."""
        self._call('DELETE', '/os-server-groups/%s' % group_id, ok=(404,))

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
                self._wait_for_server(server_id, SHELVED, timeout, interval)
            return
        server = self._get('/servers/%s' % server_id, missing_ok=True)
        if server is None:
            return
        if on_end == 'snapshot_delete':
            self.snapshot_server(server['server'], timeout, interval)
        self.delete_servers([server_id], timeout, interval)

    def snapshot_server(self, server, timeout=900, interval=1):
        """One active image of ``server`` (an earlier try's, if any).

        ``server`` is the server's view; the image is named ``<server
        name>-snapshot``.
        """
        def find():
            images = self._images.find(instance_uuid=server['id'])
            return images[0]['id'] if images else None

        image_id = self._ensure(find, lambda: self._call(
            'POST', '/servers/%s/action' % server['id'], once=True,
            json={'createImage': {'name': server['name'] + '-snapshot'}}
        )['image_id'])
        self._images.wait_active(image_id, timeout, interval)

    def _ensure(self, find, create):
        """What ``find()`` finds, else what ``create()`` makes.

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

    def _wait_for_server(self, server_id, statuses, timeout, interval):
        def ready(server):
            if server['status'] == 'ERROR':
                raise exceptions.PluginError(
                    'Server %s went to ERROR: %s' % (
                        server_id, server.get('fault', {}).get('message')))
            return server['status'] in statuses

        polling.wait_for(
            lambda: self._get('/servers/%s' % server_id)['server'], ready,
            timeout, interval,
            lambda server: 'Server %s was not %s within %d s (status %s).'
            % (server_id, ' or '.join(statuses), timeout, server['status']))

    def compute_services(self):
        """The nova-compute services, as ``GET /os-services`` shows them.

        ``[{'host', 'state', 'status', 'disabled_reason'}]``: ``state``
        is ``up`` or ``down``, ``status`` ``enabled`` or ``disabled``.
        """
        services = self._get('/os-services',
                             params={'binary': 'nova-compute'})['services']
        return [{key: service[key] for key in ('host', 'state', 'status',
                                               'disabled_reason')}
                for service in services]

    def compute_service(self, service_host):
        """A host's nova-compute service view, or None if Nova has none.

        As ``GET /os-services`` shows it: ``id``, ``state``, ``status``,
        ``disabled_reason``...
        """
        services = self._get('/os-services', params={
            'binary': 'nova-compute', 'host': service_host})['services']
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
        self._call('PUT', '/os-services/%s' % service['id'], json=body)

    def find_aggregate(self, name):
        """The aggregate called ``name``, or None."""
        for aggregate in self._get('/os-aggregates')['aggregates']:
            if aggregate['name'] == name:
                return aggregate
        return None

    def _action(self, aggregate_id, action, body, ok=()):
        answer = self._call('POST', '/os-aggregates/%s/action' % aggregate_id,
                            json={action: body}, ok=ok)
        return answer['aggregate'] if answer else None

    def _get(self, path, params=None, missing_ok=False):
        return self._call('GET', path, params=params,
                          ok=(404,) if missing_ok else ())

    def _call(self, method, path, ok=(), **kwargs):
        return service_user.call(self._adapter, 'Nova', method, path, ok,
                                 **kwargs)
