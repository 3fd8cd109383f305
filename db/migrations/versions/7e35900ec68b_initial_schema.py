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

"""Initial schema

Revision ID: 7e35900ec68b
Revises:
Create Date: 2026-11-23 08:55:30.954390
"""

from alembic import op
import sqlalchemy as sa

revision = '7e35900ec68b'
down_revision = None
branch_labels = None
depends_on = None

# Every constraint is named (pk_<table>, uq_<table>_<column>,
# fk_<table>_<column>_<referred table>) so that later migrations can
# drop or alter it by the same name on every backend.
_TABLES = ('computehosts', 'leases', 'events', 'host_capabilities',
           'lease_projects', 'reservations', 'host_allocations',
           'host_reservations', 'instance_reservations',
           'volume_reservations')


def _id(name='id'):
    return sa.Column(name, sa.String(36), nullable=False)


def _timestamps():
    return (sa.Column('created_at', sa.DateTime(), nullable=False),
            sa.Column('updated_at', sa.DateTime(), nullable=True))


def _fk(table, column, referred, ondelete='CASCADE'):
    return sa.ForeignKeyConstraint(
        [column], [referred + '.id'], ondelete=ondelete,
        name='fk_%s_%s_%s' % (table, column, referred))


def _request_table(table, *columns):
    """A table of the request of one reservation (host/instance/volume)."""
    op.create_table(
        table,
        _id(),
        _id('reservation_id'),
        *columns,
        sa.Column('on_end', sa.String(36), nullable=True),
        sa.PrimaryKeyConstraint('id', name='pk_' + table),
        sa.UniqueConstraint('reservation_id',
                            name='uq_%s_reservation_id' % table),
        _fk(table, 'reservation_id', 'reservations'))


