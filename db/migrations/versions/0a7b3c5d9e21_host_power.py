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

"""power: each reservable host's power state, plan and transitions

Revision ID: 0a7b3c5d9e21
Revises: 6f2c8a4e1d93
Create Date: 2026-11-25 20:30:00
"""

from alembic import op
import sqlalchemy as sa
from sqlalchemy.dialects import mysql

revision = '0a7b3c5d9e21'
down_revision = '6f2c8a4e1d93'
branch_labels = None
depends_on = None

# Microseconds on MariaDB too, as migration 4c69f26fae5c made every table.
DATETIME = sa.DateTime().with_variant(mysql.DATETIME(fsp=6), 'mysql',
                                      'mariadb')


def upgrade():
    with op.batch_alter_table('computehosts') as batch:
        batch.add_column(sa.Column('power_managed', sa.Boolean(),
                                   nullable=False, server_default=sa.true()))
        batch.add_column(sa.Column('power_state', sa.String(16),
                                   nullable=False, server_default='on'))
        batch.add_column(sa.Column('power_changed_at', DATETIME))
        batch.add_column(sa.Column('power_claimed_by', sa.String(255)))
        batch.add_column(sa.Column('power_claimed_until', DATETIME))
        batch.add_column(sa.Column('power_next_action', sa.String(16)))
        batch.add_column(sa.Column('power_next_at', DATETIME))
        batch.add_column(sa.Column('power_next_reason', sa.String(16)))
        batch.add_column(sa.Column('power_failure', sa.String(255)))
    op.create_table(
        'host_power_events',
        sa.Column('id', sa.Integer(), autoincrement=True, nullable=False),
        sa.Column('host_id', sa.Integer(), nullable=False),
        sa.Column('action', sa.String(16), nullable=False),
        sa.Column('reason', sa.String(16), nullable=False),
        sa.Column('engine', sa.String(255), nullable=False),
        sa.Column('started_at', DATETIME, nullable=False),
        sa.Column('finished_at', DATETIME, nullable=True),
        sa.Column('outcome', sa.String(16), nullable=True),
        sa.Column('detail', sa.String(255), nullable=True),
        sa.ForeignKeyConstraint(['host_id'], ['computehosts.id'],
                                name='fk_host_power_events_host_id',
                                ondelete='CASCADE'),
        sa.PrimaryKeyConstraint('id', name='pk_host_power_events'),
        mysql_charset='utf8mb4', mysql_collate='utf8mb4_bin')
    op.create_index('ix_host_power_events_host_id', 'host_power_events',
                    ['host_id', 'started_at'])


def downgrade():
    # The table's index goes with it (MariaDB's foreign key needs it).
    op.drop_table('host_power_events')
    with op.batch_alter_table('computehosts') as batch:
        for column in ('power_failure', 'power_next_reason', 'power_next_at',
                       'power_next_action', 'power_claimed_until',
                       'power_claimed_by', 'power_changed_at',
                       'power_state', 'power_managed'):
            batch.drop_column(column)
