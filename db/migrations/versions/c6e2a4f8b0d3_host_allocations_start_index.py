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

"""host allocations by start: the bookings that start soon

The scheduler's ReservationWeigher reads, once per preemptible request,
the bookings that start within its horizon, host by host: an index range
on the start date that holds the host and whether the row is a booking
(a proposal's hold always expires, a booking never does).

Revision ID: c6e2a4f8b0d3
Revises: b3e8d1f5a7c9
Create Date: 2026-11-28 17:00:00
"""

from alembic import op

revision = 'c6e2a4f8b0d3'
down_revision = 'b3e8d1f5a7c9'
branch_labels = None
depends_on = None


def upgrade():
    op.create_index('host_allocations_start_idx', 'host_allocations',
                    ['start_date', 'host_id', 'expires_at'])


def downgrade():
    op.drop_index('host_allocations_start_idx',
                  table_name='host_allocations')
