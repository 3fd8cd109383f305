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

"""reservation-db-manage: create and migrate the leases DB.

Works on the database named by ``[reservation_database] connection``::

    reservation-db-manage --config-file F upgrade [REVISION]
    reservation-db-manage --config-file F downgrade REVISION
    reservation-db-manage --config-file F current
    reservation-db-manage --config-file F revision -m MESSAGE [--autogenerate]
    reservation-db-manage --config-file F import-blazar --blazar-connection URL
"""

import os
import sys

from alembic import util as alembic_util
from oslo_config import cfg
from oslo_db import exception as db_exception
from oslo_log import log as logging
import sqlalchemy as sa

from db import api as db_api
from db import migration
from reservation_ext.blazar_import import blazar_schema
from reservation_ext.blazar_import import importer
from reservation_ext import clock
from reservation_ext import conf as conf_mod
from reservation_ext import context

PROG = 'reservation-db-manage'


def _upgrade(conf, engine):
    migration.upgrade(engine, conf.command.revision)


def _downgrade(conf, engine):
    migration.downgrade(engine, conf.command.revision)


def _current(conf, engine):
    revision = migration.current(engine)
    if revision is None:
        print('base (no migration applied)')
    else:
        print('%s%s' % (revision,
                        ' (head)' if revision == migration.head() else ''))


def _revision(conf, engine):
    # alembic prints the path of the new script.
    migration.revision(conf.command.message,
                       autogenerate=conf.command.autogenerate,
                       engine_or_url=engine)


def _import_blazar(conf, engine):
    """Import a Blazar database (reservation_ext.blazar_import); report."""
    url = conf.command.blazar_connection
    if migration.current(engine) != migration.head():
        _fail('the leases DB is not at the latest revision: run "%s '
              'upgrade" first' % PROG)
    # The services' transaction context, on the same database.
    db_api.configure(conf)
    try:
        report = importer.import_blazar(context.get_admin_context(),
                                        clock.SYSTEM, conf, url)
    except blazar_schema.BlazarDatabaseError as e:
        _fail('the Blazar database %s: %s' % (_hidden(url), e))
    print('\n'.join(report.lines()))


def _hidden(url):
    """The URL without its password (or as it is, if it is not one)."""
    try:
        return sa.engine.make_url(url).render_as_string(hide_password=True)
    except sa.exc.ArgumentError:
        return url


def _add_command_parsers(subparsers):
    parser = subparsers.add_parser(
        'upgrade', help='Migrate the DB up to REVISION (default: head).')
    parser.add_argument('revision', nargs='?', default='head')
    parser.set_defaults(func=_upgrade)

    parser = subparsers.add_parser(
        'downgrade', help='Migrate the DB down to REVISION (base: empty).')
    parser.add_argument('revision')
    parser.set_defaults(func=_downgrade)

    parser = subparsers.add_parser(
        'current', help='Print the revision the DB is at.')
    parser.set_defaults(func=_current)

    parser = subparsers.add_parser(
        'revision', help='Write a new migration script (developers).')
    parser.add_argument('-m', '--message', required=True)
    parser.add_argument('--autogenerate', action='store_true',
                        help='Fill the script with the changes that bring '
                             'the DB (at head) to the models.')
    parser.set_defaults(func=_revision)

    parser = subparsers.add_parser(
        'import-blazar', help="Import a Blazar 18 database's hosts, "
        'floating IPs and leases (see '
        'doc/source/admin/moving-from-blazar.rst).')
    parser.add_argument('--blazar-connection', required=True,
                        metavar='URL', help="the URL of Blazar's database "
                        "(its [database] connection)")
    parser.set_defaults(func=_import_blazar)


_command_opt = cfg.SubCommandOpt('command', title='Commands',
                                 handler=_add_command_parsers)


def _ensure_sqlite_directory(url):
    """Create the directory of a SQLite file DB, as SQLite does not."""
    if url.get_backend_name() == 'sqlite' and url.database not in (
            None, '', ':memory:'):
        os.makedirs(os.path.dirname(os.path.abspath(url.database)),
                    exist_ok=True)


def _parse_args(argv):
    conf = cfg.ConfigOpts()
    conf_mod.register_opts(conf)
    conf.register_cli_opt(_command_opt)
    logging.register_options(conf)
    # stdout is for the commands' results (e.g. "current"); alembic's
    # progress messages go to stderr unless the config names a log file.
    conf.set_default('use_stderr', True)
    conf(argv, project='reservation-ext', prog=PROG)
    logging.setup(conf, PROG)
    return conf


def _fail(message):
    sys.exit('%s: error: %s' % (PROG, message))


def main(argv=None):
    """Run the command of ``argv``; exit with a message on failure."""
    try:
        conf = _parse_args(sys.argv[1:] if argv is None else argv)
    except cfg.Error as e:
        _fail(e)

    db_conf = conf.reservation_database
    try:
        url = sa.engine.make_url(db_conf.connection)
    except sa.exc.ArgumentError:
        _fail('[reservation_database] connection is not a database URL')
    # Never show the password in a message.
    where = url.render_as_string(hide_password=True)
    try:
        _ensure_sqlite_directory(url)
        # The engine the services use, with every [reservation_database]
        # option applied, but not the process-wide transaction context.
        engine = db_api.new_context_manager(
            **dict(db_conf.items())).writer.get_engine()
    except (OSError, ImportError, db_exception.DBError) as e:
        _fail('cannot open the database %s: %s' % (where, e))
    try:
        conf.command.func(conf, engine)
    except alembic_util.CommandError as e:
        _fail(e)
    except (sa.exc.SQLAlchemyError, db_exception.DBError) as e:
        _fail('database %s: %s' % (where, e))
    finally:
        engine.dispose()


if __name__ == '__main__':
    main()
