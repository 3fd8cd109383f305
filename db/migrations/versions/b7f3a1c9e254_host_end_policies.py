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

"""end policies of host reservations: grace period and recycling

A host reservation's grace period and where its end stands, and the
recycling pool: hosts of ended reservations waiting for their instances
to go.

Revision ID: b7f3a1c9e254
Revises: e1a6b3d5c872
Create Date: 2026-11-25 07:00:00
"""

from alembic import op
import sqlalchemy as sa

revision = 'b7f3a1c9e254'
down_revision = 'e1a6b3d5c872'
branch_labels = None
depends_on = None


def upgrade():
    with op.batch_alter_table('host_reservations') as batch:
        batch.add_column(sa.Column('grace_period', sa.Integer(),
                                   nullable=True))
        batch.add_column(sa.Column('end_phase', sa.String(16),
                                   nullable=True))
        batch.add_column(sa.Column('act_at', sa.DateTime(), nullable=True))
    op.create_table(
        'recycling_hosts',
        sa.Column('host_id', sa.Integer(), nullable=False),
        sa.Column('reservation_id', sa.String(36), nullable=False),
        sa.Column('check_at', sa.DateTime(), nullable=False),
        sa.ForeignKeyConstraint(
            ['host_id'], ['computehosts.id'], ondelete='CASCADE',
            name='fk_recycling_hosts_host_id_computehosts'),
        sa.PrimaryKeyConstraint('host_id', name='pk_recycling_hosts'))


def downgrade():
    op.drop_table('recycling_hosts')
    with op.batch_alter_table('host_reservations') as batch:
        batch.drop_column('act_at')
        batch.drop_column('end_phase')
        batch.drop_column('grace_period')
