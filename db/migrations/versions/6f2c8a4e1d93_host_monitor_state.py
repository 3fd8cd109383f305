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
Revises: 4c69f26fae5c
Create Date: 2026-11-25 15:05:00
"""

from alembic import op
import sqlalchemy as sa
from sqlalchemy.dialects import mysql

revision = '6f2c8a4e1d93'
down_revision = '4c69f26fae5c'
branch_labels = None
depends_on = None


def upgrade():
    op.create_table(
        'host_monitor_state',
        sa.Column('id', sa.Integer(), autoincrement=False, nullable=False),
        # Microseconds and exact strings on MariaDB too, as migration
        # 4c69f26fae5c made every other table.
        sa.Column('next_check', sa.DateTime().with_variant(
            mysql.DATETIME(fsp=6), 'mysql', 'mariadb'), nullable=False),
        sa.PrimaryKeyConstraint('id', name='pk_host_monitor_state'),
        mysql_charset='utf8mb4', mysql_collate='utf8mb4_bin')


def downgrade():
    op.drop_table('host_monitor_state')
