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

"""Schema migrations of the leases DB (alembic).

The migration scripts live inside the package (``db/migrations``), so
these functions work from an installed wheel as well as from a checkout.
There is no alembic.ini: every command gets the connection to work on
from its caller and hands it to ``env.py`` through the alembic config.
"""

import contextlib
import os

from alembic import command
from alembic import config as alembic_config
from alembic import migration as alembic_migration
from alembic import script as alembic_script
import sqlalchemy as sa

SCRIPT_LOCATION = os.path.join(os.path.dirname(os.path.abspath(__file__)),
                               'migrations')

# Not alembic's default "alembic_version": an operator may put the leases
# tables into a database that another service (Nova, Placement) already
# migrates with alembic, and the two histories must not share one table.
VERSION_TABLE = 'reservation_alembic_version'


def _config(connection=None):
    config = alembic_config.Config()
    config.set_main_option('script_location', SCRIPT_LOCATION)
    config.attributes['connection'] = connection
    return config


@contextlib.contextmanager
def _connection(engine_or_url):
    """Give a connection in a transaction on an engine or a database URL.

    An engine made here from a URL is disposed of afterwards; a given
    engine is left to its owner.
    """
    if isinstance(engine_or_url, sa.engine.Engine):
        engine = engine_or_url
    else:
        engine = sa.create_engine(engine_or_url)
    try:
        with engine.begin() as connection:
            yield connection
    finally:
        if engine is not engine_or_url:
            engine.dispose()


def upgrade(engine_or_url, revision='head'):
    """Migrate the schema up to ``revision`` (default: the newest)."""
    with _connection(engine_or_url) as connection:
        command.upgrade(_config(connection), revision)


def downgrade(engine_or_url, revision):
    """Migrate the schema down to ``revision`` (``'base'``: no tables)."""
    with _connection(engine_or_url) as connection:
        command.downgrade(_config(connection), revision)


def current(engine_or_url):
    """Return the revision the database is at, or None if it has none yet."""
    with _connection(engine_or_url) as connection:
        context = alembic_migration.MigrationContext.configure(
            connection, opts={'version_table': VERSION_TABLE})
        return context.get_current_revision()


def head():
    """Return the newest revision of the migration scripts."""
    return alembic_script.ScriptDirectory.from_config(
        _config()).get_current_head()


def revision(message, autogenerate=False, engine_or_url=None):
    """Write a new migration script into the package and return its path.

    With ``autogenerate``, the script holds the operations that bring the
    database of ``engine_or_url`` (which must be at the newest revision)
    to the schema of the models; otherwise it is empty.
    """
    if not autogenerate:
        return command.revision(_config(), message).path
    if engine_or_url is None:
        raise ValueError('autogenerate needs a database to compare with')
    with _connection(engine_or_url) as connection:
        return command.revision(_config(connection), message,
                                autogenerate=True).path
