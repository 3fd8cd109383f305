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

"""Nova's and Cinder's quotas over a lease's window.

A leased server, ``amount`` seats of an instance-capacity reservation
(``virtual:instance`` or ``flavor:instance``), or the servers of a
``heat:stack`` reservation count against the project's Nova quotas
(instances, cores, RAM) at every instant of their lease's window, and
only there (:data:`COMPUTE`); a reserved volume, or a stack's volumes,
against its Cinder quotas (gigabytes, volumes: :data:`VOLUME`). At an
instant ``t`` of a new lease's window the project uses::

    base + (the project's reservations whose window holds t)

where ``base`` is what the service counts now minus what of it belongs
to leased resources that it counts already (built or started, seated on
a capacity reservation or a stack's slices, or made by a stack's start,
in leases not ended): they are counted over their windows instead. What
is not leased is taken to stay for ever, since nobody knows when it
goes. A change is refused when, at some instant of the window, that
usage with the lease is over a limit.

As for :mod:`.time_quotas`, the check has two steps, so that no call to
the service runs inside a writer transaction and two concurrent boots
cannot both slip under a limit:

1. before the transaction, :meth:`WindowQuotas.check_for` reads the
   limits and ``base`` through the ``reader`` it was given (in nova-api,
   :class:`reservation_ext.nova_api.nova_quotas.NovaQuotas`: Nova's
   quota driver as configured; for Cinder's, in cinder-api,
   :class:`cinder_ext.volume_quotas.CinderQuotas`, and in the lease API,
   which nova-api serves, :class:`reservation_ext.clients.
   block_storage_quotas.BlockStorageQuotas`, through Cinder's API);
2. in the transaction that writes the lease, :meth:`WindowQuotaCheck.check`
   serializes the project's checks (:func:`.time_quotas.lock_project`),
   reads the project's reservations that overlap the window, with the
   new ones, takes the peak of each resource, and raises the kind's
   error (:class:`~reservation_ext.exceptions.ComputeQuotaExceeded`,
   Nova's 403 message, or :class:`~reservation_ext.exceptions.
   VolumeQuotaExceeded`, Cinder's message: a 403 in the lease API,
   Cinder's 413 in cinder-api), which rolls the whole change back.
"""

import dataclasses

import sqlalchemy as sa

from db import api as db_api
from db import tables
from reservation_ext.enforcement import time_quotas
from reservation_ext import exceptions
from reservation_ext.store import stacks

INSTANCES = 'instances'
CORES = 'cores'
RAM = 'ram'
VOLUMES = 'volumes'
GIGABYTES = 'gigabytes'

LEASES = tables.LEASES
RESERVATIONS = tables.RESERVATIONS
INSTANCE_RESERVATIONS = tables.INSTANCE_RESERVATIONS
ALLOCATIONS = tables.ALLOCATIONS
VOLUME_RESERVATIONS = tables.VOLUME_RESERVATIONS
STACK_RESERVATIONS = tables.STACK_RESERVATIONS
STACK_RESOURCES = tables.STACK_RESOURCES


@dataclasses.dataclass(frozen=True)
class Kind:
    """What a service's quotas count of the leases.

    :param resources: the quota resources, in the order the service names
        them in its errors.
    :param sizes: ``((table, columns), ...)``: the reservation tables
        and what each of their rows takes of each resource (SQL
        expressions, in the order of ``resources``).
    :param leased: ``(project_id, now)`` -> the SQL queries of the ids of
        the leased resources the service may count already.
    :param resource_types: the resource types of its reservations.
    :param id_key: the key of a new reservation's values naming its
        resource, which the service may count already too.
    :param error: ``(overs, requested, used, allowed)`` -> the exception.
    """

    resources: tuple
    sizes: tuple
    leased: object
    resource_types: tuple
    id_key: str
    error: object


