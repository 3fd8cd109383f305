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
