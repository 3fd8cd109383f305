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

"""reclaims of preemptible capacity

Per booking: the start for which the preemptible servers in its way were
stopped, and the claim of the engine stopping them; an index on the end,
for the engine's search of the bookings not ended yet.

Revision ID: f3b9c1d7e2a4
Revises: b7f3a1c9e254
Create Date: 2026-11-25 10:00:00
"""

from alembic import op
import sqlalchemy as sa

revision = 'f3b9c1d7e2a4'
down_revision = 'b7f3a1c9e254'
branch_labels = None
depends_on = None


def upgrade():
    with op.batch_alter_table('host_allocations') as batch:
        batch.add_column(sa.Column('reclaimed_for', sa.DateTime(),
                                   nullable=True))
        batch.add_column(sa.Column('reclaim_claimed_until', sa.DateTime(),
                                   nullable=True))
        batch.create_index('host_allocations_end_date_idx', ['end_date'])


def downgrade():
    with op.batch_alter_table('host_allocations') as batch:
        batch.drop_index('host_allocations_end_date_idx')
        batch.drop_column('reclaim_claimed_until')
        batch.drop_column('reclaimed_for')
