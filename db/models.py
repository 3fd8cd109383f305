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

"""SQLAlchemy models of the leases DB.

Times are naive UTC datetimes. Allocations carry their own copy of the
reservation window so that the planner finds busy hosts with one indexed
query, without joining leases.

``created_at`` and ``updated_at`` are filled in from the clock of the
transaction (:func:`db.api.writer` puts it in the execution option
:data:`CLOCK`), never from the system clock, so that a test's or a
benchmark's clock governs them as it governs every other "now". A
statement that needs a timestamp and runs without a clock fails.
"""

import collections

import sqlalchemy as sa
from sqlalchemy.dialects import mysql
from sqlalchemy import orm

from db import host_gaps

ID = sa.String(36)
PROJECT = sa.String(64)

# MySQL and MariaDB: see MYSQL_TABLE_OPTIONS. Their DATETIME drops the
# microseconds, their FLOAT is single precision; PostgreSQL's and
# SQLite's keep both. Their DOUBLE is read as a float, as Float is on
# the others (SQLAlchemy's reads a Decimal, which JSON cannot write).
_MYSQL = ('mysql', 'mariadb')
DateTime = sa.DateTime().with_variant(mysql.DATETIME(fsp=6), *_MYSQL)
Float = sa.Float().with_variant(mysql.DOUBLE(asdecimal=False), *_MYSQL)

# Every table on MySQL and MariaDB: utf8mb4, with its binary collation, so
# that strings compare exactly (case and accents count), byte by byte in
# UTF-8, as on PostgreSQL and SQLite: host names and lease names are
# unique as written, capability values compare as nova's "s==" does.
MYSQL_TABLE_OPTIONS = {'mysql_charset': 'utf8mb4',
                       'mysql_collate': 'utf8mb4_bin'}

# Execution option holding the transaction's clock: any object whose
# ``now()`` returns a naive UTC datetime.
CLOCK = 'reservation_clock'


def _now(context):
    """Get the transaction clock's now (a context-sensitive column default)."""
    clock = context.execution_options.get(CLOCK)
    if clock is None:
        raise RuntimeError(
            'A timestamped row of the leases DB was written without a '
            'clock: write it inside db.api.writer(ctx, clock).')
    return clock.now()


class Base(orm.DeclarativeBase):
    # Constraint names the same on every backend (and as the migrations
    # spell them), so that later migrations can drop or alter them.
    metadata = sa.MetaData(naming_convention={
        'pk': 'pk_%(table_name)s',
        'uq': 'uq_%(table_name)s_%(column_0_name)s',
        'fk': 'fk_%(table_name)s_%(column_0_name)s_%(referred_table_name)s',
    })


class TimestampMixin:
    created_at = sa.Column(DateTime, nullable=False, default=_now)
    updated_at = sa.Column(DateTime, nullable=True, onupdate=_now)


class Lease(TimestampMixin, Base):
    __tablename__ = 'leases'
    __table_args__ = (
        sa.UniqueConstraint('project_id', 'name',
                            name='uniq_leases0project_id0name'),
        sa.Index('leases_status_idx', 'status'),
    )

    id = sa.Column(ID, primary_key=True)
    name = sa.Column(sa.String(80), nullable=False)
    user_id = sa.Column(PROJECT, nullable=True)
    project_id = sa.Column(PROJECT, nullable=False)
    trust_id = sa.Column(PROJECT, nullable=True)
    start_date = sa.Column(DateTime, nullable=False)
    end_date = sa.Column(DateTime, nullable=False)
    before_end_date = sa.Column(DateTime, nullable=True)
    status = sa.Column(sa.String(16), nullable=False)
    status_reason = sa.Column(sa.Text, nullable=True)
    degraded = sa.Column(sa.Boolean, nullable=False, default=False)


class LeaseProject(Base):
    """A project, besides the owner, that may use a lease's resources."""

    __tablename__ = 'lease_projects'

    lease_id = sa.Column(ID, sa.ForeignKey('leases.id', ondelete='CASCADE'),
                         primary_key=True)
    project_id = sa.Column(PROJECT, primary_key=True)


class Reservation(TimestampMixin, Base):
    __tablename__ = 'reservations'
    __table_args__ = (sa.Index('reservations_lease_id_idx', 'lease_id'),)

    id = sa.Column(ID, primary_key=True)
    lease_id = sa.Column(ID, sa.ForeignKey('leases.id', ondelete='CASCADE'),
                         nullable=False)
    resource_type = sa.Column(sa.String(64), nullable=False)
    resource_id = sa.Column(sa.String(36), nullable=True)
    status = sa.Column(sa.String(16), nullable=False)
    missing_resources = sa.Column(sa.Boolean, nullable=False, default=False)
    resources_changed = sa.Column(sa.Boolean, nullable=False, default=False)


def _reservation_fk():
    return sa.Column(ID, sa.ForeignKey('reservations.id', ondelete='CASCADE'),
                     nullable=False, unique=True)


