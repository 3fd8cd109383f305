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

"""All of Nova in one process, configured by ``DIR/nova.conf``:

- nova-api with the project's api-paste.ini (keystonemiddleware and the
  lease API at ``/reservation``), Placement and the image API
  (:mod:`reservation_ext.sandbox.image_api`), each on its HTTP port;
- nova-conductor, nova-scheduler (with ReservationFilter) and the fake
  compute hosts (nova.virt.fake, sized by
  :func:`reservation_ext.sandbox.config.host_size`), talking over
  oslo.messaging's in-memory transport instead of a message broker;
- Nova's databases as SQLite files: the API database, cell0 and cell1;
- Nova's in-process fake of Glance from its functional tests
  (``nova.tests.fixtures``), in place of that service; Neutron is the
  sandbox's real one (:mod:`reservation_ext.sandbox.neutron`, ``[neutron]``
  of nova.conf).

The services start when the supervisor says go (``--go-fd``), after
Keystone and its catalog; until then the process makes its databases.
"""

import sqlite3

import fixtures
from keystonemiddleware import auth_token
from nova.api.openstack import wsgi_app
from nova.api import wsgi as nova_wsgi
from nova.compute import rpcapi as compute_rpcapi
from nova import config as nova_config
from nova import context
from nova.db import migration
from nova import objects
from nova.objects import host_mapping
from nova import service
from nova.tests import fixtures as nova_fixtures
from nova.virt import fake
from oslo_config import cfg
from oslo_log import log as logging
from oslo_utils import uuidutils

from reservation_ext.sandbox import config
from reservation_ext.sandbox import image_api
from reservation_ext.sandbox.nova import placement
from reservation_ext.sandbox import process
from reservation_ext.sandbox import wsgi_server

CONF = cfg.CONF
LOG = logging.getLogger(__name__)

# Nova's usual flavors: (id, name, vcpus, memory_mb, root_gb).
FLAVORS = (('1', 'm1.tiny', 1, 512, 1),
           ('2', 'm1.small', 1, 2048, 20),
           ('3', 'm1.medium', 2, 4096, 40),
           ('4', 'm1.large', 4, 8192, 80),
           ('5', 'm1.xlarge', 8, 16384, 160))
IMAGE = {'id': config.IMAGE_ID, 'name': config.IMAGE_NAME,
         'status': 'active', 'visibility': 'public', 'protected': False,
         'container_format': 'bare', 'disk_format': 'raw',
         'size': 25165824, 'min_ram': 0, 'min_disk': 0, 'tags': [],
         'properties': {'architecture': 'x86_64'}}


class Fakes(fixtures.Fixture):
    """Nova's fake Glance, and SQLite writes in threads.

    Nova's fixtures patch Nova through the test case they get; this
    fixture stands in for it (``useFixture``, ``stub_out``, ``flags``).
    """

    def _setUp(self):
        # One writer at a time per SQLite database, as in Nova's functional
        # tests under native threads; SQLite would fail concurrent writers
        # with "database is locked".
        self.useFixture(nova_fixtures.DatabaseWriteLock())
        self.glance = self.useFixture(nova_fixtures.GlanceFixture(self))
        self.glance.images.clear()
        self.glance.create(None, dict(IMAGE))

    def stub_out(self, old, new):
        self.useFixture(fixtures.MonkeyPatch(old, new))

    def flags(self, group=None, **overrides):
        for name, value in overrides.items():
            CONF.set_override(name, value, group)


def create_databases(layout):
    """Nova's API database and cells 0 and 1, migrated, with flavors."""
    for name in ('nova_api', 'nova_cell0', 'nova_cell1', 'placement'):
        _use_wal(layout.path(name + '.sqlite'))
    migration.db_sync(database='api')
    ctxt = context.get_admin_context()
    for cell in _cells(ctxt, layout):
        cell.create()
        with context.target_cell(ctxt, cell) as cell_ctxt:
            migration.db_sync(database='main', context=cell_ctxt)
    for flavorid, name, vcpus, memory_mb, root_gb in FLAVORS:
        objects.Flavor(ctxt, flavorid=flavorid, name=name, vcpus=vcpus,
                       memory_mb=memory_mb, root_gb=root_gb, ephemeral_gb=0,
                       swap=0, rxtx_factor=1.0, is_public=True,
                       disabled=False).create()


