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

"""host_preemptible_work: the preemptible work each host runs

The engine surveys the preemptible servers on the reservable hosts; the
planner books the hosts that would lose least of that work first, for
the bookings that start within the preemption lead time.

Revision ID: c9f1e3a5b7d4
Revises: b7e3c9a1f5d2
Create Date: 2026-11-29 03:10:00
"""

from alembic import op
import sqlalchemy as sa
from sqlalchemy.dialects import mysql

revision = 'c9f1e3a5b7d4'
down_revision = 'b7e3c9a1f5d2'
branch_labels = None
depends_on = None

DATETIME = sa.DateTime().with_variant(mysql.DATETIME(fsp=6), 'mysql',
                                      'mariadb')


def upgrade():
    op.create_table(
        'host_preemptible_work',
        sa.Column('host_id', sa.Integer(), autoincrement=False,
                  nullable=False),
        sa.Column('vcpus', sa.Integer(), nullable=False),
        sa.Column('vcpu_start_sum', sa.BigInteger(), nullable=False),
        sa.Column('recorded_at', DATETIME, nullable=False),
        sa.ForeignKeyConstraint(['host_id'], ['computehosts.id'],
                                name='fk_host_preemptible_work_host_id',
                                ondelete='CASCADE'),
        sa.PrimaryKeyConstraint('host_id', name='pk_host_preemptible_work'),
        mysql_charset='utf8mb4', mysql_collate='utf8mb4_bin')


def downgrade():
    op.drop_table('host_preemptible_work')
