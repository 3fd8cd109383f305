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

"""host weights: the hosts with a capability in the order of its number

The planner's searches ordered by ``[power] host_weight_property`` read
the weighted hosts in index order and stop at the hosts they want, the
lowest number first or the highest (a descending twin: the ties go by
ascending host id either way).

Revision ID: 1c5e7a9b3d20
Revises: 0a7b3c5d9e21
Create Date: 2026-11-25 21:00:00
"""

from alembic import op
import sqlalchemy as sa

revision = '1c5e7a9b3d20'
down_revision = '0a7b3c5d9e21'
branch_labels = None
depends_on = None


def upgrade():
    op.create_index('host_capabilities_weight_idx', 'host_capabilities',
                    ['name', 'num_value', 'host_id'])
    op.create_index('host_capabilities_weight_desc_idx', 'host_capabilities',
                    ['name', sa.text('num_value DESC'), 'host_id'])


def downgrade():
    op.drop_index('host_capabilities_weight_desc_idx',
                  table_name='host_capabilities')
    op.drop_index('host_capabilities_weight_idx',
                  table_name='host_capabilities')
