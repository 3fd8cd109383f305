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

"""All of Cinder in one process, configured by ``DIR/cinder.conf``:

- cinder-api with Cinder's stock api-paste.ini (keystonemiddleware) and
  the reservation extension (:mod:`cinder_ext.extension`), on its HTTP
  port;
- cinder-scheduler, with the reservation filter
  (:mod:`cinder_ext.reservation_filter`), and a cinder-volume for each
  backend with the sandbox's volume driver
  (:mod:`reservation_ext.sandbox.cinder.volume_driver`: Cinder's fake
  driver with a sparse file per volume, reporting the pools of
  :data:`reservation_ext.sandbox.config.CINDER_BACKENDS`), talking over
  oslo.messaging's in-memory transport instead of a message broker;
- Cinder's database as an SQLite file.

Nothing here needs Keystone until a request comes, so the child starts
beside Keystone and says ready once cinder-api serves.
"""

from cinder.db import migration
from cinder import objects
from cinder import service
from oslo_config import cfg
from oslo_log import log as logging
from oslo_service import wsgi

from reservation_ext.sandbox import config
from reservation_ext.sandbox import process
from reservation_ext.sandbox import wsgi_server

CONF = cfg.CONF
LOG = logging.getLogger(__name__)


class SharedProcessService(service.Service):
    """A Cinder service that shares its process with another one.

    Cinder keeps the database id of "the" service of a process in a class
    attribute, which the service created last overwrites; the heartbeat
    reads it, so cinder-volume would keep the scheduler's row alive and
    go down after ``service_down_time``. Each heartbeat here first puts
    back the id of its own service (nothing yields in between).
    """

    def report_state(self):
        service.Service.service_id = self.origin_service_id
        super().report_state()


def start_services():
    """A cinder-volume per backend first: the scheduler asks for their pools.

    As cinder-volume does, each backend of ``enabled_backends`` is a
    volume service of host ``host@backend``, and the volume services
    start the coordinator (a file-based one, in state_path) that their
    managers take locks with.
    """
    services = []
    for backend in CONF.enabled_backends:
        services.append(SharedProcessService.create(
            binary='cinder-volume', host='%s@%s' % (CONF.host, backend),
            service_name=backend, coordination=True))
        services[-1].start()
    services.append(SharedProcessService.create(binary='cinder-scheduler',
                                                host=CONF.host))
    services[-1].start()
    return services


def main(argv=None):
    args = process.parse_args(argv, 'The Cinder side of reservation-sandbox.')
    serve(args, config.Layout.load(args.state_dir).path('cinder.conf'))


def serve(args, conf_file, when_started=None):
    """Run Cinder's services and API from ``conf_file`` until stopped.

    :param args: the child's arguments (:func:`process.parse_args`)
    :param when_started: called once the services started, before the
        API serves and the child says it is ready.
    """
    stop = process.stop_event()
    objects.register_all()
    CONF(['--config-file', conf_file], project='cinder')
    logging.setup(CONF, 'cinder')
    migration.db_sync()
    services = start_services()
    if when_started is not None:
        when_started()
    api = wsgi_server.Server(
        'cinder', wsgi.Loader(CONF).load_app('osapi_volume'),
        args.listen['cinder'])
    api.start()
    process.signal_ready(args.ready_fd)
    stop.wait()
    LOG.info('Stopping')
    api.stop()
    for running in reversed(services):
        running.stop()