class HostReservation(Base):
    """The request of a physical:host reservation."""

    __tablename__ = 'host_reservations'

    id = sa.Column(ID, primary_key=True)
    reservation_id = _reservation_fk()
    min = sa.Column(sa.Integer, nullable=False)
    max = sa.Column(sa.Integer, nullable=False)
    hypervisor_properties = sa.Column(sa.Text, nullable=True)
    resource_properties = sa.Column(sa.Text, nullable=True)
    requested_hosts = sa.Column(sa.Text, nullable=True)
    before_end = sa.Column(sa.String(36), nullable=True)
    on_end = sa.Column(sa.String(36), nullable=True)
    aggregate_id = sa.Column(sa.Integer, nullable=True)
    availability_zone = sa.Column(sa.String(255), nullable=True)
    min_vcpus = sa.Column(sa.Integer, nullable=True)
    min_memory_mb = sa.Column(sa.Integer, nullable=True)
    min_local_gb = sa.Column(sa.Integer, nullable=True)
    # Seconds after the end during which the instances keep running and
    # the hosts stay the reservation's (its allocations cover them).
    grace_period = sa.Column(sa.Integer, nullable=True)
    # Where the end stands: NULL before it, 'grace' while the grace
    # period runs, 'done' once on_end was carried out.
    end_phase = sa.Column(sa.String(16), nullable=True)
    # While in grace: when the engine acts next (the end of the grace
    # period, then the expiry of the claim of the engine acting).
    act_at = sa.Column(DateTime, nullable=True)


class RecyclingHost(Base):
    """A host of an ended reservation (on_end recycle) not yet recycled.

    The host takes no new instance, whatever lease holds it, until the
    instances left on it are gone; then the row goes and the host is free
    again. Not tied to the lease: a lease may be deleted while its hosts
    recycle.
    """

    __tablename__ = 'recycling_hosts'

    host_id = sa.Column(sa.Integer,
                        sa.ForeignKey('computehosts.id', ondelete='CASCADE'),
                        primary_key=True)
    reservation_id = sa.Column(ID, nullable=False)
    # When an engine checks the host next; an engine that checks moves it
    # on first, so that engines take turns and a dead one loses nothing.
    check_at = sa.Column(DateTime, nullable=False)


class InstanceReservation(Base):
    """The request of a virtual:instance reservation (a server's flavor)."""

    __tablename__ = 'instance_reservations'
    __table_args__ = (
        sa.Index('instance_reservations_server_id_idx', 'server_id'),
    )

    id = sa.Column(ID, primary_key=True)
    reservation_id = _reservation_fk()
    vcpus = sa.Column(sa.Integer, nullable=False)
    memory_mb = sa.Column(sa.Integer, nullable=False)
    disk_gb = sa.Column(sa.Integer, nullable=False)
    amount = sa.Column(sa.Integer, nullable=False, default=1)
    affinity = sa.Column(sa.Boolean, nullable=True)
    resource_properties = sa.Column(sa.Text, nullable=True)
    flavor_id = sa.Column(sa.String(255), nullable=True)
    server_id = sa.Column(sa.String(36), nullable=True)
    server_group_id = sa.Column(sa.String(36), nullable=True)
    aggregate_id = sa.Column(sa.Integer, nullable=True)
    on_end = sa.Column(sa.String(36), nullable=True)
    # What nova-api keeps of a server whose build waits for the lease's
    # start (JSON); NULL once the build was started, or for a server that
    # started at once in the shared pool.
    build_args = sa.Column(sa.Text, nullable=True)
    # A flavor:instance reservation's source flavor (JSON: its id, disk
    # split and extra specs), which the private flavor copies at start.
    source_flavor = sa.Column(sa.Text, nullable=True)


class VolumeReservation(Base):
    """The request of a virtual:volume reservation."""

    __tablename__ = 'volume_reservations'

    id = sa.Column(ID, primary_key=True)
    reservation_id = _reservation_fk()
    size_gb = sa.Column(sa.Integer, nullable=False)
    volume_id = sa.Column(sa.String(36), nullable=True)
    volume_type = sa.Column(sa.String(255), nullable=True)
    availability_zone = sa.Column(sa.String(255), nullable=True)
    on_end = sa.Column(sa.String(36), nullable=True)


