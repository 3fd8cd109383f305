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

"""floating IPs: reservable addresses, their reservations and bookings

Revision ID: 5d1f8a3c7b92
Revises: 2b6e9d4f1c85
Create Date: 2026-11-27 19:50:00
"""

from alembic import op
import sqlalchemy as sa
from sqlalchemy.dialects import mysql

revision = '5d1f8a3c7b92'
down_revision = '2b6e9d4f1c85'
branch_labels = None
depends_on = None

# Microseconds on MariaDB too, as migration 4c69f26fae5c made every table.
DATETIME = sa.DateTime().with_variant(mysql.DATETIME(fsp=6), 'mysql',
                                      'mariadb')
MYSQL = {'mysql_charset': 'utf8mb4', 'mysql_collate': 'utf8mb4_bin'}
_OWNER_CHECK = '(reservation_id IS NULL) <> (proposal_id IS NULL)'


def _floatingips():
    op.create_table(
        'floatingips',
        sa.Column('id', sa.String(36), nullable=False),
        sa.Column('floating_network_id', sa.String(255), nullable=False),
        sa.Column('subnet_id', sa.String(255), nullable=False),
        sa.Column('floating_ip_address', sa.String(64), nullable=False),
        sa.Column('reservable', sa.Boolean(), nullable=False),
        sa.Column('generation', sa.Integer(), nullable=False),
        sa.Column('created_at', DATETIME, nullable=False),
        sa.Column('updated_at', DATETIME, nullable=True),
        sa.PrimaryKeyConstraint('id', name='pk_floatingips'),
        sa.UniqueConstraint('floating_network_id', 'floating_ip_address',
                            name='uniq_floatingips0network0address'),
        **MYSQL)


def _floatingip_reservations():
    op.create_table(
        'floatingip_reservations',
        sa.Column('id', sa.String(36), nullable=False),
        sa.Column('reservation_id', sa.String(36), nullable=False),
        sa.Column('network_id', sa.String(255), nullable=False),
        sa.Column('amount', sa.Integer(), nullable=False),
        sa.Column('required_floatingips', sa.Text(), nullable=True),
        sa.ForeignKeyConstraint(
            ['reservation_id'], ['reservations.id'],
            name='fk_floatingip_reservations_reservation_id_reservations',
            ondelete='CASCADE'),
        sa.PrimaryKeyConstraint('id', name='pk_floatingip_reservations'),
        sa.UniqueConstraint(
            'reservation_id',
            name='uq_floatingip_reservations_reservation_id'),
        **MYSQL)


def _floatingip_allocations():
    op.create_table(
        'floatingip_allocations',
        sa.Column('id', sa.String(36), nullable=False),
        sa.Column('floatingip_id', sa.String(36), nullable=False),
        sa.Column('reservation_id', sa.String(36), nullable=True),
        sa.Column('proposal_id', sa.String(36), nullable=True),
        sa.Column('proposal_item', sa.Integer(), nullable=True),
        sa.Column('expires_at', DATETIME, nullable=True),
        sa.Column('start_date', DATETIME, nullable=False),
        sa.Column('end_date', DATETIME, nullable=False),
        sa.ForeignKeyConstraint(
            ['floatingip_id'], ['floatingips.id'],
            name='fk_floatingip_allocations_floatingip_id_floatingips'),
        sa.ForeignKeyConstraint(
            ['reservation_id'], ['reservations.id'],
            name='fk_floatingip_allocations_reservation_id_reservations',
            ondelete='CASCADE'),
        sa.ForeignKeyConstraint(
            ['proposal_id'], ['proposals.id'],
            name='fk_floatingip_allocations_proposal_id_proposals',
            ondelete='CASCADE'),
        sa.CheckConstraint(_OWNER_CHECK,
                           name='ck_floatingip_allocations_owner'),
        sa.PrimaryKeyConstraint('id', name='pk_floatingip_allocations'),
        **MYSQL)
    op.create_index('floatingip_allocations_window_idx',
                    'floatingip_allocations',
                    ['floatingip_id', 'start_date', 'end_date', 'expires_at'])
    op.create_index('floatingip_allocations_reservation_id_idx',
                    'floatingip_allocations', ['reservation_id'])
    op.create_index('floatingip_allocations_proposal_id_idx',
                    'floatingip_allocations', ['proposal_id'])


def upgrade():
    _floatingips()
    _floatingip_reservations()
    _floatingip_allocations()


def downgrade():
    # Their indexes go with the tables (MariaDB's foreign keys need them).
    op.drop_table('floatingip_allocations')
    op.drop_table('floatingip_reservations')
    op.drop_table('floatingips')
