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

"""computehosts without status and trust_id

Nothing ever wrote them: the host view shows both as null, as Blazar's
``status`` is, and the service acts without a trust of the host's operator.

Revision ID: c4d8e2f1a7b3
Revises: 9b4e1d7c2a60
Create Date: 2026-11-23 20:00:00
"""

from alembic import op
import sqlalchemy as sa

revision = 'c4d8e2f1a7b3'
down_revision = '9b4e1d7c2a60'
branch_labels = None
depends_on = None


def upgrade():
    with op.batch_alter_table('computehosts') as batch:
        batch.drop_column('status')
        batch.drop_column('trust_id')


def downgrade():
    with op.batch_alter_table('computehosts') as batch:
        batch.add_column(sa.Column('status', sa.String(16), nullable=True))
        batch.add_column(sa.Column('trust_id', sa.String(64),
                                   nullable=True))
