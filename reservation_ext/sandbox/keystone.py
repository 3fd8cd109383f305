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

"""The sandbox's Keystone: a child process serving the real Keystone app.

    python -m reservation_ext.sandbox.keystone --state-dir DIR \
        --listen keystone=FD --ready-fd FD

Sets Keystone up as an operator would, with ``keystone-manage`` (SQLite,
fernet tokens, ``bootstrap`` of the ``admin`` project, user and role),
serves it, and then, through its own API, adds the ``service`` project,
the ``demo`` project and user (role ``member``) and the catalog of the
sandbox's services in region RegionOne. Keystone has its own global
configuration, hence its own process.
"""

import os
import shutil
import subprocess
import sys

from keystone.server.flask import core as keystone_flask
from keystoneclient.v3 import client as ks_client

from reservation_ext.sandbox import config
from reservation_ext.sandbox import process
from reservation_ext.sandbox import wsgi_server


def _keystone_manage(layout):
    """``keystone-manage --config-file DIR/keystone.conf``."""
    script = os.path.join(os.path.dirname(sys.executable), 'keystone-manage')
    if not os.path.exists(script):
        script = shutil.which('keystone-manage')
    return [script, '--config-file', layout.path('keystone.conf')]


def set_up(layout):
    """Create the database and keys, then bootstrap the admin user."""
    manage = _keystone_manage(layout)
    owner = ['--keystone-user', str(os.getuid()),
             '--keystone-group', str(os.getgid())]
    # The keys do not need the database: make all three at once.
    steps = [subprocess.Popen(manage + args) for args in (
        ['db_sync'], ['fernet_setup'] + owner, ['credential_setup'] + owner)]
    for step in steps:
        if step.wait():
            raise RuntimeError('%s failed' % ' '.join(step.args))
    subprocess.run(manage + [
        # One argument: a generated password may begin with "-".
        'bootstrap', '--bootstrap-password=' + layout.password,
        '--bootstrap-region-id', config.REGION,
        '--bootstrap-public-url', layout.auth_url], check=True)


def register(layout):
    """Add the demo project and user and the catalog, as admin."""
    keystone = ks_client.Client(session=config.session(layout))
    # The owner of shared infrastructure, as in a deployment: Neutron's
    # external network (sandbox.neutron.topology).
    keystone.projects.create(config.SERVICE_PROJECT, config.DOMAIN_ID)
    project = keystone.projects.create('demo', config.DOMAIN_ID)
    user = keystone.users.create('demo', domain=config.DOMAIN_ID,
                                 password=layout.password,
                                 default_project=project)
    member = keystone.roles.find(name=config.USERS['demo'])
    keystone.roles.grant(member, user=user, project=project)
    # The services' user (admin) sends service tokens with the users'
    # (keystonemiddleware does, e.g. Nova's calls to Neutron), which the
    # receiving service accepts only from a user with the service role.
    keystone.roles.grant(keystone.roles.find(name='service'),
                         user=keystone.users.find(name='admin'),
                         project=keystone.projects.find(name='admin'))
    for service_type, (name, url) in layout.endpoints.items():
        service = keystone.services.create(name, service_type)
        keystone.endpoints.create(service, url, interface='public',
                                  region=config.REGION)


def main(argv=None):
    args = process.parse_args(argv, 'The Keystone of reservation-sandbox.')
    # Keystone parses the command line again, for its own options.
    del sys.argv[1:]
    layout = config.Layout.load(args.state_dir)
    stop = process.stop_event()
    set_up(layout)
    app = keystone_flask.initialize_application(
        name='public', config_files=[layout.path('keystone.conf')])
    # One request at a time: Keystone writes to its SQLite database while
    # it issues tokens, and SQLite fails concurrent writers.
    server = wsgi_server.Server('keystone', app, args.listen['keystone'],
                                threaded=False)
    server.start()
    register(layout)
    process.signal_ready(args.ready_fd)
    stop.wait()
    server.stop()


if __name__ == '__main__':
    main()
