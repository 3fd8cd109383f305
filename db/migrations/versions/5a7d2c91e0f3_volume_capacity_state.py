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

"""volume_capacity_state

Revision ID: 5a7d2c91e0f3
Revises: 3c1f0b2a9d41
Create Date: 2026-11-23 11:40:00
"""

from alembic import op
import sqlalchemy as sa

revision = '5a7d2c91e0f3'
down_revision = '3c1f0b2a9d41'
branch_labels = None
depends_on = None


def upgrade():
    op.create_table(
        'volume_capacity_state',
        sa.Column('id', sa.Integer(), autoincrement=False, nullable=False),
        sa.Column('generation', sa.Integer(), nullable=False),
        sa.PrimaryKeyConstraint('id', name='pk_volume_capacity_state'))


def downgrade():
    op.drop_table('volume_capacity_state')