class ComputeHost(TimestampMixin, Base):
    """A Nova compute host in the reservable pool."""

    __tablename__ = 'computehosts'

    id = sa.Column(sa.Integer, primary_key=True, autoincrement=True)
    hypervisor_hostname = sa.Column(sa.String(255), nullable=False,
                                    unique=True)
    service_name = sa.Column(sa.String(255), nullable=True)
    availability_zone = sa.Column(sa.String(255), nullable=True)
    hypervisor_type = sa.Column(sa.String(255), nullable=True)
    hypervisor_version = sa.Column(sa.BigInteger, nullable=True)
    vcpus = sa.Column(sa.Integer, nullable=False)
    memory_mb = sa.Column(sa.Integer, nullable=False)
    local_gb = sa.Column(sa.Integer, nullable=False)
    cpu_info = sa.Column(sa.Text, nullable=True)
    reservable = sa.Column(sa.Boolean, nullable=False, default=True)
    # Bumped by every allocation change on the host (as Placement's
    # resource provider generation): a writer that read generation G only
    # commits if the host is still at G, so no host is double-booked.
    generation = sa.Column(sa.Integer, nullable=False, default=0)
    # Set by the engine's host monitor while the host's nova-compute
    # service is down or disabled (reservable is false meanwhile): when it
    # was found so, and which ('down' or 'disabled').
    failed_at = sa.Column(DateTime, nullable=True)
    failure = sa.Column(sa.String(16), nullable=True)
    # Power management (reservation_ext.engine.power_manager): whether the
    # engine
    # switches the host, its state ('on', 'off', 'powering_on'), since
    # when, the engine switching it now (claimed until), the transition
    # planned next (action, time, reason) and the last switch that failed.
    power_managed = sa.Column(sa.Boolean, nullable=False, default=True,
                              server_default=sa.true())
    power_state = sa.Column(sa.String(16), nullable=False, default='on',
                            server_default='on')
    power_changed_at = sa.Column(DateTime, nullable=True)
    power_claimed_by = sa.Column(sa.String(255), nullable=True)
    power_claimed_until = sa.Column(DateTime, nullable=True)
    power_next_action = sa.Column(sa.String(16), nullable=True)
    power_next_at = sa.Column(DateTime, nullable=True)
    power_next_reason = sa.Column(sa.String(16), nullable=True)
    power_failure = sa.Column(sa.String(255), nullable=True)


class HostCapability(Base):
    """An extra capability of a host (name -> value)."""

    __tablename__ = 'host_capabilities'
    __table_args__ = (
        sa.UniqueConstraint('host_id', 'name',
                            name='uniq_host_capabilities0host_id0name'),
        sa.Index('host_capabilities_name_value_idx', 'name', 'value'),
    )

    id = sa.Column(sa.Integer, primary_key=True, autoincrement=True)
    host_id = sa.Column(sa.Integer,
                        sa.ForeignKey('computehosts.id', ondelete='CASCADE'),
                        nullable=False)
    name = sa.Column(sa.String(255), nullable=False)
    value = sa.Column(sa.String(255), nullable=False)
    # The value as a number when it is one, for numeric comparisons
    # (">= 5") in SQL on every backend.
    num_value = sa.Column(Float, nullable=True)


# The planner's weighted searches (reservation_ext.planning.preference)
# read the hosts with a capability in its order, by number then host id,
# the lowest or the highest number first.
sa.Index('host_capabilities_weight_idx', HostCapability.name,
         HostCapability.num_value, HostCapability.host_id)
sa.Index('host_capabilities_weight_desc_idx', HostCapability.name,
         HostCapability.num_value.desc(), HostCapability.host_id)


class Proposal(TimestampMixin, Base):
    """A schedule proposal: a window offered for a lease request, held.

    Its holds (host_allocations rows with its id, and ``volume_gb``) keep
    the capacity of the window until ``expires_at``; after that nothing
    counts them, whether or not the row is still there. The proposals of
    one request share ``request_id``: creating a lease from one deletes
    them all, and their holds with them.
    """

    __tablename__ = 'proposals'
    __table_args__ = (
        sa.Index('proposals_request_id_idx', 'request_id'),
        sa.Index('proposals_expires_at_idx', 'expires_at'),
    )

    id = sa.Column(ID, primary_key=True)
    request_id = sa.Column(ID, nullable=False)
    project_id = sa.Column(PROJECT, nullable=False)
    user_id = sa.Column(PROJECT, nullable=True)
    start_date = sa.Column(DateTime, nullable=False)
    end_date = sa.Column(DateTime, nullable=False)
    expires_at = sa.Column(DateTime, nullable=False)
    # The reservations of the request as the user gave them (JSON): a
    # lease made from the proposal is checked again from them.
    reservations = sa.Column(sa.Text, nullable=False)
    # GB of virtual:volume capacity held for the window.
    volume_gb = sa.Column(sa.Integer, nullable=False, default=0)


