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

"""instance-capacity reservations: seats and the source flavor

A slice of an instance-capacity reservation is a seat: the server that
took it (or the claim of a boot that is taking it). A flavor:instance
reservation keeps the shape of the flavor it was made from.

Revision ID: a8c2e5f0b3d7
Revises: f3b9c1d7e2a4
Create Date: 2026-11-25 10:00:00
"""

from alembic import op
import sqlalchemy as sa

revision = 'a8c2e5f0b3d7'
down_revision = 'f3b9c1d7e2a4'
branch_labels = None
depends_on = None


def upgrade():
    with op.batch_alter_table('host_allocations') as batch:
        batch.add_column(sa.Column('server_id', sa.String(36),
                                   nullable=True))
        batch.create_index('host_allocations_server_id_idx', ['server_id'])
    with op.batch_alter_table('instance_reservations') as batch:
        batch.add_column(sa.Column('source_flavor', sa.Text(),
                                   nullable=True))


def downgrade():
    with op.batch_alter_table('instance_reservations') as batch:
        batch.drop_column('source_flavor')
    with op.batch_alter_table('host_allocations') as batch:
        batch.drop_index('host_allocations_server_id_idx')
        batch.drop_column('server_id')
