"""Alembic environment of the leases DB.

Run by :mod:`db.migration`, which passes the connection to migrate in
``config.attributes['connection']``: migrations always run against a live
database (there is no offline, SQL-script mode).
"""

from alembic import context

from db import migration
from db import models


def run_migrations_online():
    context.configure(
        connection=context.config.attributes['connection'],
        target_metadata=models.Base.metadata,
        version_table=migration.VERSION_TABLE,
        # SQLite cannot ALTER most of a table: batch mode lets the same
        # migration recreate the table there and ALTER it elsewhere.
        render_as_batch=True)
    with context.begin_transaction():
        context.run_migrations()


run_migrations_online()
