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

"""storage pools: reservable Cinder pools, their storage:pool bookings

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


def _capabilities(name):
    """A table of ``name -> value`` rows of a pool (extra or reported)."""
    op.create_table(
        name,
        sa.Column('id', sa.Integer(), autoincrement=True, nullable=False),
        sa.Column('pool_id', sa.String(36), nullable=False),
        sa.Column('name', sa.String(64), nullable=False),
        sa.Column('value', sa.String(255), nullable=False),
        sa.Column('num_value', FLOAT, nullable=True),
        sa.ForeignKeyConstraint(
            ['pool_id'], ['storage_pools.id'],
            name='fk_%s_pool_id_storage_pools' % name, ondelete='CASCADE'),
        sa.PrimaryKeyConstraint('id', name='pk_' + name),
        sa.UniqueConstraint('pool_id', 'name', name='uniq_%s0name' % name),
        **MYSQL)


def _pools():
    op.create_table(
        'storage_pools',
        sa.Column('id', sa.String(36), nullable=False),
        sa.Column('name', sa.String(255), nullable=False),
        sa.Column('volume_backend_name', sa.String(255), nullable=True),
        sa.Column('total_capacity_gb', FLOAT, nullable=True),
        sa.Column('capabilities', sa.Text(), nullable=False),
        sa.Column('generation', sa.Integer(), nullable=False),
        sa.Column('created_at', DATETIME, nullable=False),
        sa.Column('updated_at', DATETIME, nullable=True),
        sa.PrimaryKeyConstraint('id', name='pk_storage_pools'),
        sa.UniqueConstraint('name', name='uniq_storage_pools0name'),
        **MYSQL)
    _capabilities('storage_pool_extra_capabilities')
    _capabilities('storage_pool_reported_capabilities')


def _reservations():
    op.create_table(
        'storage_pool_reservations',
        sa.Column('id', sa.String(36), nullable=False),
        sa.Column('reservation_id', sa.String(36), nullable=False),
        sa.Column('min', sa.Integer(), nullable=False),
        sa.Column('max', sa.Integer(), nullable=False),
        sa.Column('pool_properties', sa.Text(), nullable=True),
        sa.Column('resource_properties', sa.Text(), nullable=True),
        sa.Column('on_end', sa.String(32), nullable=False),
        sa.ForeignKeyConstraint(
            ['reservation_id'], ['reservations.id'],
            name='fk_storage_pool_reservations_reservation_id_reservations',
            ondelete='CASCADE'),
        sa.PrimaryKeyConstraint('id', name='pk_storage_pool_reservations'),
        sa.UniqueConstraint(
            'reservation_id',
            name='uq_storage_pool_reservations_reservation_id'),
        **MYSQL)


def _allocations():
    op.create_table(
        'storage_pool_allocations',
        sa.Column('id', sa.String(36), nullable=False),
        sa.Column('pool_id', sa.String(36), nullable=False),
        sa.Column('reservation_id', sa.String(36), nullable=False),
        sa.Column('start_date', DATETIME, nullable=False),
        sa.Column('end_date', DATETIME, nullable=False),
        sa.ForeignKeyConstraint(
            ['pool_id'], ['storage_pools.id'],
            name='fk_storage_pool_allocations_pool_id_storage_pools'),
        sa.ForeignKeyConstraint(
            ['reservation_id'], ['reservations.id'],
            name='fk_storage_pool_allocations_reservation_id_reservations',
            ondelete='CASCADE'),
        sa.PrimaryKeyConstraint('id', name='pk_storage_pool_allocations'),
        **MYSQL)
    op.create_index('storage_pool_allocations_window_idx',
                    'storage_pool_allocations',
                    ['pool_id', 'start_date', 'end_date'])
    op.create_index('storage_pool_allocations_reservation_id_idx',
                    'storage_pool_allocations', ['reservation_id'])


def upgrade():
    _pools()
    _reservations()
    _allocations()


def downgrade():
    # Their indexes go with the tables (MariaDB's foreign keys need them).
    op.drop_table('storage_pool_allocations')
    op.drop_table('storage_pool_reservations')
    op.drop_table('storage_pool_reported_capabilities')
    op.drop_table('storage_pool_extra_capabilities')
    op.drop_table('storage_pools')