class HostAllocation(Base):
    """A host (whole, or a slice for instances) booked for a window.

    A booking of a reservation, or a hold of a schedule proposal (item
    ``proposal_item`` of its reservations) that counts until
    ``expires_at``: exactly one of ``reservation_id`` and
    ``proposal_id`` is set.
    """

    __tablename__ = 'host_allocations'
    __table_args__ = (
        # expires_at in the index: the planner's busy test reads it
        # without visiting the table.
        sa.Index('host_allocations_host_window_idx',
                 'host_id', 'start_date', 'end_date', 'expires_at'),
        sa.Index('host_allocations_reservation_id_idx', 'reservation_id'),
        sa.Index('host_allocations_proposal_id_idx', 'proposal_id'),
        # The engine's reclaim looks for the bookings not ended yet.
        sa.Index('host_allocations_end_date_idx', 'end_date'),
        # The scheduler's weigher looks for the bookings that start soon.
        sa.Index('host_allocations_start_idx',
                 'start_date', 'host_id', 'expires_at'),
        sa.Index('host_allocations_server_id_idx', 'server_id'),
        sa.CheckConstraint(
            '(reservation_id IS NULL) <> (proposal_id IS NULL)',
            name='ck_host_allocations_owner'),
    )

    id = sa.Column(ID, primary_key=True)
    host_id = sa.Column(sa.Integer, sa.ForeignKey('computehosts.id'),
                        nullable=False)
    reservation_id = sa.Column(
        ID, sa.ForeignKey('reservations.id', ondelete='CASCADE'),
        nullable=True)
    proposal_id = sa.Column(
        ID, sa.ForeignKey('proposals.id', ondelete='CASCADE'),
        nullable=True)
    proposal_item = sa.Column(sa.Integer, nullable=True)
    expires_at = sa.Column(DateTime, nullable=True)
    start_date = sa.Column(DateTime, nullable=False)
    end_date = sa.Column(DateTime, nullable=False)
    # True: the whole host; False: the vcpus/memory_mb/disk_gb slice.
    whole_host = sa.Column(sa.Boolean, nullable=False, default=True)
    vcpus = sa.Column(sa.Integer, nullable=False, default=0)
    memory_mb = sa.Column(sa.Integer, nullable=False, default=0)
    disk_gb = sa.Column(sa.Integer, nullable=False, default=0)
    # The start for which the preemptible servers in the booking's way
    # were stopped (reservation_ext.engine.reclaim); a booking moved to
    # another start is reclaimed again.
    reclaimed_for = sa.Column(DateTime, nullable=True)
    # Until when an engine holds the claim to reclaim it.
    reclaim_claimed_until = sa.Column(DateTime, nullable=True)
    # A seat of an instance-capacity reservation: the server that took it,
    # or the claim of the boot taking it (reservation_ext.planning.seats).
    server_id = sa.Column(sa.String(36), nullable=True)
    # A booking of a started reservation moved off a failed host
    # (reservation_ext.engine.host_monitor): the failed host, while the
    # Nova side of the move (the lease aggregate) is still to be done, and
    # until when an engine holds the claim to do it.
    moved_from = sa.Column(sa.Integer, nullable=True)
    move_claimed_until = sa.Column(DateTime, nullable=True)


class Event(TimestampMixin, Base):
    __tablename__ = 'events'
    __table_args__ = (
        sa.Index('events_status_time_idx', 'status', 'time'),
        sa.Index('events_lease_id_idx', 'lease_id'),
    )

    id = sa.Column(ID, primary_key=True)
    lease_id = sa.Column(ID, sa.ForeignKey('leases.id', ondelete='CASCADE'),
                         nullable=False)
    event_type = sa.Column(sa.String(32), nullable=False)
    time = sa.Column(DateTime, nullable=False)
    status = sa.Column(sa.String(16), nullable=False)
    # Claim by an engine: who holds it and until when.
    claimed_by = sa.Column(sa.String(255), nullable=True)
    claim_expires_at = sa.Column(DateTime, nullable=True)
    attempts = sa.Column(sa.Integer, nullable=False, default=0)
    # Earliest time of the next attempt after a failure (backoff).
    retry_at = sa.Column(DateTime, nullable=True)
    message = sa.Column(sa.Text, nullable=True)
    # An event whose actions are issued and that waits for their results
    # (JSON, see reservation_ext.clients.deferral): it holds no worker
    # and no claim expiry meanwhile, only its claim's token.
    waits = sa.Column(sa.Text, nullable=True)
    waits_since = sa.Column(DateTime, nullable=True)
    wait_deadline = sa.Column(DateTime, nullable=True)


class PoolState(Base):
    """One row whose generation changes with the reservation pools.

    The scheduler filter caches which hosts are reservable and which
    leases are active, and only reloads them when this generation moved.
    :func:`db.api.writer` bumps it when it commits a transaction that made
    one of the :data:`POOL_WRITES` (a host added or removed, a lease or
    reservation whose status changed or that was deleted, a lease's
    projects changed, a host that began or ended recycling).
    """

    __tablename__ = 'pool_state'

    id = sa.Column(sa.Integer, primary_key=True, autoincrement=False)
    generation = sa.Column(sa.Integer, nullable=False)


class BookingState(Base):
    """One row whose generation changes with what preemptibles depend on.

    The scheduler's filter and weigher keep, per process, which hosts are
    closed to preemptible servers and when each host's are reclaimed
    (:mod:`reservation_ext.planning.preemptible_view`), and read them
    again when this generation moved. :func:`db.api.writer` bumps it when
    it commits a transaction that made one of the :data:`BOOKING_WRITES`.
    """

    __tablename__ = 'booking_state'

    id = sa.Column(sa.Integer, primary_key=True, autoincrement=False)
    generation = sa.Column(sa.Integer, nullable=False)


