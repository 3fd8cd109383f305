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

"""engine_heartbeats: each engine's last successful poll

Revision ID: 8d3f6b2e4a19
Revises: 1c5e7a9b3d20
Create Date: 2026-11-27 06:45:00
"""

from alembic import op
import sqlalchemy as sa
from sqlalchemy.dialects import mysql

revision = '8d3f6b2e4a19'
down_revision = '1c5e7a9b3d20'
branch_labels = None
depends_on = None


def _datetime():
    # Microseconds on MariaDB too, as migration 4c69f26fae5c made every
    # other table.
    return sa.DateTime().with_variant(mysql.DATETIME(fsp=6), 'mysql',
                                      'mariadb')


def upgrade():
    op.create_table(
        'engine_heartbeats',
        sa.Column('engine_id', sa.String(255), nullable=False),
        sa.Column('host', sa.String(255), nullable=False),
        sa.Column('pid', sa.Integer(), nullable=False),
        sa.Column('version', sa.String(64), nullable=False),
        sa.Column('started_at', _datetime(), nullable=False),
        sa.Column('last_poll_at', _datetime(), nullable=True),
        sa.PrimaryKeyConstraint('engine_id', name='pk_engine_heartbeats'),
        mysql_charset='utf8mb4', mysql_collate='utf8mb4_bin')


def downgrade():
    op.drop_table('engine_heartbeats')