def _cells(ctxt, layout):
    """What ``nova-manage cell_v2 map_cell0`` and ``create_cell`` map.

    cell1, which holds the compute hosts and their servers, is the
    ``[database]`` of nova.conf.
    """
    cell0 = objects.CellMapping(
        ctxt, uuid=objects.CellMapping.CELL0_UUID, name='cell0',
        transport_url='none:///',
        database_connection=layout.sqlite_url('nova_cell0'))
    cell1 = objects.CellMapping(
        ctxt, uuid=uuidutils.generate_uuid(), name='cell1',
        transport_url=CONF.transport_url,
        database_connection=CONF.database.connection)
    return cell0, cell1


def _use_wal(path):
    # Readers do not wait for the writer in SQLite's write-ahead log mode.
    with sqlite3.connect(path) as connection:
        connection.execute('PRAGMA journal_mode=WAL')


def start_service(binary, host):
    server = service.Service.create(binary=binary, host=host)
    server.start()
    return server


def start_compute(host):
    """A compute service of nova.virt.fake, of the size of ``host``."""
    compute = service.Service.create(binary='nova-compute', host=host,
                                     topic_alt=compute_rpcapi.RPC_TOPIC_ALT)
    # The fake driver's size is in these attributes; the driver reports
    # it from init_host, which start() calls.
    driver = compute.manager.driver
    driver.vcpus, driver.memory_mb, driver.local_gb = config.host_size(host)
    driver.resources = fake.Resources(driver.vcpus, driver.memory_mb,
                                      driver.local_gb)
    compute.start()
    return compute


def start_computes(layout):
    """The fake compute hosts, mapped to cell1 once they have started."""
    computes = [start_compute(host) for host in config.host_names(layout)]
    host_mapping.discover_hosts(context.get_admin_context())
    return computes


def api_servers(args, fakes, placement_app):
    """The HTTP servers of nova-api, Placement and the image API."""
    nova_api = nova_wsgi.Loader().load_app('osapi_compute')
    # As nova-api's own WSGI entry point does: its service record.
    wsgi_app._setup_service(CONF.host, 'osapi_compute')
    images = auth_token.filter_factory({})(image_api.ImageAPI(fakes.glance))
    apps = {'nova': nova_api, 'placement': placement_app, 'image': images}
    return [wsgi_server.Server(name, app, args.listen[name])
            for name, app in apps.items()]


def serve(layout, args, fakes, placement_app, stop):
    """Start the services and servers, serve until ``stop``, stop them."""
    # The servers first: the services call Placement as they start.
    servers = api_servers(args, fakes, placement_app)
    for server in servers:
        server.start()
    services = [start_service('nova-conductor', CONF.host),
                start_service('nova-scheduler', CONF.host)]
    services += start_computes(layout)
    process.signal_ready(args.ready_fd)
    stop.wait()
    LOG.info('Stopping')
    for server in servers:
        server.stop()
    for running in reversed(services):
        running.stop()


def main(argv=None):
    args = process.parse_args(argv, 'The Nova side of reservation-sandbox.')
    layout = config.Layout.load(args.state_dir)
    stop = process.stop_event()
    nova_config.parse_args(['nova', '--config-file',
                            layout.path('nova.conf')])
    logging.setup(CONF, 'nova')
    objects.register_all()
    with Fakes() as fakes:
        create_databases(layout)
        placement_app = placement.make_app(layout.path('placement.conf'))
        # Nova's clients of Placement look it up in the catalog once, when
        # they are made: nothing of Nova starts before the catalog exists.
        if process.wait_for_go(args.go_fd, stop):
            serve(layout, args, fakes, placement_app, stop)