class PreemptibleWork(Base):
    """The preemptible work running on a reservable host, as last surveyed.

    Written by the engine's survey
    (:mod:`reservation_ext.engine.preemptible_work`) for the hosts that
    run preemptible servers (no row: none). The work the host's
    preemptibles have done by a time ``t`` (seconds since the epoch) is
    ``vcpus * t - vcpu_start_sum`` vCPU-seconds, so that the figure
    needs no rewrite as it grows. The planner books the hosts that would
    lose least first (:mod:`reservation_ext.planning.work_at_stake`). No
    API shows it: it says what other projects run where.
    """

    __tablename__ = 'host_preemptible_work'

    host_id = sa.Column(sa.Integer,
                        sa.ForeignKey('computehosts.id', ondelete='CASCADE'),
                        primary_key=True, autoincrement=False)
    # The preemptibles' vCPUs, and the sum of each one's vCPUs times its
    # creation time (seconds since the epoch).
    vcpus = sa.Column(sa.Integer, nullable=False)
    vcpu_start_sum = sa.Column(sa.BigInteger, nullable=False)
    # When these figures were written: a survey that finds them unchanged
    # writes nothing.
    recorded_at = sa.Column(DateTime, nullable=False)


PoolWrites = collections.namedtuple('PoolWrites', 'insert delete update')

# The writes that change a reservation pool as the scheduler reads it
# (reservation_ext.planning.pool_snapshot), by table: whether an INSERT
# or a DELETE does, and which columns an UPDATE must set to. Bookings do
# not (host_allocations rows, computehosts.generation), nor does a new
# lease or reservation, which is pending: a reservation's hosts join a
# pool when its status becomes active, and leave it when its status moves
# on, its lease is deleted or the host removed. A recycling host is in no
# pool until its row goes.
POOL_WRITES = {
    'computehosts': PoolWrites(
        insert=True, delete=True,
        update=frozenset(['hypervisor_hostname', 'reservable'])),
    'leases': PoolWrites(insert=False, delete=True,
                         update=frozenset(['status'])),
    'reservations': PoolWrites(insert=False, delete=True,
                               update=frozenset(['status'])),
    'lease_projects': PoolWrites(
        insert=True, delete=True,
        update=frozenset(['lease_id', 'project_id'])),
    'recycling_hosts': PoolWrites(insert=True, delete=True,
                                  update=frozenset(['host_id'])),
}

# The writes that change which hosts are closed to preemptible servers or
# when their preemptibles are reclaimed
# (reservation_ext.planning.preemptible_placement): the pools' writes,
# the bookings' windows, hosts and kinds, a seat taken or freed, and a
# reservation made or its status changed. Not the engine's reclaim
# bookkeeping (reclaimed_for, the claims), which every poll writes.
BOOKING_WRITES = dict(
    POOL_WRITES,
    reservations=PoolWrites(insert=True, delete=True,
                            update=frozenset(['status'])),
    host_allocations=PoolWrites(
        insert=True, delete=True,
        update=frozenset(['host_id', 'reservation_id', 'start_date',
                          'end_date', 'whole_host', 'server_id',
                          'expires_at'])),
    instance_reservations=PoolWrites(
        insert=True, delete=True,
        update=frozenset(['reservation_id', 'server_id'])))


class HostProperty(Base):
    """Whether an extra capability of hosts is private.

    Private capabilities are left out of ``GET /os-hosts/properties``
    unless ``all=true`` asks for them.
    """

    __tablename__ = 'host_properties'

    name = sa.Column(sa.String(255), primary_key=True)
    private = sa.Column(sa.Boolean, nullable=False, default=False)


class HostPowerEvent(Base):
    """One power transition of a host: who made it, when, and how it went.

    ``outcome`` is None while the engine is at it, then ``done`` or
    ``failed`` (with ``detail``).
    """

    __tablename__ = 'host_power_events'
    __table_args__ = (
        sa.Index('ix_host_power_events_host_id', 'host_id', 'started_at'),
    )

    id = sa.Column(sa.Integer, primary_key=True, autoincrement=True)
    host_id = sa.Column(sa.Integer, sa.ForeignKey(
        'computehosts.id', name='fk_host_power_events_host_id',
        ondelete='CASCADE'), nullable=False)
    action = sa.Column(sa.String(16), nullable=False)
    reason = sa.Column(sa.String(16), nullable=False)
    engine = sa.Column(sa.String(255), nullable=False)
    started_at = sa.Column(DateTime, nullable=False)
    finished_at = sa.Column(DateTime, nullable=True)
    outcome = sa.Column(sa.String(16), nullable=True)
    detail = sa.Column(sa.String(255), nullable=True)


class HostMonitorState(Base):
    """One row: when the host monitor next reads Nova's services.

    An engine whose conditional UPDATE moves ``next_check`` from a time
    that has come to a later one holds this interval's read; the others
    skip it (reservation_ext.engine.host_monitor).
    """

    __tablename__ = 'host_monitor_state'

    id = sa.Column(sa.Integer, primary_key=True, autoincrement=False)
    next_check = sa.Column(DateTime, nullable=False)


class VolumeCapacityState(Base):
    """One row that serializes the bookings of volume capacity.

    A virtual:volume reservation sums the GB of the overlapping ones and
    then writes its own; two writers doing that at once could both fit.
    Each bumps this row's generation before the sum, which takes its row
    lock on PostgreSQL and MySQL, so the next writer waits for the commit
    and then sums what was committed.
    """

    __tablename__ = 'volume_capacity_state'

    id = sa.Column(sa.Integer, primary_key=True, autoincrement=False)
    generation = sa.Column(sa.Integer, nullable=False)


