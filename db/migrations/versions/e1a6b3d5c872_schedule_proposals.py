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

"""schedule proposals and their holds

A proposal holds capacity until it expires: host_allocations rows that
belong to a proposal instead of a reservation, and GB of volume capacity
on the proposal's row.

Revision ID: e1a6b3d5c872
Revises: c4d8e2f1a7b3
Create Date: 2026-11-24 13:00:00
"""

from alembic import op
import sqlalchemy as sa

revision = 'e1a6b3d5c872'
down_revision = 'c4d8e2f1a7b3'
branch_labels = None
depends_on = None

_WINDOW_INDEX = 'host_allocations_host_window_idx'
# Serves the host_id foreign key while the window index is rebuilt: MySQL
# and MariaDB refuse to drop the index a foreign key uses (error 1553).
_HOST_INDEX = 'host_allocations_host_id_tmp_idx'
_OWNER_CHECK = '(reservation_id IS NULL) <> (proposal_id IS NULL)'


def upgrade():
    op.create_table(
        'proposals',
        sa.Column('id', sa.String(36), nullable=False),
        sa.Column('request_id', sa.String(36), nullable=False),
        sa.Column('project_id', sa.String(64), nullable=False),
        sa.Column('user_id', sa.String(64), nullable=True),
        sa.Column('start_date', sa.DateTime(), nullable=False),
        sa.Column('end_date', sa.DateTime(), nullable=False),
        sa.Column('expires_at', sa.DateTime(), nullable=False),
        sa.Column('reservations', sa.Text(), nullable=False),
        sa.Column('volume_gb', sa.Integer(), nullable=False),
        sa.Column('created_at', sa.DateTime(), nullable=False),
        sa.Column('updated_at', sa.DateTime(), nullable=True),
        sa.PrimaryKeyConstraint('id', name='pk_proposals'))
    op.create_index('proposals_request_id_idx', 'proposals', ['request_id'])
    op.create_index('proposals_expires_at_idx', 'proposals', ['expires_at'])
    op.create_index(_HOST_INDEX, 'host_allocations', ['host_id'])
    op.drop_index(_WINDOW_INDEX, table_name='host_allocations')
    with op.batch_alter_table('host_allocations') as batch:
        batch.alter_column('reservation_id', existing_type=sa.String(36),
                           nullable=True)
        batch.add_column(sa.Column('proposal_id', sa.String(36),
                                   nullable=True))
        batch.add_column(sa.Column('proposal_item', sa.Integer(),
                                   nullable=True))
        batch.add_column(sa.Column('expires_at', sa.DateTime(),
                                   nullable=True))
        batch.create_foreign_key(
            'fk_host_allocations_proposal_id_proposals', 'proposals',
            ['proposal_id'], ['id'], ondelete='CASCADE')
        batch.create_check_constraint('ck_host_allocations_owner',
                                      _OWNER_CHECK)
    op.create_index('host_allocations_proposal_id_idx', 'host_allocations',
                    ['proposal_id'])
    op.create_index(_WINDOW_INDEX, 'host_allocations',
                    ['host_id', 'start_date', 'end_date', 'expires_at'])
    op.drop_index(_HOST_INDEX, table_name='host_allocations')


def downgrade():
    # Holds go with their proposals; bookings keep their reservation.
    op.execute('DELETE FROM host_allocations WHERE reservation_id IS NULL')
    op.create_index(_HOST_INDEX, 'host_allocations', ['host_id'])
    op.drop_index(_WINDOW_INDEX, table_name='host_allocations')
    with op.batch_alter_table('host_allocations') as batch:
        batch.drop_constraint('ck_host_allocations_owner', type_='check')
        batch.drop_constraint('fk_host_allocations_proposal_id_proposals',
                              type_='foreignkey')
        # After its foreign key: MySQL keeps the index a key uses.
        batch.drop_index('host_allocations_proposal_id_idx')
        batch.drop_column('expires_at')
        batch.drop_column('proposal_item')
        batch.drop_column('proposal_id')
        batch.alter_column('reservation_id', existing_type=sa.String(36),
                           nullable=False)
    op.create_index(_WINDOW_INDEX, 'host_allocations',
                    ['host_id', 'start_date', 'end_date'])
    op.drop_index(_HOST_INDEX, table_name='host_allocations')
    op.drop_table('proposals')