def upgrade():
    op.create_table(
        'computehosts',
        sa.Column('id', sa.Integer(), autoincrement=True, nullable=False),
        sa.Column('hypervisor_hostname', sa.String(255), nullable=False),
        sa.Column('service_name', sa.String(255), nullable=True),
        sa.Column('availability_zone', sa.String(255), nullable=True),
        sa.Column('hypervisor_type', sa.String(255), nullable=True),
        sa.Column('hypervisor_version', sa.BigInteger(), nullable=True),
        sa.Column('vcpus', sa.Integer(), nullable=False),
        sa.Column('memory_mb', sa.Integer(), nullable=False),
        sa.Column('local_gb', sa.Integer(), nullable=False),
        sa.Column('cpu_info', sa.Text(), nullable=True),
        sa.Column('reservable', sa.Boolean(), nullable=False),
        sa.Column('status', sa.String(16), nullable=True),
        sa.Column('trust_id', sa.String(64), nullable=True),
        sa.Column('generation', sa.Integer(), nullable=False),
        *_timestamps(),
        sa.PrimaryKeyConstraint('id', name='pk_computehosts'),
        sa.UniqueConstraint('hypervisor_hostname',
                            name='uq_computehosts_hypervisor_hostname'))

    op.create_table(
        'leases',
        _id(),
        sa.Column('name', sa.String(80), nullable=False),
        sa.Column('user_id', sa.String(64), nullable=True),
        sa.Column('project_id', sa.String(64), nullable=False),
        sa.Column('trust_id', sa.String(64), nullable=True),
        sa.Column('start_date', sa.DateTime(), nullable=False),
        sa.Column('end_date', sa.DateTime(), nullable=False),
        sa.Column('before_end_date', sa.DateTime(), nullable=True),
        sa.Column('status', sa.String(16), nullable=False),
        sa.Column('status_reason', sa.Text(), nullable=True),
        sa.Column('degraded', sa.Boolean(), nullable=False),
        *_timestamps(),
        sa.PrimaryKeyConstraint('id', name='pk_leases'),
        sa.UniqueConstraint('project_id', 'name',
                            name='uniq_leases0project_id0name'),
        sa.Index('leases_status_idx', 'status'))

    op.create_table(
        'events',
        _id(),
        _id('lease_id'),
        sa.Column('event_type', sa.String(32), nullable=False),
        sa.Column('time', sa.DateTime(), nullable=False),
        sa.Column('status', sa.String(16), nullable=False),
        sa.Column('claimed_by', sa.String(255), nullable=True),
        sa.Column('claim_expires_at', sa.DateTime(), nullable=True),
        sa.Column('attempts', sa.Integer(), nullable=False),
        sa.Column('retry_at', sa.DateTime(), nullable=True),
        sa.Column('message', sa.Text(), nullable=True),
        *_timestamps(),
        sa.PrimaryKeyConstraint('id', name='pk_events'),
        _fk('events', 'lease_id', 'leases'),
        sa.Index('events_lease_id_idx', 'lease_id'),
        sa.Index('events_status_time_idx', 'status', 'time'))

    op.create_table(
        'host_capabilities',
        sa.Column('id', sa.Integer(), autoincrement=True, nullable=False),
        sa.Column('host_id', sa.Integer(), nullable=False),
        sa.Column('name', sa.String(255), nullable=False),
        sa.Column('value', sa.String(255), nullable=False),
        sa.Column('num_value', sa.Float(), nullable=True),
        sa.PrimaryKeyConstraint('id', name='pk_host_capabilities'),
        _fk('host_capabilities', 'host_id', 'computehosts'),
        sa.UniqueConstraint('host_id', 'name',
                            name='uniq_host_capabilities0host_id0name'),
        sa.Index('host_capabilities_name_value_idx', 'name', 'value'))

    op.create_table(
        'lease_projects',
        _id('lease_id'),
        sa.Column('project_id', sa.String(64), nullable=False),
        sa.PrimaryKeyConstraint('lease_id', 'project_id',
                                name='pk_lease_projects'),
        _fk('lease_projects', 'lease_id', 'leases'))

    op.create_table(
        'reservations',
        _id(),
        _id('lease_id'),
        sa.Column('resource_type', sa.String(64), nullable=False),
        sa.Column('resource_id', sa.String(36), nullable=True),
        sa.Column('status', sa.String(16), nullable=False),
        sa.Column('missing_resources', sa.Boolean(), nullable=False),
        sa.Column('resources_changed', sa.Boolean(), nullable=False),
        *_timestamps(),
        sa.PrimaryKeyConstraint('id', name='pk_reservations'),
        _fk('reservations', 'lease_id', 'leases'),
        sa.Index('reservations_lease_id_idx', 'lease_id'))

    op.create_table(
        'host_allocations',
        _id(),
        sa.Column('host_id', sa.Integer(), nullable=False),
        _id('reservation_id'),
        sa.Column('start_date', sa.DateTime(), nullable=False),
        sa.Column('end_date', sa.DateTime(), nullable=False),
        sa.Column('whole_host', sa.Boolean(), nullable=False),
        sa.Column('vcpus', sa.Integer(), nullable=False),
        sa.Column('memory_mb', sa.Integer(), nullable=False),
        sa.Column('disk_gb', sa.Integer(), nullable=False),
        sa.PrimaryKeyConstraint('id', name='pk_host_allocations'),
        # No cascade: a host with allocations must not disappear.
        _fk('host_allocations', 'host_id', 'computehosts', ondelete=None),
        _fk('host_allocations', 'reservation_id', 'reservations'),
        sa.Index('host_allocations_host_window_idx',
                 'host_id', 'start_date', 'end_date'),
        sa.Index('host_allocations_reservation_id_idx', 'reservation_id'))

    _request_table(
        'host_reservations',
        sa.Column('min', sa.Integer(), nullable=False),
        sa.Column('max', sa.Integer(), nullable=False),
        sa.Column('hypervisor_properties', sa.Text(), nullable=True),
        sa.Column('resource_properties', sa.Text(), nullable=True),
        sa.Column('requested_hosts', sa.Text(), nullable=True),
        sa.Column('before_end', sa.String(36), nullable=True),
        sa.Column('aggregate_id', sa.Integer(), nullable=True))

    _request_table(
        'instance_reservations',
        sa.Column('vcpus', sa.Integer(), nullable=False),
        sa.Column('memory_mb', sa.Integer(), nullable=False),
        sa.Column('disk_gb', sa.Integer(), nullable=False),
        sa.Column('amount', sa.Integer(), nullable=False),
        sa.Column('affinity', sa.Boolean(), nullable=True),
        sa.Column('resource_properties', sa.Text(), nullable=True),
        sa.Column('flavor_id', sa.String(255), nullable=True),
        sa.Column('server_id', sa.String(36), nullable=True),
        sa.Column('server_group_id', sa.String(36), nullable=True),
        sa.Column('aggregate_id', sa.Integer(), nullable=True))

    _request_table(
        'volume_reservations',
        sa.Column('size_gb', sa.Integer(), nullable=False),
        sa.Column('volume_id', sa.String(36), nullable=True),
        sa.Column('volume_type', sa.String(255), nullable=True),
        sa.Column('availability_zone', sa.String(255), nullable=True))


def downgrade():
    # Referring tables first; their indexes go with them.
    for table in reversed(_TABLES):
        op.drop_table(table)