class EngineHeartbeat(Base):
    """One row per running reservation-engine: its last successful poll.

    The engine writes it at its start, after every poll in which the
    leases DB answered, and deletes it when it stops cleanly; the row of
    an engine that died stays, and ``reservation-status engines`` shows
    it stale (reservation_ext.store.engines).
    """

    __tablename__ = 'engine_heartbeats'

    engine_id = sa.Column(sa.String(255), primary_key=True)
    host = sa.Column(sa.String(255), nullable=False)
    pid = sa.Column(sa.Integer, nullable=False)
    version = sa.Column(sa.String(64), nullable=False)
    started_at = sa.Column(DateTime, nullable=False)
    last_poll_at = sa.Column(DateTime, nullable=True)


class FloatingIP(TimestampMixin, Base):
    """A reservable floating IP address of an external Neutron network."""

    __tablename__ = 'floatingips'
    __table_args__ = (
        sa.UniqueConstraint('floating_network_id', 'floating_ip_address',
                            name='uniq_floatingips0network0address'),
    )

    id = sa.Column(ID, primary_key=True)
    floating_network_id = sa.Column(sa.String(255), nullable=False)
    subnet_id = sa.Column(sa.String(255), nullable=False)
    floating_ip_address = sa.Column(sa.String(64), nullable=False)
    reservable = sa.Column(sa.Boolean, nullable=False, default=True)
    # Bumped by every booking of the address, as computehosts.generation:
    # a writer commits its booking only if the address is still at the
    # generation it read, so no address is in two overlapping leases.
    generation = sa.Column(sa.Integer, nullable=False, default=0)


class FloatingIPReservation(Base):
    """The request of a virtual:floatingip reservation."""

    __tablename__ = 'floatingip_reservations'

    id = sa.Column(ID, primary_key=True)
    reservation_id = _reservation_fk()
    network_id = sa.Column(sa.String(255), nullable=False)
    amount = sa.Column(sa.Integer, nullable=False)
    # The addresses asked for by name (a JSON list), NULL for none.
    required_floatingips = sa.Column(sa.Text, nullable=True)


class FloatingIPAllocation(Base):
    """A floating IP booked for a window, or held by a schedule proposal.

    Exactly one of ``reservation_id`` and ``proposal_id`` is set; a hold
    counts until ``expires_at``.
    """

    __tablename__ = 'floatingip_allocations'
    __table_args__ = (
        sa.Index('floatingip_allocations_window_idx', 'floatingip_id',
                 'start_date', 'end_date', 'expires_at'),
        sa.Index('floatingip_allocations_reservation_id_idx',
                 'reservation_id'),
        sa.Index('floatingip_allocations_proposal_id_idx', 'proposal_id'),
        sa.CheckConstraint(
            '(reservation_id IS NULL) <> (proposal_id IS NULL)',
            name='ck_floatingip_allocations_owner'),
    )

    id = sa.Column(ID, primary_key=True)
    floatingip_id = sa.Column(ID, sa.ForeignKey('floatingips.id'),
                              nullable=False)
    reservation_id = sa.Column(
        ID, sa.ForeignKey('reservations.id', ondelete='CASCADE'),
        nullable=True)
    proposal_id = sa.Column(
        ID, sa.ForeignKey('proposals.id', ondelete='CASCADE'),
        nullable=True)
    # Which of the proposal's reservations the hold is for.
    proposal_item = sa.Column(sa.Integer, nullable=True)
    expires_at = sa.Column(DateTime, nullable=True)
    start_date = sa.Column(DateTime, nullable=False)
    end_date = sa.Column(DateTime, nullable=False)


class NetworkSegment(TimestampMixin, Base):
    """A reservable VLAN or VXLAN segment (Chameleon's Blazar networks).

    ``physical_network`` is NULL for VXLAN (its VNIs are global); a VLAN
    id is unique per physical network. The inventory checks the VXLAN
    case, which the unique constraint (NULLs differ) does not cover.
    """

    __tablename__ = 'network_segments'
    __table_args__ = (
        sa.UniqueConstraint('network_type', 'physical_network', 'segment_id',
                            name='uniq_network_segments0segment'),
    )

    id = sa.Column(ID, primary_key=True)
    network_type = sa.Column(sa.String(16), nullable=False)
    physical_network = sa.Column(sa.String(255), nullable=True)
    segment_id = sa.Column(sa.Integer, nullable=False)
    # Bumped by every booking of the segment, as computehosts.generation.
    generation = sa.Column(sa.Integer, nullable=False, default=0)


class NetworkExtraCapability(Base):
    """An extra capability of a network segment (name -> value)."""

    __tablename__ = 'network_extra_capabilities'
    __table_args__ = (
        sa.UniqueConstraint('network_id', 'name',
                            name='uniq_network_extra_capabilities0name'),
    )

    id = sa.Column(sa.Integer, primary_key=True, autoincrement=True)
    network_id = sa.Column(
        ID, sa.ForeignKey('network_segments.id', ondelete='CASCADE'),
        nullable=False)
    name = sa.Column(sa.String(64), nullable=False)
    value = sa.Column(sa.String(255), nullable=False)
    # The value as a number when it is one (numeric capability queries).
    num_value = sa.Column(Float, nullable=True)


