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

"""events: what an event that waits waits for, since when, until when

Revision ID: 2b6e9d4f1c85
Revises: 8d3f6b2e4a19
Create Date: 2026-11-27 10:00:00
"""

from alembic import op
import sqlalchemy as sa
from sqlalchemy.dialects import mysql

revision = '2b6e9d4f1c85'
down_revision = '8d3f6b2e4a19'
branch_labels = None
depends_on = None


def _datetime():
    # Microseconds on MariaDB too, as migration 4c69f26fae5c made every
    # other table.
    return sa.DateTime().with_variant(mysql.DATETIME(fsp=6), 'mysql',
                                      'mariadb')


def upgrade():
    with op.batch_alter_table('events') as batch:
        batch.add_column(sa.Column('waits', sa.Text(), nullable=True))
        batch.add_column(sa.Column('waits_since', _datetime(),
                                   nullable=True))
        batch.add_column(sa.Column('wait_deadline', _datetime(),
                                   nullable=True))


def downgrade():
    with op.batch_alter_table('events') as batch:
        batch.drop_column('wait_deadline')
        batch.drop_column('waits_since')
        batch.drop_column('waits')
