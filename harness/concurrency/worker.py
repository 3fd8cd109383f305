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

"""One lease API worker process, as nova-api serves the lease API.

``python -m harness.concurrency.worker --config-file nova.conf --fd N``
loads the ``reservation_api`` pipeline of ``etc/nova/api-paste.ini`` (the
one nova-api mounts at ``/reservation``: Nova's request-id, logging and
size limit filters, keystonemiddleware, the lease API of
``reservation_ext.api.wsgi:app_factory``) with the sandbox's nova.conf
(its leases DB, ``[reservation]``, ``[keystone_authtoken]`` and the
service user of ``[reservation_client]``, which reaches the sandbox's
Nova and Cinder), and serves it, one thread per request, on the
listening socket ``N`` it inherits: one more nova-api process on the
same leases DB. It prints ``ready`` on its standard output once it serves
(nothing else: its logging goes to the standard error), and stops on
SIGTERM.
"""

import argparse
import os
import signal
import sys
import threading

from nova import config as nova_config
from nova import objects
from oslo_log import log as logging
from paste import deploy

from reservation_ext import conf as conf_mod
from reservation_ext.sandbox import config
from reservation_ext.sandbox import wsgi_server

PIPELINE = 'reservation_api'


def load_app():
    """The lease API pipeline of nova-api's api-paste.ini.

    Nova's objects are registered first, as nova-api does when it
    starts: the lease API reads Nova's quotas and counts through them.
    """
    objects.register_all()
    return deploy.loadapp('config:' + config.api_paste_path(), name=PIPELINE)


def main(argv=None):
    parser = argparse.ArgumentParser(prog='lease-api-worker')
    parser.add_argument('--config-file', required=True)
    parser.add_argument('--fd', type=int, required=True)
    parser.add_argument('--name', default='lease-api')
    args = parser.parse_args(argv)
    # The supervisor reads "ready" on stdout; everything else, logging
    # included, goes to stderr (the worker's log).
    ready = os.fdopen(os.dup(sys.stdout.fileno()), 'w')
    os.dup2(sys.stderr.fileno(), sys.stdout.fileno())
    conf = conf_mod.CONF
    # As nova-api: Nova's options and databases too (no RPC is needed).
    nova_config.parse_args([args.name, '--config-file', args.config_file],
                           init_rpc=False)
    logging.setup(conf, args.name)
    server = wsgi_server.Server(args.name, load_app(), args.fd)
    stop = threading.Event()
    signal.signal(signal.SIGTERM, lambda signum, frame: stop.set())
    server.start()
    print('ready', file=ready, flush=True)
    stop.wait()
    server.stop()


if __name__ == '__main__':
    sys.exit(main())
