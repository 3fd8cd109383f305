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

"""Heat's API and engine in one process, configured by ``DIR/heat.conf``.

The process migrates Heat's database, waits for the supervisor's go
(given once Keystone serves), makes Heat's stack-user domain, its admin
and the ``heat_stack_user`` role in Keystone, then starts heat-engine's
:class:`~heat.engine.service.EngineService` and serves heat-api's
and heat-api-cfn's applications (the API, and the metadata and wait
conditions that a stack's servers reach) on their ports, as heat-engine,
heat-api and heat-api-cfn would in three processes with a broker
between them.
"""

import os
import sys

from keystoneclient.v3 import client as ks_client
# Heat runs on native threads, as heat-engine selects before it imports
# oslo.service's services.
from oslo_service import backend

backend.init_backend(backend.BackendType.THREADING)

from oslo_config import cfg  # noqa: E402
from oslo_log import log as logging  # noqa: E402

from db import api as db_api  # noqa: E402
from reservation_ext.sandbox import config  # noqa: E402
from reservation_ext.sandbox.heat import settings  # noqa: E402
from reservation_ext.sandbox import process  # noqa: E402
from reservation_ext.sandbox import wsgi_server  # noqa: E402


def load_config(conf_file):
    """Load heat.conf into Heat's global configuration, as heat-api does."""
    from heat.common import config as heat_config
    # Registers auth_encryption_key, which the sanity check reads.
    from heat.common import crypt  # noqa: F401
    from heat.common import messaging
    logging.register_options(cfg.CONF)
    cfg.CONF(args=[], project='heat', prog='heat-api',
             default_config_files=[conf_file], default_config_dirs=[])
    logging.setup(cfg.CONF, 'heat')
    heat_config.set_config_defaults()
    heat_config.startup_sanity_check()
    messaging.setup()


def migrate():
    """``heat-manage db_sync``, then queue Heat's SQLite writers.

    Heat's engine writes from many threads at once: every transaction on
    its SQLite database begins IMMEDIATE and waits for the lock
    (:func:`db.api.queue_sqlite_writers`). Not during the migration,
    which opens a second connection while its first one holds the lock.
    """
    from heat.db import api as heat_db
    from heat.db import migration
    migration.db_sync()
    engine = heat_db.get_engine()
    if engine.dialect.name == 'sqlite':
        db_api.queue_sqlite_writers(engine, lambda connection: True)


def set_up_keystone(layout):
    """The stack-user domain, its admin and the stack users' role."""
    keystone = ks_client.Client(session=config.session(layout))
    keystone.roles.create(settings.STACK_USER_ROLE)
    domain = keystone.domains.create(
        settings.STACK_USER_DOMAIN,
        description='Owns the users Heat makes for stacks')
    admin = keystone.users.create(settings.STACK_DOMAIN_ADMIN, domain=domain,
                                  password=layout.password)
    keystone.roles.grant(keystone.roles.find(name='admin'), user=admin,
                         domain=domain)


def start_engine():
    """Start heat-engine's service in this process; return it."""
    from heat.engine import service
    from heat.rpc import api as rpc_api
    engine = service.EngineService(cfg.CONF.host, rpc_api.ENGINE_TOPIC)
    engine.start()
    return engine


def load_app(name):
    """heat-api's or heat-api-cfn's application, from Heat's pipelines."""
    from heat.common import config as heat_config
    return heat_config.load_paste_app(name)


def main(argv=None):
    args = process.parse_args(sys.argv[1:] if argv is None else argv,
                              'The Heat of reservation-sandbox.')
    stop = process.stop_event()
    state_dir = os.path.abspath(args.state_dir)
    layout = config.Layout.load(state_dir)
    load_config(layout.path(settings.CONF_FILE))
    migrate()
    if not process.wait_for_go(args.go_fd, stop):
        return
    set_up_keystone(layout)
    engine = start_engine()
    servers = [wsgi_server.Server(name, load_app(app), args.listen[name])
               for name, app in (('heat', 'heat-api'),
                                 ('heat-cfn', 'heat-api-cfn'))]
    for server in servers:
        server.start()
    process.signal_ready(args.ready_fd)
    stop.wait()
    for server in servers:
        server.stop()
    engine.stop()
