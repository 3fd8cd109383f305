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

"""What the leases DB knows of reserved servers.

Each query is one SQL statement on ``instance_reservations`` (indexed by
``server_id``) joined with its reservation, lease and booked host.
"""

import collections
import contextlib

import sqlalchemy as sa

from db import api as db_api
from db import tables
from reservation_ext.leases import metadata as lease_metadata
from reservation_ext.states import LeaseStatus
from reservation_ext.store import instance_reservations as store_instances

INSTANCE_RESERVATIONS = tables.INSTANCE_RESERVATIONS
RESERVATIONS = tables.RESERVATIONS
LEASES = tables.LEASES
ALLOCATIONS = tables.ALLOCATIONS
HOSTS = tables.HOSTS

# A leased server: its lease, whether it waits for the start (RESERVED),
# the lease's status and start, the host booked for it (or None), and
# the lease's project and end.
LeasedServer = collections.namedtuple('LeasedServer', (
    'server_id', 'lease_id', 'reserved', 'lease_status', 'start_date',
    'build_args', 'service_host', 'hypervisor_hostname', 'project_id',
    'end_date'))


def leased_servers(ctx, server_ids):
    """Map the leased ones of ``server_ids``: ``{server_id: LeasedServer}``."""
    if not server_ids:
        return {}
    with db_api.context_manager.reader.using(ctx) as session:
        rows = session.execute(_select().where(
            INSTANCE_RESERVATIONS.c.server_id.in_(list(server_ids))))
        return {row.server_id: LeasedServer(*row) for row in rows}


def shown_servers(ctx, server_ids):
    """Return ``{server_id: LeasedServer}`` of the servers a lease holds.

    As :func:`leased_servers`, and also the servers on the seats of an
    instance-capacity reservation (never ``reserved``: they boot during
    the lease), in one statement. Only for views: deleting a seated
    server does not delete its lease.
    """
    if not server_ids:
        return {}
    ids = list(server_ids)
    with db_api.context_manager.reader.using(ctx) as session:
        rows = session.execute(sa.union_all(
            _select().where(INSTANCE_RESERVATIONS.c.server_id.in_(ids)),
            _select_seats().where(ALLOCATIONS.c.server_id.in_(ids))))
        return {row.server_id: LeasedServer(*row) for row in rows}


def lease_of(leased):
    """Return what a view shows of the lease of a :class:`LeasedServer`."""
    return lease_metadata.Lease(leased.lease_id, leased.project_id,
                                leased.end_date)


def leased_server(ctx, server_id):
    """Return the :class:`LeasedServer` of ``server_id``, or None."""
    return leased_servers(ctx, [server_id]).get(server_id)


BuildTaken = collections.namedtuple('BuildTaken', ('build_args', 'started'))


@contextlib.contextmanager
def taking_build(ctx, server_id, node):
    """Take a deferred build's arguments, for its cast; yield a BuildTaken.

    ``build_args`` is None when they are gone: of two concurrent starts,
    only one gets them. ``started`` lists the other servers booked on
    ``node`` whose builds were taken before (cast, or built already), of
    leases that have not ended: the caller's check for room must count
    those Placement has not seen yet. An exception in the block gives the
    arguments back.

    The take and the list are one writer transaction, and writers run
    one at a time (:mod:`db.api`): of two starts on one host, the later
    one lists the earlier one, whose build is then counted by Placement
    (claimed) or by the caller (not yet). So two starts cannot both take
    the room of one, without a lock held over the calls to Placement:
    at worst both count each other and wait for their retries.
    """
    with db_api.writer(ctx) as session:
        args = session.execute(
            sa.select(INSTANCE_RESERVATIONS.c.build_args).where(
                INSTANCE_RESERVATIONS.c.server_id == server_id)).scalar()
        taken = args is not None and store_instances.drop_build_args(
            session, server_id)
        started = (_started_on(session, node, server_id)
                   if taken and node is not None else [])
    if not taken:
        yield BuildTaken(None, [])
        return
    try:
        yield BuildTaken(args, started)
    except BaseException:
        with db_api.writer(ctx) as session:
            store_instances.keep_build_args(session, server_id, args)
        raise


def _started_on(session, node, server_id):
    """Return the servers on ``node`` whose builds were taken, but one."""
    return list(session.execute(
        sa.select(INSTANCE_RESERVATIONS.c.server_id)
        .join(ALLOCATIONS, ALLOCATIONS.c.reservation_id ==
              INSTANCE_RESERVATIONS.c.reservation_id)
        .join(HOSTS, HOSTS.c.id == ALLOCATIONS.c.host_id)
        .join(RESERVATIONS,
              RESERVATIONS.c.id == INSTANCE_RESERVATIONS.c.reservation_id)
        .join(LEASES, LEASES.c.id == RESERVATIONS.c.lease_id)
        .where(HOSTS.c.hypervisor_hostname == node,
               INSTANCE_RESERVATIONS.c.build_args.is_(None),
               INSTANCE_RESERVATIONS.c.server_id.is_not(None),
               INSTANCE_RESERVATIONS.c.server_id != server_id,
               LEASES.c.status != LeaseStatus.TERMINATED).distinct())
        .scalars())


def _select():
    return (sa.select(INSTANCE_RESERVATIONS.c.server_id, LEASES.c.id,
                      INSTANCE_RESERVATIONS.c.build_args.is_not(None),
                      LEASES.c.status,
                      LEASES.c.start_date, INSTANCE_RESERVATIONS.c.build_args,
                      HOSTS.c.service_name, HOSTS.c.hypervisor_hostname,
                      LEASES.c.project_id, LEASES.c.end_date)
            .join(RESERVATIONS,
                  RESERVATIONS.c.id == INSTANCE_RESERVATIONS.c.reservation_id)
            .join(LEASES, LEASES.c.id == RESERVATIONS.c.lease_id)
            .outerjoin(ALLOCATIONS, ALLOCATIONS.c.reservation_id ==
                       INSTANCE_RESERVATIONS.c.reservation_id)
            .outerjoin(HOSTS, HOSTS.c.id == ALLOCATIONS.c.host_id))


def _select_seats():
    """Return the columns of :func:`_select` for servers on capacity seats."""
    return (sa.select(ALLOCATIONS.c.server_id, LEASES.c.id, sa.false(),
                      LEASES.c.status, LEASES.c.start_date,
                      sa.null().label('build_args'), HOSTS.c.service_name,
                      HOSTS.c.hypervisor_hostname, LEASES.c.project_id,
                      LEASES.c.end_date)
            .join(RESERVATIONS,
                  RESERVATIONS.c.id == ALLOCATIONS.c.reservation_id)
            .join(LEASES, LEASES.c.id == RESERVATIONS.c.lease_id)
            .join(HOSTS, HOSTS.c.id == ALLOCATIONS.c.host_id))
