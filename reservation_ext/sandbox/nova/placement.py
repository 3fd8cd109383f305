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

"""Placement for the sandbox: the real API app, with its own configuration.

Placement keeps its options on its own ``ConfigOpts`` (not the global
``cfg.CONF`` that Nova uses), so it can run in the Nova process, served
over HTTP behind keystonemiddleware like a deployed Placement.
"""

from oslo_config import cfg
from placement import conf as placement_conf
from placement import db_api
from placement import deploy


def make_app(config_file):
    """Placement's WSGI app configured from ``config_file``.

    Creates or migrates its database on the way
    (``[placement_database] sync_on_startup``).
    """
    conf = cfg.ConfigOpts()
    placement_conf.register_opts(conf)
    conf([], project='placement', default_config_files=[config_file])
    db_api.configure(conf)
    return deploy.loadapp(conf)
