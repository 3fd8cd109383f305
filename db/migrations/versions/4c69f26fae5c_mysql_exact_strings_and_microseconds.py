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

"""MySQL and MariaDB: exact strings, microseconds, double precision

On MySQL and MariaDB only (elsewhere the schema already has all three):
every table in utf8mb4 with its binary collation, so that strings compare
exactly as on PostgreSQL and SQLite (the server's default collation
ignores case: host names, lease names and capability values would match
other spellings); datetimes with microseconds (``DATETIME(6)``; plain
``DATETIME`` drops them, and claims, expiries and timestamps compare to a
clock that has them); capability numbers in double precision (``FLOAT``
is single precision there: 5.1 stored would not equal 5.1 asked for).

Tables that later migrations create on MySQL take the same options
(``db.models.MYSQL_TABLE_OPTIONS``).

Revision ID: 4c69f26fae5c
Revises: d5e9a7c3f1b6
Create Date: 2026-11-25 14:00:00
"""

from alembic import op
import sqlalchemy as sa

revision = '4c69f26fae5c'
down_revision = 'd5e9a7c3f1b6'
branch_labels = None
depends_on = None

_NULL, _NOT_NULL = 'NULL', 'NOT NULL'

# The tables of the leases DB at this revision, with their datetime
# columns.
_DATETIMES = {
    'leases': {'created_at': _NOT_NULL, 'updated_at': _NULL,
               'start_date': _NOT_NULL, 'end_date': _NOT_NULL,
               'before_end_date': _NULL},
    'lease_projects': {},
    'reservations': {'created_at': _NOT_NULL, 'updated_at': _NULL},
    'host_reservations': {'act_at': _NULL},
    'recycling_hosts': {'check_at': _NOT_NULL},
    'instance_reservations': {},
    'volume_reservations': {},
    'computehosts': {'created_at': _NOT_NULL, 'updated_at': _NULL,
                     'failed_at': _NULL},
    'host_capabilities': {},
    'proposals': {'created_at': _NOT_NULL, 'updated_at': _NULL,
                  'start_date': _NOT_NULL, 'end_date': _NOT_NULL,
                  'expires_at': _NOT_NULL},
    'host_allocations': {'expires_at': _NULL, 'start_date': _NOT_NULL,
                         'end_date': _NOT_NULL, 'reclaimed_for': _NULL,
                         'reclaim_claimed_until': _NULL,
                         'move_claimed_until': _NULL},
    'events': {'created_at': _NOT_NULL, 'updated_at': _NULL,
               'time': _NOT_NULL, 'claim_expires_at': _NULL},
    'pool_state': {},
    'host_properties': {},
    'volume_capacity_state': {},
}


def _alter(collation, datetime, float_):
    """One ALTER TABLE per table: its collation and its column types."""
    bind = op.get_bind()
    if bind.dialect.name not in ('mysql', 'mariadb'):
        return
    # MariaDB changes no column that a foreign key joins, whatever
    # FOREIGN_KEY_CHECKS says: the keys go, then come back as they were.
    inspector = sa.inspect(bind)
    foreign_keys = [(table, key) for table in _DATETIMES
                    for key in inspector.get_foreign_keys(table)]
    for table, key in foreign_keys:
        op.drop_constraint(key['name'], table, type_='foreignkey')
    for table, columns in _DATETIMES.items():
        changes = ['CONVERT TO CHARACTER SET utf8mb4 COLLATE %s' % collation]
        changes += ['MODIFY `%s` %s %s' % (name, datetime, null)
                    for name, null in columns.items()]
        if table == 'host_capabilities':
            changes.append('MODIFY num_value %s NULL' % float_)
        op.execute('ALTER TABLE %s %s' % (table, ', '.join(changes)))
    for table, key in foreign_keys:
        op.create_foreign_key(
            key['name'], table, key['referred_table'],
            key['constrained_columns'], key['referred_columns'],
            **key['options'])


def upgrade():
    _alter('utf8mb4_bin', 'DATETIME(6)', 'DOUBLE')


def downgrade():
    _alter('utf8mb4_general_ci', 'DATETIME', 'FLOAT')
