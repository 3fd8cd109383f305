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

"""storage pools: reservable Cinder pools and their extra capabilities

Revision ID: cc24918655da
Revises: 6e2a9b4d8c03
Create Date: 2026-11-28 00:41:29
"""

from alembic import op
import sqlalchemy as sa
from sqlalchemy.dialects import mysql

revision = 'cc24918655da'
down_revision = '6e2a9b4d8c03'
branch_labels = None
depends_on = None

# Microseconds on MariaDB too, as migration 4c69f26fae5c made every table.
DATETIME = sa.DateTime().with_variant(mysql.DATETIME(fsp=6), 'mysql',
                                      'mariadb')
FLOAT = sa.Float().with_variant(mysql.DOUBLE(), 'mysql', 'mariadb')
MYSQL = {'mysql_charset': 'utf8mb4', 'mysql_collate': 'utf8mb4_bin'}


def upgrade():
    op.create_table(
        'storage_pools',
        sa.Column('id', sa.String(36), nullable=False),
        sa.Column('name', sa.String(255), nullable=False),
        sa.Column('volume_backend_name', sa.String(255), nullable=True),
        sa.Column('total_capacity_gb', FLOAT, nullable=True),
        sa.Column('capabilities', sa.Text(), nullable=False),
        sa.Column('created_at', DATETIME, nullable=False),
        sa.Column('updated_at', DATETIME, nullable=True),
        sa.PrimaryKeyConstraint('id', name='pk_storage_pools'),
        sa.UniqueConstraint('name', name='uniq_storage_pools0name'),
        **MYSQL)
    op.create_table(
        'storage_pool_extra_capabilities',
        sa.Column('id', sa.Integer(), autoincrement=True, nullable=False),
        sa.Column('pool_id', sa.String(36), nullable=False),
        sa.Column('name', sa.String(64), nullable=False),
        sa.Column('value', sa.String(255), nullable=False),
        sa.Column('num_value', FLOAT, nullable=True),
        sa.ForeignKeyConstraint(
            ['pool_id'], ['storage_pools.id'],
            name='fk_storage_pool_extra_capabilities_pool_id_storage_pools',
            ondelete='CASCADE'),
        sa.PrimaryKeyConstraint('id',
                                name='pk_storage_pool_extra_capabilities'),
        sa.UniqueConstraint('pool_id', 'name',
                            name='uniq_storage_pool_extra_capabilities0name'),
        **MYSQL)


def downgrade():
    op.drop_table('storage_pool_extra_capabilities')
    op.drop_table('storage_pools')