class WindowQuotas:
    """The check of lease changes against a service's quotas over the window.

    :param kind: :data:`COMPUTE` (Nova's) or :data:`VOLUME` (Cinder's).
    :param reader: reads the service's quotas; its ``read(project_id,
        ids)`` returns ``(limits, usage, leased)``, each ``{resource:
        number}``: the project's limits (-1: unlimited), what the service
        counts of the project now, and what it counts of the leased
        resources ``ids``.
    :param clock: where "now" comes from.
    """

    def __init__(self, kind, reader, clock):
        self.kind = kind
        self.reader = reader
        self.clock = clock

    def check_for(self, ctx, project_id, lease_id=None, reservations=()):
        """Return the :class:`WindowQuotaCheck` of a change of the project.

        Reads the service's quotas: call it outside any transaction.

        :param lease_id: the lease an update changes, whose window and
            demand before the change are read here: a change that neither
            widens the window nor adds to a resource is never refused.
        :param reservations: a new lease's ``[(resource_type, values)]``:
            a server that Nova created for it is counted in its window.
        """
        if lease_id is None and not any(
                resource_type in self.kind.resource_types
                for resource_type, _values in reservations):
            # A lease of other resources only: nothing to ask the service.
            return time_quotas.NO_QUOTA_CHECK
        before = None
        with db_api.context_manager.reader.using(ctx) as session:
            if lease_id is not None:
                before = _lease_demand(session, self.kind, project_id,
                                       lease_id)
                if not any(before[2].values()):
                    # An update changes the reservations a lease has.
                    return time_quotas.NO_QUOTA_CHECK
            ids = leased_ids(session, self.kind, project_id,
                             self.clock.now())
        ids += [values[self.kind.id_key] for _type, values in reservations
                if values.get(self.kind.id_key)]
        limits, usage, leased = self.reader.read(project_id, ids)
        resources = self.kind.resources
        limits = {name: value for name, value in limits.items()
                  if name in resources and value is not None and value >= 0}
        base = {name: max(0, usage.get(name, 0) - leased.get(name, 0))
                for name in resources}
        return WindowQuotaCheck(self.kind, project_id, limits, base, before)


class WindowQuotaCheck:
    """A project's limits, checked inside the writing transaction.

    :param base: ``{resource: n}`` that the project uses at every instant
        outside its leases.
    :param before: for an update, the lease's ``(start, end, demand)``
        before it.
    """

    def __init__(self, kind, project_id, limits, base, before=None):
        self.kind = kind
        self.project_id = project_id
        self.limits = limits
        self.base = base
        self.before = before

    def check(self, session, lease_id):
        """Refuse the lease if the project would go over a limit in it.

        :param lease_id: the lease created or changed, whose rows the
            transaction has written already.
        :raises ReservationError: the kind's error, naming the resources
            over their limits as the service's own error does.
        """
        if not self.limits:
            return
        time_quotas.lock_project(session, self.project_id)
        start, end, own = _lease_demand(session, self.kind, self.project_id,
                                        lease_id)
        if not self._adds(start, end, own):
            return
        others = _demands(session, self.kind, self.project_id, start, end,
                          lease_id)
        peaks = peak_usage(self.kind.resources, others, start, end)
        overs = [name for name in self.kind.resources
                 if name in self.limits and own[name] and
                 self.base[name] + peaks[name] + own[name] >
                 self.limits[name]]
        if overs:
            raise self.kind.error(
                overs, [own[name] for name in overs],
                [self.base[name] + peaks[name] for name in overs],
                [self.limits[name] for name in overs])

    def _adds(self, start, end, own):
        """Say whether the lease asks for more than it had before."""
        if not any(own.values()):
            return False
        if self.before is None:
            return True
        old_start, old_end, old_own = self.before
        return (start < old_start or end > old_end or
                any(own[name] > old_own[name] for name in own))


class Checks:
    """Several transaction checks run as one, in order."""

    def __init__(self, checks):
        self.checks = checks

    def check(self, session, lease_id):
        """Run every check; the first refusal wins."""
        for one in self.checks:
            one.check(session, lease_id)


def leased_ids(session, kind, project_id, now):
    """Return the ids of the resources in the project's leases not ended."""
    return sorted({row[0] for query in kind.leased(project_id, now)
                   for row in session.execute(query)})


def _leased_servers(project_id, now):
    """Select the servers in the project's leases not ended.

    Reserved servers (``virtual:instance``), those seated on
    instance-capacity reservations or a stack's slices, and those a
    stack's start made: Nova counts them once built.
    """
    live = _live(project_id, now)
    reserved = (sa.select(INSTANCE_RESERVATIONS.c.server_id)
                .join(RESERVATIONS, RESERVATIONS.c.id ==
                      INSTANCE_RESERVATIONS.c.reservation_id)
                .join(LEASES, LEASES.c.id == RESERVATIONS.c.lease_id)
                .where(live, INSTANCE_RESERVATIONS.c.server_id.is_not(None)))
    seated = (sa.select(ALLOCATIONS.c.server_id)
              .join(RESERVATIONS,
                    RESERVATIONS.c.id == ALLOCATIONS.c.reservation_id)
              .join(LEASES, LEASES.c.id == RESERVATIONS.c.lease_id)
              .where(live, ALLOCATIONS.c.server_id.is_not(None)))
    # A stack's servers are seated; its record also holds one booted off
    # its slices, which its totals count all the same.
    return reserved, seated, _stack_resources(project_id, now, stacks.SERVER)


def _leased_volumes(project_id, now):
    """Select the volumes in the project's leases not ended.

    Reserved volumes (``virtual:volume``), which Cinder counts once
    started, and the volumes a stack's start made.
    """
    reserved = (sa.select(VOLUME_RESERVATIONS.c.volume_id)
                .join(RESERVATIONS, RESERVATIONS.c.id ==
                      VOLUME_RESERVATIONS.c.reservation_id)
                .join(LEASES, LEASES.c.id == RESERVATIONS.c.lease_id)
                .where(_live(project_id, now),
                       VOLUME_RESERVATIONS.c.volume_id.is_not(None)))
    return reserved, _stack_resources(project_id, now, stacks.VOLUME)


