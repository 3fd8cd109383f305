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

"""Neutron's API in a process, configured by ``DIR/neutron.conf``.

Neutron 29 has no ``neutron-server`` script: its API is the WSGI
application ``neutron.wsgi.api:application``, which reads the files
that ``OS_NEUTRON_CONFIG_DIR`` and ``OS_NEUTRON_CONFIG_FILES`` name.
This process makes the database (:mod:`.schema`), loads that
application and serves it on its port (one request at a time: Neutron
writes to its SQLite database in most requests, and SQLite fails
concurrent writers). No agent, no RPC server: ML2 binds ports with
:mod:`.mechanism`.

With ``--public-project ID``, it makes the external network ``public``
(:mod:`.topology`) for that project before it serves (the tests'
Neutron, ``tests/neutron_service.py``). With ``--go-fd`` (the sandbox),
it waits for the supervisor's go, given once Keystone serves, looks up
the ``service``, ``admin`` and ``demo`` projects there and makes
``public`` and the two projects' networks before it says ready.
"""

import argparse
import os
import sys

from keystoneclient.v3 import client as ks_client

from reservation_ext.sandbox import config
from reservation_ext.sandbox.neutron import provision
from reservation_ext.sandbox.neutron import schema
from reservation_ext.sandbox.neutron import settings
from reservation_ext.sandbox import process
from reservation_ext.sandbox import wsgi_server

# The projects that get a network of their own, and its range.
PRIVATE_CIDRS = {'admin': '10.0.1.0/24', 'demo': '10.0.0.0/24'}


def parse_args(argv):
    parser = argparse.ArgumentParser(add_help=False)
    parser.add_argument('--public-project')
    own, rest = parser.parse_known_args(argv)
    args = process.parse_args(rest, 'The Neutron of reservation-sandbox.')
    args.public_project = own.public_project
    return args


def load_app(state_dir):
    """Neutron's API application, configured by ``DIR/neutron.conf``."""
    os.environ['OS_NEUTRON_CONFIG_DIR'] = state_dir
    os.environ['OS_NEUTRON_CONFIG_FILES'] = settings.CONF_FILE
    # Neutron parses the command line for its own options.
    del sys.argv[1:]
    from neutron.wsgi import api
    return api.application


def make_networks(layout):
    """``public``, and each project's network and router (see topology)."""
    keystone = ks_client.Client(session=config.session(layout))
    ids = {project.name: project.id for project in keystone.projects.list()}
    public_id = provision.create_public(ids[config.SERVICE_PROJECT])
    for name, cidr in PRIVATE_CIDRS.items():
        provision.create_private(ids[name], public_id, cidr)


def main(argv=None):
    args = parse_args(sys.argv[1:] if argv is None else argv)
    stop = process.stop_event()
    state_dir = os.path.abspath(args.state_dir)
    schema.create(os.path.join(state_dir, settings.CONF_FILE))
    app = load_app(state_dir)
    if args.public_project:
        provision.create_public(args.public_project)
    server = wsgi_server.Server('neutron', app, args.listen['neutron'],
                                threaded=False)
    server.start()
    if args.go_fd is not None:
        if not process.wait_for_go(args.go_fd, stop):
            server.stop()
            return
        make_networks(config.Layout.load(state_dir))
    process.signal_ready(args.ready_fd)
    stop.wait()
    server.stop()
