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

"""failed hosts healed: host failures and moved bookings

A reservable host whose nova-compute service is down or disabled carries
when the engine's host monitor found it so, and why; a booking of a
started reservation moved off a failed host carries that host until the
Nova side of the move is done, and the claim of the engine doing it.

Revision ID: d5e9a7c3f1b6
Revises: a8c2e5f0b3d7
Create Date: 2026-11-25 14:00:00
"""

from alembic import op
import sqlalchemy as sa

revision = 'd5e9a7c3f1b6'
down_revision = 'a8c2e5f0b3d7'
branch_labels = None
depends_on = None


def upgrade():
    with op.batch_alter_table('computehosts') as batch:
        batch.add_column(sa.Column('failed_at', sa.DateTime(),
                                   nullable=True))
        batch.add_column(sa.Column('failure', sa.String(16), nullable=True))
    with op.batch_alter_table('host_allocations') as batch:
        batch.add_column(sa.Column('moved_from', sa.Integer(),
                                   nullable=True))
        batch.add_column(sa.Column('move_claimed_until', sa.DateTime(),
                                   nullable=True))


def downgrade():
    with op.batch_alter_table('host_allocations') as batch:
        batch.drop_column('move_claimed_until')
        batch.drop_column('moved_from')
    with op.batch_alter_table('computehosts') as batch:
        batch.drop_column('failure')
        batch.drop_column('failed_at')
