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

"""stack reservations: quota totals; the servers and volumes of stacks

Revision ID: a7c3e9f1b5d2
Revises: d2b4f6a8c0e1
Create Date: 2026-11-28 09:40:00
"""

import json

from alembic import op
import sqlalchemy as sa

revision = 'a7c3e9f1b5d2'
down_revision = 'd2b4f6a8c0e1'
branch_labels = None
depends_on = None

MYSQL = {'mysql_charset': 'utf8mb4', 'mysql_collate': 'utf8mb4_bin'}
TOTALS = ('instances', 'vcpus', 'memory_mb', 'volumes')


def upgrade():
    with op.batch_alter_table('stack_reservations') as batch:
        for name in TOTALS:
            batch.add_column(sa.Column(name, sa.Integer(), nullable=False,
                                       server_default='0'))
    _count_servers()
    op.create_table(
        'stack_resources',
        sa.Column('id', sa.String(36), nullable=False),
        sa.Column('reservation_id', sa.String(36), nullable=False),
        sa.Column('resource_type', sa.String(64), nullable=False),
        sa.Column('physical_id', sa.String(36), nullable=False),
        sa.Column('image_id', sa.String(36), nullable=True),
        sa.ForeignKeyConstraint(
            ['reservation_id'], ['reservations.id'],
            name='fk_stack_resources_reservation_id_reservations',
            ondelete='CASCADE'),
        sa.PrimaryKeyConstraint('id', name='pk_stack_resources'),
        sa.UniqueConstraint('reservation_id', 'physical_id',
                            name='uq_stack_resources_reservation_physical'),
        **MYSQL)
    op.create_index('stack_resources_physical_id_idx', 'stack_resources',
                    ['physical_id'])


def _count_servers():
    """Fill the server totals of the rows made before this revision.

    Their volumes were not counted: Heat's preview is not kept, and a
    count of 0 only leaves them out of the quota check, as before.
    """
    rows = sa.table('stack_reservations', sa.column('id'),
                    sa.column('servers'), *map(sa.column, TOTALS[:3]))
    bind = op.get_bind()
    for row_id, servers in bind.execute(
            sa.select(rows.c.id, rows.c.servers)).all():
        servers = json.loads(servers)
        bind.execute(sa.update(rows).where(rows.c.id == row_id).values(
            instances=sum(one['count'] for one in servers),
            vcpus=sum(one['count'] * one['vcpus'] for one in servers),
            memory_mb=sum(one['count'] * one['memory_mb']
                          for one in servers)))


def downgrade():
    op.drop_table('stack_resources')
    with op.batch_alter_table('stack_reservations') as batch:
        for name in TOTALS:
            batch.drop_column(name)
