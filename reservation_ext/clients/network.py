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

"""The calls reservation-ext makes to Neutron's networking API.

The service user of ``[reservation_client]`` makes them through
openstacksdk's network proxy (:func:`.service_user.catalog_proxy`), found
through the catalog (``network``), as for Nova (:mod:`.compute`).

Every action is idempotent, so that an engine may repeat one another
engine left half-done. A reserved floating IP is created with its exact
address and tagged with its reservation; creating it again finds it by
address (a create whose answer was lost, or one made before its tags)
and only tags it, in the lease's project; deleting one that is gone
succeeds. A reserved network segment's provider network is found by its
segment, its subnet and router by their description, which names the
reservation; the end removes everything tagged with the reservation.
Failures raise :class:`~reservation_ext.exceptions.PluginError` with
what Neutron said.
"""

import functools
import ipaddress

from reservation_ext.clients import service_user
from reservation_ext import exceptions

SERVICE = 'Neutron'
# Tags of a reserved floating IP: Blazar's, and its reservation's.
OWNER_TAG = 'blazar'
RESERVATION_TAG = 'reservation:%s'


class NeutronClient:
    """Networking API calls of the reservation service user.

    Nothing is sent before the first call: the proxy is made then.

    :param transport: the ``requests.Session`` that sends the requests
        (see :func:`.service_user.adapter`).
    """

    def __init__(self, conf, transport=None):
        self._adapter = service_user.adapter(conf, 'network', transport)

    @functools.cached_property
    def _network(self):
        return service_user.catalog_proxy(self._adapter, SERVICE, None)

    def _call(self, request, function, *args, **kwargs):
        return service_user.sdk_call(SERVICE, request, function, *args,
                                     **kwargs)

    # Networks and subnets.

    def find_network(self, network_id):
        """Return a network's view (a dict), or None if Neutron has none."""
        found = self._call('GET /networks/%s' % network_id,
                           self._network.get_network, network_id, ok=(404,))
        return found and found.to_dict(computed=False)

    def find_network_id(self, name_or_id):
        """Return the id of a network named so (or of that id), or None."""
        found = self._call('GET /networks?name=%s' % name_or_id,
                           self._network.find_network, name_or_id,
                           ignore_missing=True)
        return found and found.id

    def subnets_of(self, network_id):
        """Return the views of a network's subnets."""
        return [subnet.to_dict(computed=False) for subnet in self._call(
            'GET /subnets', lambda: list(self._network.subnets(
                network_id=network_id)))]

    # Floating IPs.

    def ensure_floating_ip(self, network_id, subnet_id, address, project_id,
                           reservation_id):
        """Make the reserved floating IP exist in a project, tagged.

        :returns: the floating IP's id.
        :raises PluginError: another project has the address.
        """
        found = self._floating_ip_at(network_id, address)
        if found is None:
            self._call('POST /floatingips', self._network.create_ip,
                       floating_network_id=network_id, subnet_id=subnet_id,
                       floating_ip_address=address, project_id=project_id,
                       ok=(409,))
            # A 409: another create of ours (a retried request, another
            # engine) made it first; it is found now.
            found = self._floating_ip_at(network_id, address)
        if found is None or found.project_id != project_id:
            raise exceptions.PluginError(
                'Floating IP %s of network %s is in use by another '
                'project.' % (address, network_id))
        tags = [OWNER_TAG, RESERVATION_TAG % reservation_id]
        if not set(tags) <= set(found.tags or ()):
            self._call('PUT /floatingips/%s/tags' % found.id,
                       self._network.set_tags, found,
                       sorted(set(tags) | set(found.tags or ())))
        return found.id

    def reserved_floating_ips(self, reservation_id):
        """Return the views of the floating IPs tagged with a reservation."""
        return [ip.to_dict(computed=False) for ip in self._call(
            'GET /floatingips', lambda: list(self._network.ips(
                tags=RESERVATION_TAG % reservation_id)))]

    def delete_reserved_floating_ips(self, reservation_id, addresses=None):
        """Disassociate and delete a reservation's floating IPs.

        The port association is cleared first, as Blazar does: deleting an
        associated floating IP would also touch its port.

        :param addresses: only those of these addresses (by default all).
        :returns: the addresses deleted.
        """
        deleted = []
        for ip in self.reserved_floating_ips(reservation_id):
            if addresses is not None and \
                    ip['floating_ip_address'] not in addresses:
                continue
            if ip['port_id']:
                self._call('PUT /floatingips/%s' % ip['id'],
                           self._network.update_ip, ip['id'], port_id=None,
                           ok=(404,))
            self._call('DELETE /floatingips/%s' % ip['id'],
                       self._network.delete_ip, ip['id'],
                       ignore_missing=True)
            deleted.append(ip['floating_ip_address'])
        return sorted(deleted)

    def _floating_ip_at(self, network_id, address):
        found = self._call('GET /floatingips', lambda: list(
            self._network.ips(floating_network_id=network_id,
                              floating_ip_address=address)))
        return found[0] if found else None

    # Provider networks of reserved network segments.

    def ensure_segment_network(self, segment, name, description, project_id,
                               reservation_id):
        """Make the provider network of a segment exist in a project.

        Found by its segment (Neutron has one network per segment): a
        network of ours tagged with the reservation, or one named
        ``name`` in the project and tagged with no reservation (a create
        whose tags were not set yet), which is tagged now.

        :param segment: ``network_type``, ``physical_network``,
            ``segment_id``.
        :returns: the network's id.
        :raises PluginError: another network has the segment.
        """
        found = self._segment_network(segment)
        if found is None:
            attrs = {'name': name, 'project_id': project_id,
                     'provider_network_type': segment['network_type'],
                     'provider_segmentation_id': segment['segment_id']}
            if segment['physical_network']:
                attrs['provider_physical_network'] = segment[
                    'physical_network']
            if description:
                attrs['description'] = description
            # A 409: the segment is taken (by a create of ours whose
            # answer was lost, or by another network): looked at below.
            self._call('POST /networks', self._network.create_network,
                       ok=(409,), **attrs)
            found = self._segment_network(segment)
        tag = RESERVATION_TAG % reservation_id
        tags = set(found.tags or ()) if found is not None else set()
        if found is None or found.project_id != project_id or (
                tag not in tags and (found.name != name or any(
                    other.startswith('reservation:') for other in tags))):
            raise exceptions.PluginError(
                'Network segment %(network_type)s %(segment_id)s is used '
                'by another network.' % segment)
        self._tag(found, tags, 'networks', reservation_id)
        return found.id

    def ensure_subnet(self, network_id, cidr, name, project_id,
                      reservation_id):
        """Make the reservation's subnet of ``cidr`` exist on a network.

        Found by its description, which names the reservation (set with
        the create, unlike tags). Returns the subnet's id.
        """
        return self._ensure_described(
            'subnets', reservation_id, functools.partial(
                self._network.create_subnet, network_id=network_id,
                cidr=cidr, ip_version=ipaddress.ip_network(cidr).version,
                name=name, project_id=project_id),
            network_id=network_id).id

    def ensure_router(self, subnet_id, external_network, name, project_id,
                      reservation_id):
        """Make the reservation's router exist, on the subnet and outside.

        Its gateway is on the external network, an interface on the
        subnet.

        :param external_network: the external network's id or name.
        :returns: the router's id.
        :raises PluginError: there is no such external network.
        """
        external = self.find_external_network(external_network)
        if external is None:
            raise exceptions.PluginError(
                'Neutron has no external network %s.' % external_network)
        found = self._ensure_described(
            'routers', reservation_id, functools.partial(
                self._network.create_router, name=name,
                project_id=project_id,
                external_gateway_info={'network_id': external.id}),
            project_id=project_id)
        ports = self._call('GET /ports', lambda: list(self._network.ports(
            device_id=found.id)))
        if not any(ip.get('subnet_id') == subnet_id
                   for port in ports for ip in port.fixed_ips or ()):
            self._call('PUT /routers/%s/add_router_interface' % found.id,
                       self._network.add_interface_to_router, found,
                       subnet_id=subnet_id)
        return found.id

    def delete_reservation_network(self, reservation_id, network_id=None):
        """Remove what a reservation's start made in Neutron.

        The networks tagged with the reservation (and ``network_id``, the
        one it recorded): their router interfaces and ports, the routers
        the reservation made, their subnets, and the networks. What is
        gone already is fine.

        :returns: the ids of the networks deleted.
        """
        tag = RESERVATION_TAG % reservation_id
        networks = {net.id for net in self._call('GET /networks', lambda: list(
            self._network.networks(tags=tag)))}
        if network_id and self.find_network(network_id) is not None:
            networks.add(network_id)
        routers = self._call('GET /routers', lambda: list(
            self._network.routers(tags=tag)))
        for router in routers:
            self._detach_router(router.id)
        for net in sorted(networks):
            self._empty_network(net)
        for router in routers:
            self._call('DELETE /routers/%s' % router.id,
                       self._network.delete_router, router.id,
                       ignore_missing=True)
        for net in sorted(networks):
            for subnet in self.subnets_of(net):
                self._call('DELETE /subnets/%s' % subnet['id'],
                           self._network.delete_subnet, subnet['id'],
                           ignore_missing=True)
            self._call('DELETE /networks/%s' % net,
                       self._network.delete_network, net,
                       ignore_missing=True)
        return sorted(networks)

    def _segment_network(self, segment):
        query = {'provider_network_type': segment['network_type'],
                 'provider_segmentation_id': segment['segment_id']}
        if segment['physical_network']:
            query['provider_physical_network'] = segment['physical_network']
        return next(iter(self._call('GET /networks', lambda: list(
            self._network.networks(**query)))), None)

    def find_external_network(self, name_or_id):
        """Return the external network of that id or name, or None."""
        for query in ({'id': name_or_id}, {'name': name_or_id}):
            found = self._call('GET /networks', lambda: list(
                self._network.networks(is_router_external=True, **query)))
            if found:
                return found[0]
        return None

    def _ensure_described(self, collection, reservation_id, create,
                          **filters):
        """Return the reservation's resource of ``collection``, tagged.

        Found by its description, which names the reservation (set with
        the create, unlike tags); made first if there is none.

        :param create: makes the resource, given its ``description``.
        :param filters: what else the listing that finds it is narrowed by.
        """
        marker = RESERVATION_TAG % reservation_id

        def lookup():
            return next(iter(self._call('GET /%s' % collection, lambda: list(
                getattr(self._network, collection)(
                    description=marker, **filters)))), None)

        found = self._create_once('POST /%s' % collection, lookup,
                                  functools.partial(create,
                                                    description=marker))
        self._tag(found, set(found.tags or ()), collection, reservation_id)
        return found

    def _create_once(self, request, lookup, create):
        """Return what ``lookup`` finds, created first if needed.

        A failed create is looked for again: it may have been carried
        out (its answer lost) or made by another engine meanwhile.
        """
        found = lookup()
        if found is not None:
            return found
        try:
            self._call(request, create)
        except exceptions.PluginError:
            found = lookup()
            if found is None:
                raise
            return found
        return lookup()

    def _tag(self, resource, tags, collection, reservation_id):
        wanted = {OWNER_TAG, RESERVATION_TAG % reservation_id}
        if not wanted <= tags:
            self._call('PUT /%s/%s/tags' % (collection, resource.id),
                       self._network.set_tags, resource,
                       sorted(tags | wanted))

    def _detach_router(self, router_id):
        """Remove every interface of a router the reservation made."""
        for port in self._call('GET /ports', lambda: list(self._network.ports(
                device_id=router_id,
                device_owner='network:router_interface'))):
            self._call('PUT /routers/%s/remove_router_interface' % router_id,
                       self._network.remove_interface_from_router,
                       router_id, port_id=port.id, ok=(404,))

    def _empty_network(self, network_id):
        """Remove the router interfaces and delete the ports of a network.

        Another router's interface is removed, the router stays.
        """
        for port in self._call('GET /ports', lambda: list(self._network.ports(
                network_id=network_id))):
            if port.device_owner == 'network:router_interface':
                self._call('PUT /routers/%s/remove_router_interface'
                           % port.device_id,
                           self._network.remove_interface_from_router,
                           port.device_id, port_id=port.id, ok=(404,))
            else:
                self._call('DELETE /ports/%s' % port.id,
                           self._network.delete_port, port.id,
                           ignore_missing=True)
