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

"""instance_reservations.build_args

Revision ID: 9b4e1d7c2a60
Revises: 5a7d2c91e0f3
Create Date: 2026-11-23 17:00:00
"""

from alembic import op
import sqlalchemy as sa

revision = '9b4e1d7c2a60'
down_revision = '5a7d2c91e0f3'
branch_labels = None
depends_on = None


def upgrade():
    with op.batch_alter_table('instance_reservations') as batch:
        batch.add_column(sa.Column('build_args', sa.Text(), nullable=True))
        batch.create_index('instance_reservations_server_id_idx',
                           ['server_id'])


def downgrade():
    with op.batch_alter_table('instance_reservations') as batch:
        batch.drop_index('instance_reservations_server_id_idx')
        batch.drop_column('build_args')