def _stack_resources(project_id, now, resource_type):
    """Select the resources of a type made by the starts of stack leases.

    Those of the project's leases not ended.
    """
    return (sa.select(STACK_RESOURCES.c.physical_id)
            .join(RESERVATIONS,
                  RESERVATIONS.c.id == STACK_RESOURCES.c.reservation_id)
            .join(LEASES, LEASES.c.id == RESERVATIONS.c.lease_id)
            .where(_live(project_id, now),
                   STACK_RESOURCES.c.resource_type == resource_type))


def _live(project_id, now):
    """Return SQL: a lease of the project that has not ended."""
    return sa.and_(LEASES.c.project_id == project_id,
                   LEASES.c.end_date > now)


def _lease_demand(session, kind, project_id, lease_id):
    """Return ``(start, end, {resource: n})`` of a lease of the project."""
    start, end = session.execute(
        sa.select(LEASES.c.start_date, LEASES.c.end_date)
        .where(LEASES.c.id == lease_id)).one()
    own = dict.fromkeys(kind.resources, 0)
    for _start, _end, demand in _demands(session, kind, project_id, start,
                                         end, lease_id, own=True):
        own = {name: own[name] + demand[name] for name in own}
    return start, end, own


def _demands(session, kind, project_id, start, end, lease_id, own=False):
    """Return ``[(start, end, {resource: n})]`` of the kind's reservations.

    Those of the project's leases whose window overlaps ``[start, end)``:
    of lease ``lease_id`` if ``own``, else of the others; a row of each
    reservation, from each of the kind's tables.
    """
    which = (LEASES.c.id == lease_id) if own else (LEASES.c.id != lease_id)
    demands = []
    for table, sizes in kind.sizes:
        rows = session.execute(
            sa.select(LEASES.c.start_date, LEASES.c.end_date, *sizes)
            .join_from(table, RESERVATIONS,
                       RESERVATIONS.c.id == table.c.reservation_id)
            .join(LEASES, LEASES.c.id == RESERVATIONS.c.lease_id)
            .where(LEASES.c.project_id == project_id, which,
                   LEASES.c.start_date < end, LEASES.c.end_date > start))
        demands += [(row_start, row_end, dict(zip(
            kind.resources, (int(size or 0) for size in row_sizes))))
            for row_start, row_end, *row_sizes in rows]
    return demands


def peak_usage(resources, bookings, start, end):
    """Return ``{resource: peak}`` of ``bookings`` within ``[start, end)``.

    :param bookings: ``[(start, end, {resource: n})]``; each counts from
        its start (included) to its end (excluded).

    A sweep over the bookings' boundaries: usage only rises at a start,
    so each peak is at ``start`` or at a booking's start in the window.
    """
    peaks = dict.fromkeys(resources, 0)
    moments = {start} | {row_start for row_start, _end, _n in bookings
                         if start < row_start < end}
    for moment in moments:
        for name in resources:
            used = sum(demand[name] for row_start, row_end, demand
                       in bookings if row_start <= moment < row_end)
            peaks[name] = max(peaks[name], used)
    return peaks


_AMOUNT = INSTANCE_RESERVATIONS.c.amount
_STACK = STACK_RESERVATIONS.c
# Nova's: a leased server, a capacity reservation's seats or a stack's
# servers, with Nova's resources in the order its quota errors name them.
COMPUTE = Kind(
    resources=(INSTANCES, CORES, RAM),
    sizes=((INSTANCE_RESERVATIONS,
            (_AMOUNT, _AMOUNT * INSTANCE_RESERVATIONS.c.vcpus,
             _AMOUNT * INSTANCE_RESERVATIONS.c.memory_mb)),
           (STACK_RESERVATIONS,
            (_STACK.instances, _STACK.vcpus, _STACK.memory_mb))),
    leased=_leased_servers,
    resource_types=('virtual:instance', 'flavor:instance', 'heat:stack'),
    id_key='server_id',
    error=exceptions.ComputeQuotaExceeded)
# Cinder's: a leased volume or a stack's volumes, gigabytes first as
# Cinder checks them.
VOLUME = Kind(
    resources=(GIGABYTES, VOLUMES),
    sizes=((VOLUME_RESERVATIONS,
            (VOLUME_RESERVATIONS.c.size_gb, sa.literal(1))),
           (STACK_RESERVATIONS, (_STACK.volume_gb, _STACK.volumes))),
    leased=_leased_volumes,
    resource_types=('virtual:volume', 'heat:stack'),
    id_key='volume_id',
    error=exceptions.VolumeQuotaExceeded)
