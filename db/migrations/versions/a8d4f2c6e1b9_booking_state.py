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

"""booking_state: the generation of what preemptible servers depend on

The scheduler's filter and weigher keep the hosts closed to preemptibles
and their reclaim times per process, and read them again only when this
generation moved.

Revision ID: a8d4f2c6e1b9
Revises: c6e2a4f8b0d3
Create Date: 2026-11-28 19:30:00
"""

from alembic import op
import sqlalchemy as sa

revision = 'a8d4f2c6e1b9'
down_revision = 'c6e2a4f8b0d3'
branch_labels = None
depends_on = None


def upgrade():
    op.create_table(
        'booking_state',
        sa.Column('id', sa.Integer(), autoincrement=False, nullable=False),
        sa.Column('generation', sa.Integer(), nullable=False),
        sa.PrimaryKeyConstraint('id', name='pk_booking_state'))


def downgrade():
    op.drop_table('booking_state')
