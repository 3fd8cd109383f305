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

"""schedule proposals hold network segments and storage pools

network_allocations and storage_pool_allocations rows that belong to a
proposal instead of a reservation, counted until they expire, as
host_allocations and floatingip_allocations rows already are. Their
proposal_id has no foreign key: the code that deletes proposals deletes
their holds (reservation_ext.leases.proposals), and on SQLite a key to
proposals from a table that sorts after reservations breaks dropping the
schema table by table in name order (the implicit DELETE of reservations
cascades into a table whose parent proposals is gone already).

Revision ID: b3e8d1f5a7c9
Revises: a7c3e9f1b5d2
Create Date: 2026-11-28 13:00:00
"""

from alembic import op
import sqlalchemy as sa
from sqlalchemy.dialects import mysql

revision = 'b3e8d1f5a7c9'
down_revision = 'a7c3e9f1b5d2'
branch_labels = None
depends_on = None

# Microseconds on MariaDB too, as migration 4c69f26fae5c made every table.
DATETIME = sa.DateTime().with_variant(mysql.DATETIME(fsp=6), 'mysql',
                                      'mariadb')
_OWNER_CHECK = '(reservation_id IS NULL) <> (proposal_id IS NULL)'
# The bookings of items booked whole.
_TABLES = ('network_allocations', 'storage_pool_allocations')


def _add_holds(table):
    with op.batch_alter_table(table) as batch:
        batch.alter_column('reservation_id', existing_type=sa.String(36),
                           nullable=True)
        batch.add_column(sa.Column('proposal_id', sa.String(36),
                                   nullable=True))
        batch.add_column(sa.Column('proposal_item', sa.Integer(),
                                   nullable=True))
        batch.add_column(sa.Column('expires_at', DATETIME, nullable=True))
        batch.create_check_constraint('ck_%s_owner' % table, _OWNER_CHECK)
    op.create_index('%s_proposal_id_idx' % table, table, ['proposal_id'])


def _drop_holds(table):
    # Holds go with their proposals; bookings keep their reservation.
    op.execute('DELETE FROM %s WHERE reservation_id IS NULL' % table)
    with op.batch_alter_table(table) as batch:
        batch.drop_constraint('ck_%s_owner' % table, type_='check')
        batch.drop_index('%s_proposal_id_idx' % table)
        batch.drop_column('expires_at')
        batch.drop_column('proposal_item')
        batch.drop_column('proposal_id')
        batch.alter_column('reservation_id', existing_type=sa.String(36),
                           nullable=False)


def upgrade():
    for table in _TABLES:
        _add_holds(table)


def downgrade():
    for table in _TABLES:
        _drop_holds(table)
