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

"""A real Neutron API for tests: Neutron 29, in a child process.

The sandbox's Neutron child (:mod:`reservation_ext.sandbox.neutron`:
``neutron.wsgi.api:application``, ML2 with the sandbox's mechanism
driver, the ``router`` service plugin, SQLite, ``fake://`` transport, no
notifications), started once per test process on a free port and shared
by its tests, with an external flat network ``public`` (subnet
``172.24.4.0/24``, gateway ``.1``, allocation pool ``.100``-``.199``:
:mod:`reservation_ext.sandbox.neutron.topology`), owned by the project
``service``, which the child makes before it serves
(``--public-project``).

There is no Keystone: :class:`HeaderContext`, a paste filter in front of
Neutron's context middleware, takes the headers of
:class:`tests.nova_auth.HeaderAuth` (``X-Auth-User``,
``X-Auth-Project-Id``, ``X-Roles``) as Keystone's ``X-User-Id``,
``X-Project-Id``, ``X-Roles``; Neutron's own policies then apply (an
``admin`` role is an admin). Use::

    from tests import neutron_service

    class MyTest(nova_base.NovaTestCase):
        def setUp(self):
            super().setUp()
            # After NovaTestCase's setUp, which replaces
            # tests.nova_auth.ENDPOINTS: registers ENDPOINTS['network'].
            self.neutron = self.useFixture(neutron_service.NeutronFixture())

        def test_...(self):
            admin = self.neutron.connection()            # openstacksdk
            member = self.neutron.connection('owner-project', 'member')
            admin.network.create_ip(
                floating_network_id=self.neutron.public_network_id,
                floating_ip_address='172.24.4.10',
                project_id='owner-project')

Any client of ours with ``auth_type = reservation_test_headers``
(:mod:`tests.nova_auth`) finds Neutron at ``ENDPOINTS['network']``. At
its cleanup the fixture deletes what the test made (floating IPs,
routers, ports, subnets, networks, by id), so ``public`` and an empty
Neutron are what each test starts from. The process ends with the test
process.
"""

import os
import socket
import sys

import fixtures
from keystoneauth1 import session as ks_session
import openstack
from oslo_middleware import base as middleware_base
import webob.dec

from reservation_ext.sandbox import config
from reservation_ext.sandbox.neutron import settings
from reservation_ext.sandbox.neutron import topology
from tests import child_services
from tests import nova_auth

SERVICE_PROJECT = 'service'
HEADER_AUTH = ('headers', 'tests.neutron_service:HeaderContext.factory')


class HeaderContext(middleware_base.ConfigurableMiddleware):
    """Keystone's identity headers from :class:`nova_auth.HeaderAuth`'s."""

    @webob.dec.wsgify
    def __call__(self, req):
        for theirs, keystones in (('X-Auth-User', 'X-User-Id'),
                                  ('X-Auth-Project-Id', 'X-Project-Id')):
            if theirs in req.headers and keystones not in req.headers:
                req.headers[keystones] = req.headers[theirs]
        return self.application


class NeutronService:
    """The Neutron child of this test process (see the module doc)."""

    def __init__(self):
        self.state_dir = child_services.state_dir('neutron')
        os.makedirs(os.path.join(self.state_dir, 'neutron', 'locks'))
        config.write_file(
            os.path.join(self.state_dir, settings.CONF_FILE),
            config.ini_text(settings.sections(
                self.state_dir,
                'sqlite:///' + os.path.join(self.state_dir,
                                            'neutron.sqlite'))))
        config.write_file(os.path.join(self.state_dir, settings.PASTE_FILE),
                          settings.paste_text(HEADER_AUTH))
        sock = socket.socket()
        sock.bind((config.HOST, 0))
        sock.listen(128)
        self.url = 'http://%s:%d' % (config.HOST, sock.getsockname()[1])
        self.child = child_services.Child('neutron', [
            sys.executable, '-m', 'reservation_ext.sandbox.neutron',
            '--state-dir', self.state_dir,
            '--public-project', SERVICE_PROJECT], sock, self.state_dir)
        public = self.connection().network.find_network(
            topology.PUBLIC, ignore_missing=False)
        self.public_network_id = public.id
        [self.public_subnet_id] = public.subnet_ids

    def connection(self, project='admin', roles='admin,member,reader',
                   user=None):
        """An openstacksdk connection as ``user`` of ``project``."""
        auth = nova_auth.HeaderAuth(user or 'user-' + project, project,
                                    roles)
        return openstack.connection.Connection(
            session=ks_session.Session(auth=auth),
            network_endpoint_override=self.url)


_SERVICE = []


def service():
    """The test process's Neutron, started at the first call."""
    if not _SERVICE:
        _SERVICE.append(NeutronService())
    return _SERVICE[0]


class NeutronFixture(fixtures.Fixture):
    """The shared Neutron, in ``nova_auth.ENDPOINTS``, cleaned after use."""

    def _setUp(self):
        self.service = service()
        self.url = self.service.url
        self.public_network_id = self.service.public_network_id
        self.public_subnet_id = self.service.public_subnet_id
        endpoints = nova_auth.ENDPOINTS
        previous = endpoints.get('network')
        endpoints['network'] = self.url
        self.addCleanup(_restore, endpoints, 'network', previous)
        admin = self.connection()
        self._before = _inventory(admin)
        self.addCleanup(self._delete_new, admin)

    def connection(self, project='admin', roles='admin,member,reader',
                   user=None):
        """See :meth:`NeutronService.connection`."""
        return self.service.connection(project, roles, user)

    def _delete_new(self, admin):
        new = {kind: ids - self._before[kind]
               for kind, ids in _inventory(admin).items()}
        net = admin.network
        for ip_id in new['ips']:
            net.delete_ip(ip_id, ignore_missing=True)
        for router_id in new['routers']:
            router = net.get_router(router_id)
            for port in net.ports(device_id=router_id,
                                  device_owner='network:router_interface'):
                net.remove_interface_from_router(router, port_id=port.id)
            net.delete_router(router_id, ignore_missing=True)
        for port_id in new['ports']:
            net.delete_port(port_id, ignore_missing=True)
        for network_id in new['networks']:
            net.delete_network(network_id, ignore_missing=True)


def _inventory(admin):
    net = admin.network
    return {'ips': {ip.id for ip in net.ips()},
            'routers': {router.id for router in net.routers()},
            'ports': {port.id for port in net.ports()},
            'networks': {network.id for network in net.networks()}}


def _restore(mapping, key, previous):
    if previous is None:
        mapping.pop(key, None)
    else:
        mapping[key] = previous
