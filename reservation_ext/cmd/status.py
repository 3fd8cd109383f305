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

"""reservation-status: the upgrade checks, and each engine's last poll.

    reservation-status --config-file /etc/nova/nova.conf upgrade check [--json]
    reservation-status --config-file /etc/nova/nova.conf engines

``upgrade check`` (oslo.upgradecheck) exits 0 when every check passed, 1
with a warning, 2 with a failure, 255 when a check could not run. It
reads nova.conf (or the files given): the leases DB
(``[reservation_database]``), the scheduler's filters
(``[filter_scheduler]``), nova-api's paste file (``[wsgi]
api_paste_config``) and the policy file (``[oslo_policy]``). Run it
where nova-api runs, with the new code installed, before restarting the
services (doc/source/admin/upgrading.rst).

``engines`` lists the engines recorded in the leases DB, with their last
successful poll, then counts the lease events that run on an engine's
worker and those that wait for their actions' results (with when the
oldest wait began); it exits 1 when an engine is stale (no successful
poll for :data:`reservation_ext.store.engines.STALE_POLLS` poll
intervals), so that a monitoring probe can run it.
"""

import sys

from oslo_config import cfg
from oslo_log import log as logging
from oslo_policy import opts as policy_opts
from oslo_upgradecheck import upgradecheck

from db import api as db_api
from reservation_ext import clock
from reservation_ext.cmd import upgrade_checks
from reservation_ext import conf as conf_mod
from reservation_ext import context
from reservation_ext.store import engines as store_engines
from reservation_ext.store import leases as store_leases

PROG = 'reservation-status'

# The options of Nova's that the checks read from nova.conf. Registered
# on this command's own ConfigOpts only (Nova registers them in its
# services); their defaults are None, meaning "not in the files given".
NOVA_OPTS = {
    'filter_scheduler': [
        cfg.MultiStrOpt('available_filters', default=None,
                        help="Nova's filter classes."),
        cfg.ListOpt('enabled_filters', default=None,
                    help="The filters Nova's scheduler runs."),
    ],
    'wsgi': [cfg.StrOpt('api_paste_config', default=None,
                        help="nova-api's paste file.")],
}


def _show_engines(conf):
    """Print every engine's last successful poll; 1 if one is stale."""
    now = clock.SYSTEM.now()
    interval = conf.reservation.event_poll_interval
    with db_api.context_manager.reader.using(
            context.get_admin_context()) as session:
        rows = store_engines.list_engines(session)
        under_way = store_leases.events_under_way(session)
    if not rows:
        print('No engine has recorded a poll.')
        return 1
    stale = False
    print('%-30s %-20s %-10s %-26s %s' % (
        'engine', 'host', 'version', 'last successful poll (UTC)',
        'state'))
    for row in rows:
        row_stale = store_engines.is_stale(row, now, interval)
        stale = stale or row_stale
        print('%-30s %-20s %-10s %-26s %s' % (
            row['engine_id'], row['host'], row['version'],
            row['last_poll_at'].isoformat(sep=' ')
            if row['last_poll_at'] else 'never',
            'stale' if row_stale else 'up'))
    _show_events(*under_way)
    return 1 if stale else 0


def _show_events(running, waiting, since):
    """Print the count of events under way, and the oldest wait."""
    print('\nEvents: %d running, %d waiting for their results%s' % (
        running, waiting, ' (the oldest since %s UTC)' % since.isoformat(
            sep=' ', timespec='seconds') if since else ''))


def _add_parsers(checks):
    """Return the handler that adds the subcommands' parsers."""
    def add(subparsers):
        """Add ``upgrade check`` and ``engines``."""
        # As oslo.upgradecheck's register_cli_options, beside "engines".
        upgrade = subparsers.add_parser(
            'upgrade', help='Check that this deployment is ready for the '
                            'installed version: "upgrade check".')
        upgrade.add_argument('check', choices=['check'])
        upgrade.add_argument('--json', action='store_true',
                             help='Print the results as JSON.')
        upgrade.set_defaults(action_fn=checks.check)
        engines = subparsers.add_parser(
            'engines', help='List the engines and their last successful '
                            'poll; exit 1 if one is stale.')
        engines.set_defaults(action_fn=lambda: _show_engines(checks.conf))
    return add


def parse_args(argv):
    """Return the command's ConfigOpts with ``argv`` parsed."""
    conf = cfg.ConfigOpts()
    conf_mod.register_opts(conf)
    for group, opts in NOVA_OPTS.items():
        conf.register_opts(opts, group=group)
    policy_opts.set_defaults(conf)
    logging.register_options(conf)
    conf.set_default('use_stderr', True)
    conf.register_cli_opt(cfg.SubCommandOpt(
        'command', handler=_add_parsers(upgrade_checks.Checks(conf))))
    conf(argv, project='reservation-ext', prog=PROG)
    logging.setup(conf, PROG)
    return conf


def main(argv=None):
    """Run the command of ``argv``; return its exit status."""
    conf = parse_args(sys.argv[1:] if argv is None else argv)
    db_api.configure(conf)
    # oslo.upgradecheck's check() reads --json from its module's CONF,
    # which its own main() sets.
    upgradecheck.CONF = conf
    return upgradecheck.run(conf)


if __name__ == '__main__':
    sys.exit(main())
