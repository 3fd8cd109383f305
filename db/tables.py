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

"""The handles of the leases DB's tables, for SQLAlchemy Core statements.

Every module reads and writes the tables through these names and binds
no other name to a table, so that one name means one table everywhere
(``tests/unit/test_table_owners.py`` checks it). Which module may write
each table is :data:`OWNERS`.
"""

from db import models

LEASES = models.Lease.__table__
LEASE_PROJECTS = models.LeaseProject.__table__
RESERVATIONS = models.Reservation.__table__
# The lease's start and end events; a host's power transitions are
# POWER_EVENTS.
LEASE_EVENTS = models.Event.__table__
# What each reservation asked for, one table per resource type.
HOST_RESERVATIONS = models.HostReservation.__table__
INSTANCE_RESERVATIONS = models.InstanceReservation.__table__
VOLUME_RESERVATIONS = models.VolumeReservation.__table__
# The reservable compute hosts (``computehosts``) and what they offer.
HOSTS = models.ComputeHost.__table__
CAPABILITIES = models.HostCapability.__table__
HOST_PROPERTIES = models.HostProperty.__table__
RECYCLING = models.RecyclingHost.__table__
POWER_EVENTS = models.HostPowerEvent.__table__
# Bookings and proposal holds of hosts and slices of hosts.
ALLOCATIONS = models.HostAllocation.__table__
# The preemptible work each host runs, as the engine last surveyed it.
PREEMPTIBLE_WORK = models.PreemptibleWork.__table__
PROPOSALS = models.Proposal.__table__
# Single-row generation counters and the host monitor's state.
POOL_STATE = models.PoolState.__table__
BOOKING_STATE = models.BookingState.__table__
MONITOR_STATE = models.HostMonitorState.__table__
VOLUME_STATE = models.VolumeCapacityState.__table__
# Each running engine and its last successful poll.
ENGINE_HEARTBEATS = models.EngineHeartbeat.__table__
# The reservable floating IPs, the virtual:floatingip requests and the
# bookings (and proposal holds) of the addresses.
FLOATINGIPS = models.FloatingIP.__table__
FLOATINGIP_RESERVATIONS = models.FloatingIPReservation.__table__
FLOATINGIP_ALLOCATIONS = models.FloatingIPAllocation.__table__
# The reservable network segments, their extra capabilities, the network
# requests and the bookings (and proposal holds) of the segments.
NETWORK_SEGMENTS = models.NetworkSegment.__table__
NETWORK_CAPABILITIES = models.NetworkExtraCapability.__table__
NETWORK_RESERVATIONS = models.NetworkReservation.__table__
NETWORK_ALLOCATIONS = models.NetworkAllocation.__table__
# The reservable Cinder storage pools, their extra capabilities and
# those Cinder reported, the storage:pool requests and the bookings (and
# proposal holds) of the pools.
STORAGE_POOLS = models.StoragePool.__table__
STORAGE_POOL_CAPABILITIES = models.StoragePoolExtraCapability.__table__
STORAGE_POOL_REPORTED = models.StoragePoolReportedCapability.__table__
STORAGE_POOL_RESERVATIONS = models.StoragePoolReservation.__table__
STORAGE_POOL_ALLOCATIONS = models.StoragePoolAllocation.__table__
# The heat:stack requests, with their needs and their stacks.
STACK_RESERVATIONS = models.StackReservation.__table__
STACK_RESOURCES = models.StackResource.__table__

# The one module that may write each table (by table name). A table
# that several parts of the code change has a module of its own in
# reservation_ext/store/; the others are written where they are used.
# doc/source/contributor/architecture.rst ("Who writes each table") says
# what each owner's writes mean.
OWNERS = {
    LEASES.name: 'reservation_ext.store.leases',
    LEASE_PROJECTS.name: 'reservation_ext.store.leases',
    RESERVATIONS.name: 'reservation_ext.store.leases',
    LEASE_EVENTS.name: 'reservation_ext.store.leases',
    HOST_RESERVATIONS.name: 'reservation_ext.plugins.physical_host',
    INSTANCE_RESERVATIONS.name: 'reservation_ext.store.instance_reservations',
    VOLUME_RESERVATIONS.name: 'reservation_ext.plugins.virtual_volume',
    HOSTS.name: 'reservation_ext.store.hosts',
    CAPABILITIES.name: 'reservation_ext.store.hosts',
    HOST_PROPERTIES.name: 'reservation_ext.store.hosts',
    RECYCLING.name: 'reservation_ext.plugins.host_end_policies',
    POWER_EVENTS.name: 'reservation_ext.engine.power_manager',
    ALLOCATIONS.name: 'reservation_ext.store.allocations',
    PREEMPTIBLE_WORK.name: 'reservation_ext.engine.preemptible_work',
    PROPOSALS.name: 'reservation_ext.leases.proposals',
    POOL_STATE.name: 'db.api',
    BOOKING_STATE.name: 'db.api',
    MONITOR_STATE.name: 'reservation_ext.engine.host_monitor',
    VOLUME_STATE.name: 'reservation_ext.planning.volume_capacity',
    ENGINE_HEARTBEATS.name: 'reservation_ext.store.engines',
    FLOATINGIPS.name: 'reservation_ext.store.floating_ips',
    FLOATINGIP_RESERVATIONS.name: 'reservation_ext.store.floating_ips',
    FLOATINGIP_ALLOCATIONS.name: 'reservation_ext.store.floating_ips',
    NETWORK_SEGMENTS.name: 'reservation_ext.store.network_segments',
    NETWORK_CAPABILITIES.name: 'reservation_ext.store.network_segments',
    NETWORK_RESERVATIONS.name: 'reservation_ext.store.network_segments',
    NETWORK_ALLOCATIONS.name: 'reservation_ext.store.network_segments',
    STORAGE_POOLS.name: 'reservation_ext.store.storage_pools',
    STORAGE_POOL_CAPABILITIES.name: 'reservation_ext.store.storage_pools',
    STORAGE_POOL_REPORTED.name: 'reservation_ext.store.storage_pools',
    STORAGE_POOL_RESERVATIONS.name: 'reservation_ext.store.storage_pools',
    STORAGE_POOL_ALLOCATIONS.name: 'reservation_ext.store.storage_pools',
    STACK_RESERVATIONS.name: 'reservation_ext.store.stacks',
    STACK_RESOURCES.name: 'reservation_ext.store.stacks',
}
