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

``python -m tests.concurrency.worker --config-file F --fd N`` loads the
``reservation_api`` pipeline of ``etc/nova/api-paste.ini`` (the one
nova-api mounts at ``/reservation``: Nova's request-id, logging and size
limit filters, keystonemiddleware, the lease API of
``reservation_ext.api.wsgi:app_factory``) and serves it, one thread per
request, on the listening socket ``N`` it inherits. keystonemiddleware
is replaced as Nova's functional harness replaces it
(``nova.tests.fixtures.OSAPIFixture``): a filter that passes the request
on, so that the caller's ``X-User-Id``, ``X-Project-Id`` and ``X-Roles``
headers make the request context, as the ones keystonemiddleware sets.
It prints ``ready`` on its standard output once it serves (nothing
else: its logging goes to the standard error), and stops on SIGTERM.
"""

import argparse
import os
import signal
import sys
import threading

from keystonemiddleware import auth_token
from oslo_log import log as logging
from paste import deploy

from reservation_ext import conf as conf_mod
from reservation_ext.sandbox import wsgi_server

API_PASTE = os.path.join(
    os.path.dirname(os.path.dirname(os.path.dirname(
        os.path.abspath(__file__)))), 'etc', 'nova', 'api-paste.ini')
PIPELINE = 'reservation_api'


def _pass_through(global_conf, **local_conf):
    """keystonemiddleware's filter factory, stubbed as Nova's harness does."""
    return lambda app: app


def load_app():
    """The lease API pipeline of nova-api's api-paste.ini."""
    auth_token.filter_factory = _pass_through
    return deploy.loadapp('config:' + API_PASTE, name=PIPELINE)


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
    logging.register_options(conf)
    conf(['--config-file', args.config_file], project='reservation-ext')
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