class NetworkReservation(Base):
    """The request of a ``network`` reservation, and what its start made.

    ``network_id`` is the Neutron network made at the start (NULL
    before).
    """

    __tablename__ = 'network_reservations'

    id = sa.Column(ID, primary_key=True)
    reservation_id = _reservation_fk()
    network_name = sa.Column(sa.String(255), nullable=False)
    network_description = sa.Column(sa.String(255), nullable=True)
    network_properties = sa.Column(sa.Text, nullable=True)
    resource_properties = sa.Column(sa.Text, nullable=True)
    subnet_cidr = sa.Column(sa.String(64), nullable=True)
    router_external_network = sa.Column(sa.String(255), nullable=True)
    network_id = sa.Column(sa.String(36), nullable=True)


class NetworkAllocation(Base):
    """A network segment booked for a window, or held by a proposal.

    Exactly one of ``reservation_id`` and ``proposal_id`` is set; a hold
    counts until ``expires_at``.
    """

    __tablename__ = 'network_allocations'
    __table_args__ = (
        sa.Index('network_allocations_window_idx', 'network_id',
                 'start_date', 'end_date'),
        sa.Index('network_allocations_reservation_id_idx',
                 'reservation_id'),
        sa.Index('network_allocations_proposal_id_idx', 'proposal_id'),
        sa.CheckConstraint(
            '(reservation_id IS NULL) <> (proposal_id IS NULL)',
            name='ck_network_allocations_owner'),
    )

    id = sa.Column(ID, primary_key=True)
    network_id = sa.Column(ID, sa.ForeignKey('network_segments.id'),
                           nullable=False)
    reservation_id = sa.Column(
        ID, sa.ForeignKey('reservations.id', ondelete='CASCADE'),
        nullable=True)
    # No foreign key: whoever deletes a proposal deletes its holds (on
    # SQLite, a key to proposals breaks dropping the tables in name order).
    proposal_id = sa.Column(ID, nullable=True)
    # Which of the proposal's reservations the hold is for.
    proposal_item = sa.Column(sa.Integer, nullable=True)
    expires_at = sa.Column(DateTime, nullable=True)
    start_date = sa.Column(DateTime, nullable=False)
    end_date = sa.Column(DateTime, nullable=False)


class StoragePool(TimestampMixin, Base):
    """A reservable Cinder storage pool, as its volume service reports it.

    ``name`` is Cinder's pool name (``host@backend#pool``); ``capabilities``
    is what Cinder reported for the pool when it was registered (JSON
    text), of which ``volume_backend_name`` and ``total_capacity_gb`` are
    also columns for queries (``total_capacity_gb`` is NULL when Cinder
    reports no number, ``infinite`` or ``unknown``).
    """

    __tablename__ = 'storage_pools'
    __table_args__ = (
        sa.UniqueConstraint('name', name='uniq_storage_pools0name'),
    )

    id = sa.Column(ID, primary_key=True)
    name = sa.Column(sa.String(255), nullable=False)
    volume_backend_name = sa.Column(sa.String(255), nullable=True)
    total_capacity_gb = sa.Column(Float, nullable=True)
    capabilities = sa.Column(sa.Text, nullable=False)
    # Bumped by every booking of the pool, as computehosts.generation.
    generation = sa.Column(sa.Integer, nullable=False, default=0)


class StoragePoolExtraCapability(Base):
    """An extra capability of a storage pool (name -> value)."""

    __tablename__ = 'storage_pool_extra_capabilities'
    __table_args__ = (
        sa.UniqueConstraint('pool_id', 'name',
                            name='uniq_storage_pool_extra_capabilities0name'),
    )

    id = sa.Column(sa.Integer, primary_key=True, autoincrement=True)
    pool_id = sa.Column(
        ID, sa.ForeignKey('storage_pools.id', ondelete='CASCADE'),
        nullable=False)
    name = sa.Column(sa.String(64), nullable=False)
    value = sa.Column(sa.String(255), nullable=False)
    # The value as a number when it is one (numeric capability queries).
    num_value = sa.Column(Float, nullable=True)


class StoragePoolReportedCapability(Base):
    """A capability Cinder reported for a pool when it was registered.

    One row per key of the pool's report whose value is a string, a
    number or a boolean, for ``pool_properties`` queries; the whole
    report stays in ``storage_pools.capabilities``.
    """

    __tablename__ = 'storage_pool_reported_capabilities'
    __table_args__ = (
        sa.UniqueConstraint(
            'pool_id', 'name',
            name='uniq_storage_pool_reported_capabilities0name'),
    )

    id = sa.Column(sa.Integer, primary_key=True, autoincrement=True)
    pool_id = sa.Column(
        ID, sa.ForeignKey('storage_pools.id', ondelete='CASCADE'),
        nullable=False)
    name = sa.Column(sa.String(64), nullable=False)
    value = sa.Column(sa.String(255), nullable=False)
    num_value = sa.Column(Float, nullable=True)


