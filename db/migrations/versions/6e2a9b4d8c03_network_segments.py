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

"""network segments: reservable VLAN/VXLAN segments, requests and bookings

Revision ID: 6e2a9b4d8c03
Revises: 5d1f8a3c7b92
Create Date: 2026-11-27 19:55:00
"""

from alembic import op
import sqlalchemy as sa
from sqlalchemy.dialects import mysql

revision = '6e2a9b4d8c03'
down_revision = '5d1f8a3c7b92'
branch_labels = None
depends_on = None

# Microseconds on MariaDB too, as migration 4c69f26fae5c made every table.
DATETIME = sa.DateTime().with_variant(mysql.DATETIME(fsp=6), 'mysql',
                                      'mariadb')
FLOAT = sa.Float().with_variant(mysql.DOUBLE(), 'mysql', 'mariadb')
MYSQL = {'mysql_charset': 'utf8mb4', 'mysql_collate': 'utf8mb4_bin'}


def _segments():
    op.create_table(
        'network_segments',
        sa.Column('id', sa.String(36), nullable=False),
        sa.Column('network_type', sa.String(16), nullable=False),
        sa.Column('physical_network', sa.String(255), nullable=True),
        sa.Column('segment_id', sa.Integer(), nullable=False),
        sa.Column('generation', sa.Integer(), nullable=False),
        sa.Column('created_at', DATETIME, nullable=False),
        sa.Column('updated_at', DATETIME, nullable=True),
        sa.PrimaryKeyConstraint('id', name='pk_network_segments'),
        sa.UniqueConstraint('network_type', 'physical_network', 'segment_id',
                            name='uniq_network_segments0segment'),
        **MYSQL)
    op.create_table(
        'network_extra_capabilities',
        sa.Column('id', sa.Integer(), autoincrement=True, nullable=False),
        sa.Column('network_id', sa.String(36), nullable=False),
        sa.Column('name', sa.String(64), nullable=False),
        sa.Column('value', sa.String(255), nullable=False),
        sa.Column('num_value', FLOAT, nullable=True),
        sa.ForeignKeyConstraint(
            ['network_id'], ['network_segments.id'],
            name='fk_network_extra_capabilities_network_id_network_segments',
            ondelete='CASCADE'),
        sa.PrimaryKeyConstraint('id', name='pk_network_extra_capabilities'),
        sa.UniqueConstraint('network_id', 'name',
                            name='uniq_network_extra_capabilities0name'),
        **MYSQL)


def _reservations():
    op.create_table(
        'network_reservations',
        sa.Column('id', sa.String(36), nullable=False),
        sa.Column('reservation_id', sa.String(36), nullable=False),
        sa.Column('network_name', sa.String(255), nullable=False),
        sa.Column('network_description', sa.String(255), nullable=True),
        sa.Column('network_properties', sa.Text(), nullable=True),
        sa.Column('resource_properties', sa.Text(), nullable=True),
        sa.Column('subnet_cidr', sa.String(64), nullable=True),
        sa.Column('router_external_network', sa.String(255), nullable=True),
        sa.Column('network_id', sa.String(36), nullable=True),
        sa.ForeignKeyConstraint(
            ['reservation_id'], ['reservations.id'],
            name='fk_network_reservations_reservation_id_reservations',
            ondelete='CASCADE'),
        sa.PrimaryKeyConstraint('id', name='pk_network_reservations'),
        sa.UniqueConstraint(
            'reservation_id',
            name='uq_network_reservations_reservation_id'),
        **MYSQL)


def _allocations():
    op.create_table(
        'network_allocations',
        sa.Column('id', sa.String(36), nullable=False),
        sa.Column('network_id', sa.String(36), nullable=False),
        sa.Column('reservation_id', sa.String(36), nullable=False),
        sa.Column('start_date', DATETIME, nullable=False),
        sa.Column('end_date', DATETIME, nullable=False),
        sa.ForeignKeyConstraint(
            ['network_id'], ['network_segments.id'],
            name='fk_network_allocations_network_id_network_segments'),
        sa.ForeignKeyConstraint(
            ['reservation_id'], ['reservations.id'],
            name='fk_network_allocations_reservation_id_reservations',
            ondelete='CASCADE'),
        sa.PrimaryKeyConstraint('id', name='pk_network_allocations'),
        **MYSQL)
    op.create_index('network_allocations_window_idx', 'network_allocations',
                    ['network_id', 'start_date', 'end_date'])
    op.create_index('network_allocations_reservation_id_idx',
                    'network_allocations', ['reservation_id'])


def upgrade():
    _segments()
    _reservations()
    _allocations()


def downgrade():
    # Their indexes go with the tables (MariaDB's foreign keys need them).
    op.drop_table('network_allocations')
    op.drop_table('network_reservations')
    op.drop_table('network_extra_capabilities')
    op.drop_table('network_segments')
