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

"""A real Cinder API for tests: all of Cinder in a child process.

As :mod:`tests.neutron_service` for Neutron: cinder-api (Cinder's v3 API
with its standard extensions), cinder-scheduler and one cinder-volume
(backend :data:`BACKEND` of host :data:`HOST`) over oslo.messaging's
in-memory transport, Cinder's database an SQLite file, run by
:mod:`tests.cinder_service_main` once per test process and shared by its
tests. The volume driver is the sandbox's (Cinder's fake driver) but for
the pools it reports: :data:`POOLS`, with their sizes, so that the
scheduler has the pools :func:`pool_name` names.

There is no Keystone: as Neutron's, cinder-api takes the headers of
:class:`tests.nova_auth.HeaderAuth` as Keystone's
(:class:`tests.neutron_service.HeaderContext`, then Cinder's own
keystone context), and Cinder's policies apply: an ``admin`` role is an
admin. Any client of ours with ``auth_type = reservation_test_headers``
finds Cinder at ``nova_auth.ENDPOINTS['volumev3']`` while a
:class:`CinderFixture` is in use. Use::

    from tests import cinder_service

    class MyTest(base.DBTestCase):
        def setUp(self):
            super().setUp()
            self.cinder = self.useFixture(cinder_service.CinderFixture())

        def test_...(self):
            name = cinder_service.pool_name('gold')   # storage-1@ssd#gold
"""

import socket
import sys

import fixtures
from keystoneauth1 import session as ks_session
import openstack

from reservation_ext.sandbox import config
from tests import child_services
from tests import nova_auth

CONF_FILE = 'cinder.conf'
PASTE_FILE = 'api-paste.ini'
HOST = 'storage-1'
BACKEND = 'ssd'
# The pools the volume service reports, with their total GB.
POOLS = {'gold': 1000, 'silver': 4000}
DRIVER = 'tests.cinder_service_main.PoolsDriver'
# The child imports Cinder's package first: it monkey patches the
# process with eventlet before anything else is imported, and the tests
# package then leaves Nova's patching out.
CHILD_MAIN = ('import reservation_ext.sandbox.cinder; '
              'from tests import cinder_service_main; '
              'cinder_service_main.main()')
PASTE = """[composite:osapi_volume]
use = call:cinder.api:root_app_factory
/v3: apiv3_with_headers

[pipeline:apiv3_with_headers]
pipeline = request_id faultwrap headers keystonecontext apiv3

[filter:request_id]
paste.filter_factory = cinder.api.middleware.request_id:RequestId.factory

[filter:faultwrap]
paste.filter_factory = cinder.api.middleware.fault:FaultWrapper.factory

[filter:headers]
paste.filter_factory = tests.neutron_service:HeaderContext.factory

[filter:keystonecontext]
paste.filter_factory = cinder.api.middleware.auth:CinderKeystoneContext.factory

[app:apiv3]
paste.app_factory = cinder.api.v3.router:APIRouter.factory
"""


def pool_name(pool):
    """The name Cinder reports for one of :data:`POOLS`."""
    return '%s@%s#%s' % (HOST, BACKEND, pool)


def _sections(state_dir):
    state = state_dir + '/cinder'
    return {
        'DEFAULT': [
            ('host', HOST), ('my_ip', config.HOST), ('state_path', state),
            ('transport_url', 'fake://'),
            ('api_paste_config', state_dir + '/' + PASTE_FILE),
            ('osapi_volume_extension',
             'cinder.api.contrib.standard_extensions'),
            ('enabled_backends', BACKEND)],
        BACKEND: [('volume_driver', DRIVER),
                  ('volume_backend_name', BACKEND)],
        'database': [('connection',
                      'sqlite:///%s/cinder.sqlite' % state_dir)],
        'oslo_concurrency': [('lock_path', state + '/locks')],
    }


class CinderService:
    """The Cinder child of this test process (see the module doc)."""

    def __init__(self):
        self.state_dir = child_services.state_dir('cinder')
        config.write_file(self.state_dir + '/' + CONF_FILE,
                          config.ini_text(_sections(self.state_dir)))
        config.write_file(self.state_dir + '/' + PASTE_FILE, PASTE)
        sock = socket.socket()
        sock.bind((config.HOST, 0))
        sock.listen(128)
        self.url = 'http://%s:%d/v3' % (config.HOST, sock.getsockname()[1])
        self.child = child_services.Child('cinder', [
            sys.executable, '-c', CHILD_MAIN,
            '--state-dir', self.state_dir], sock, self.state_dir)

    def connection(self, project='admin', roles='admin,member,reader'):
        """An openstacksdk connection as a user of ``project``."""
        return openstack.connection.Connection(
            session=ks_session.Session(auth=nova_auth.HeaderAuth(
                'user-' + project, project, roles)),
            block_storage_endpoint_override=self.url,
            block_storage_api_version='3')


_SERVICE = []


def service():
    """The test process's Cinder, started at the first call."""
    if not _SERVICE:
        _SERVICE.append(CinderService())
    return _SERVICE[0]


class CinderFixture(fixtures.Fixture):
    """The shared Cinder, in ``nova_auth.ENDPOINTS`` while in use."""

    def _setUp(self):
        self.service = service()
        self.url = self.service.url
        endpoints = nova_auth.ENDPOINTS
        previous = endpoints.get('volumev3')
        endpoints['volumev3'] = self.url
        self.addCleanup(_restore, endpoints, previous)

    def connection(self, project='admin', roles='admin,member,reader'):
        """See :meth:`CinderService.connection`."""
        return self.service.connection(project, roles)


def _restore(endpoints, previous):
    if previous is None:
        endpoints.pop('volumev3', None)
    else:
        endpoints['volumev3'] = previous