class StoragePoolReservation(Base):
    """The request of a ``storage:pool`` reservation."""

    __tablename__ = 'storage_pool_reservations'

    id = sa.Column(ID, primary_key=True)
    reservation_id = _reservation_fk()
    min = sa.Column(sa.Integer, nullable=False)
    max = sa.Column(sa.Integer, nullable=False)
    pool_properties = sa.Column(sa.Text, nullable=True)
    resource_properties = sa.Column(sa.Text, nullable=True)
    on_end = sa.Column(sa.String(32), nullable=False)


class StackReservation(Base):
    """The request of a ``heat:stack`` reservation, its needs and its stack.

    ``servers`` (JSON) lists the template's servers by flavor with their
    sizes, ``volume_gb`` its volumes' gigabytes and ``floating_ips``
    (JSON) its addresses by external network, as Heat's preview showed
    them at the create; the bookings are the planner's rows of the
    reservation. ``stack_id`` and ``stack_status`` are the stack the
    engine made at the start, as last seen.
    """

    __tablename__ = 'stack_reservations'

    id = sa.Column(ID, primary_key=True)
    reservation_id = _reservation_fk()
    template = sa.Column(sa.Text, nullable=False)
    parameters = sa.Column(sa.Text, nullable=False)
    environment = sa.Column(sa.Text, nullable=True)
    on_end = sa.Column(sa.String(32), nullable=False)
    servers = sa.Column(sa.Text, nullable=False)
    volume_gb = sa.Column(sa.Integer, nullable=False)
    floating_ips = sa.Column(sa.Text, nullable=False)
    trust_id = sa.Column(sa.String(64), nullable=True)
    stack_id = sa.Column(ID, nullable=True)
    stack_status = sa.Column(sa.String(64), nullable=True)
    stack_status_reason = sa.Column(sa.Text, nullable=True)
    # What Nova's and Cinder's quotas count of the stack, in all.
    instances = sa.Column(sa.Integer, nullable=False, server_default='0')
    vcpus = sa.Column(sa.Integer, nullable=False, server_default='0')
    memory_mb = sa.Column(sa.Integer, nullable=False, server_default='0')
    volumes = sa.Column(sa.Integer, nullable=False, server_default='0')


class StackResource(Base):
    """A server or volume of the stack a reservation's start made.

    ``physical_id`` is its id in Nova or Cinder; ``resource_type`` is
    Heat's (``OS::Nova::Server``, ``OS::Cinder::Volume``).
    """

    __tablename__ = 'stack_resources'
    __table_args__ = (
        sa.UniqueConstraint('reservation_id', 'physical_id',
                            name='uq_stack_resources_reservation_physical'),
        sa.Index('stack_resources_physical_id_idx', 'physical_id'),
    )

    id = sa.Column(ID, primary_key=True)
    reservation_id = sa.Column(
        ID, sa.ForeignKey('reservations.id', ondelete='CASCADE'),
        nullable=False)
    resource_type = sa.Column(sa.String(64), nullable=False)
    physical_id = sa.Column(ID, nullable=False)
    # The image an on_end snapshot_delete made of it (Nova's snapshot of
    # a server, Cinder's upload of a volume).
    image_id = sa.Column(ID, nullable=True)


class StoragePoolAllocation(Base):
    """A storage pool booked for a window, or held by a proposal.

    Exactly one of ``reservation_id`` and ``proposal_id`` is set; a hold
    counts until ``expires_at``.
    """

    __tablename__ = 'storage_pool_allocations'
    __table_args__ = (
        sa.Index('storage_pool_allocations_window_idx', 'pool_id',
                 'start_date', 'end_date'),
        sa.Index('storage_pool_allocations_reservation_id_idx',
                 'reservation_id'),
        sa.Index('storage_pool_allocations_proposal_id_idx', 'proposal_id'),
        sa.CheckConstraint(
            '(reservation_id IS NULL) <> (proposal_id IS NULL)',
            name='ck_storage_pool_allocations_owner'),
    )

    id = sa.Column(ID, primary_key=True)
    pool_id = sa.Column(ID, sa.ForeignKey('storage_pools.id'),
                        nullable=False)
    reservation_id = sa.Column(
        ID, sa.ForeignKey('reservations.id', ondelete='CASCADE'),
        nullable=True)
    # No foreign key: whoever deletes a proposal deletes its holds (on
    # SQLite, a key to proposals breaks dropping the tables in name order).
    proposal_id = sa.Column(ID, nullable=True)
    # Which of the proposal's reservations the hold is for.
    proposal_item = sa.Column(sa.Integer, nullable=True)
    expires_at = sa.Column(DateTime, nullable=True)
    start_date = sa.Column(DateTime, nullable=False)
    end_date = sa.Column(DateTime, nullable=False)


for _table in Base.metadata.tables.values():
    _table.kwargs.update(MYSQL_TABLE_OPTIONS)

# The gap index of the bookings (SQLite only) comes and goes with
# host_allocations, on whose rows its triggers fire.
host_gaps.attach(HostAllocation.__table__)
