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

"""host_monitor_state: one engine reads Nova's services per interval

Revision ID: 6f2c8a4e1d93
Revises: d5e9a7c3f1b6
Create Date: 2026-11-25 15:05:00
"""

from alembic import op
import sqlalchemy as sa

revision = '6f2c8a4e1d93'
down_revision = 'd5e9a7c3f1b6'
branch_labels = None
depends_on = None


def upgrade():
    op.create_table(
        'host_monitor_state',
        sa.Column('id', sa.Integer(), autoincrement=False, nullable=False),
        sa.Column('next_check', sa.DateTime(), nullable=False),
        sa.PrimaryKeyConstraint('id', name='pk_host_monitor_state'))


def downgrade():
    op.drop_table('host_monitor_state')
