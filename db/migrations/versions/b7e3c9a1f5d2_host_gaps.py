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

"""host gaps: the gap index of the hosts' bookings (SQLite)

An R*Tree of the free stretches between each host's bookings, kept by
triggers (:mod:`db.host_gaps`): the free-host search of a full pool
reads the few hosts with a gap that holds its window instead of testing
every host. Made for the hosts and bookings already there. PostgreSQL
and MariaDB have none: nothing to do there.

Revision ID: b7e3c9a1f5d2
Revises: a8d4f2c6e1b9
Create Date: 2026-11-28 23:30:00
"""

from alembic import op

from db import host_gaps

revision = 'b7e3c9a1f5d2'
down_revision = 'a8d4f2c6e1b9'
branch_labels = None
depends_on = None


def upgrade():
    bind = op.get_bind()
    if bind.dialect.name == 'sqlite':
        host_gaps.create(bind)


def downgrade():
    bind = op.get_bind()
    if bind.dialect.name == 'sqlite':
        host_gaps.drop(bind)
