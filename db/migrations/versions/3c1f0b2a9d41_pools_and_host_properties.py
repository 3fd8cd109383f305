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

"""pool_state, host_properties, host request constraints

Revision ID: 3c1f0b2a9d41
Revises: 7e35900ec68b
Create Date: 2026-11-23 11:00:00
"""

from alembic import op
import sqlalchemy as sa

revision = '3c1f0b2a9d41'
down_revision = '7e35900ec68b'
branch_labels = None
depends_on = None

_MINIMUMS = ('min_vcpus', 'min_memory_mb', 'min_local_gb')


def upgrade():
    op.create_table(
        'pool_state',
        sa.Column('id', sa.Integer(), autoincrement=False, nullable=False),
        sa.Column('generation', sa.Integer(), nullable=False),
        sa.PrimaryKeyConstraint('id', name='pk_pool_state'))
    op.create_table(
        'host_properties',
        sa.Column('name', sa.String(255), nullable=False),
        sa.Column('private', sa.Boolean(), nullable=False),
        sa.PrimaryKeyConstraint('name', name='pk_host_properties'))
    with op.batch_alter_table('host_reservations') as batch:
        batch.add_column(sa.Column('availability_zone', sa.String(255),
                                   nullable=True))
        for column in _MINIMUMS:
            batch.add_column(sa.Column(column, sa.Integer(), nullable=True))


def downgrade():
    with op.batch_alter_table('host_reservations') as batch:
        for column in ('availability_zone',) + _MINIMUMS:
            batch.drop_column(column)
    op.drop_table('host_properties')
    op.drop_table('pool_state')
