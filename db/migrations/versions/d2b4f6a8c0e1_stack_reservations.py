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

"""stack reservations: heat:stack requests, their needs and their stacks

Revision ID: d2b4f6a8c0e1
Revises: cc24918655da
Create Date: 2026-11-28 06:40:00
"""

from alembic import op
import sqlalchemy as sa

revision = 'd2b4f6a8c0e1'
down_revision = 'cc24918655da'
branch_labels = None
depends_on = None

MYSQL = {'mysql_charset': 'utf8mb4', 'mysql_collate': 'utf8mb4_bin'}


def upgrade():
    op.create_table(
        'stack_reservations',
        sa.Column('id', sa.String(36), nullable=False),
        sa.Column('reservation_id', sa.String(36), nullable=False),
        sa.Column('template', sa.Text(), nullable=False),
        sa.Column('parameters', sa.Text(), nullable=False),
        sa.Column('environment', sa.Text(), nullable=True),
        sa.Column('on_end', sa.String(32), nullable=False),
        sa.Column('servers', sa.Text(), nullable=False),
        sa.Column('volume_gb', sa.Integer(), nullable=False),
        sa.Column('floating_ips', sa.Text(), nullable=False),
        sa.Column('trust_id', sa.String(64), nullable=True),
        sa.Column('stack_id', sa.String(36), nullable=True),
        sa.Column('stack_status', sa.String(64), nullable=True),
        sa.Column('stack_status_reason', sa.Text(), nullable=True),
        sa.ForeignKeyConstraint(
            ['reservation_id'], ['reservations.id'],
            name='fk_stack_reservations_reservation_id_reservations',
            ondelete='CASCADE'),
        sa.PrimaryKeyConstraint('id', name='pk_stack_reservations'),
        sa.UniqueConstraint(
            'reservation_id', name='uq_stack_reservations_reservation_id'),
        **MYSQL)


def downgrade():
    op.drop_table('stack_reservations')
