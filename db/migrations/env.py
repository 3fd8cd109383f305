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
