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

"""The planner: finds free hosts for a window and books them.

A host is free for ``[start, end)`` when none of its allocations (whole
host or instance slice) overlaps ``[start - cleaning_time, end +
cleaning_time)``; windows that only touch do not overlap. The search is
one SQL statement whatever the number of hosts and leases: the
request's conditions on computehosts (its capability queries compiled by
:func:`reservation_ext.planning.capabilities.compile`) and a busy test on
host_allocations (served by its (host_id, start_date, end_date) index) in
one WHERE clause.

No host is ever booked twice, also with concurrent writers, as in
Placement: every change to a host's allocations bumps
``computehosts.generation`` with one UPDATE that only matches the hosts
still at the generation the search read. A writer that lost the race
updates fewer rows than it wants and raises :class:`ConcurrentUpdate`, and
its transaction rolls back; :func:`db.api.retry_on_conflict` reruns it.
The functions that book take the ``session`` of a :func:`db.api.writer`
transaction, which on SQLite also serializes the writers.
"""

import datetime
import uuid

import sqlalchemy as sa

from db import models
from reservation_ext import exceptions

HOSTS = models.ComputeHost.__table__
ALLOCATIONS = models.HostAllocation.__table__


def find_free_hosts(session, start, end, max_count=None, cleaning_time=0,
                    host_ids=None, exclude_reservation_id=None,
                    conditions=()):
    """Reservable hosts matching ``conditions``, free in ``[start, end)``.

    :param max_count: return at most this many hosts.
    :param cleaning_time: minutes kept free before and after the window.
    :param host_ids: only consider these hosts.
    :param exclude_reservation_id: ignore this reservation's allocations
        (to move it).
    :param conditions: SQL conditions on computehosts (a resource
        plugin's compiled constraints and capability queries).
    :returns: ``(host_id, generation)`` tuples, by ascending host id.
    """
    margin = datetime.timedelta(minutes=cleaning_time)
    lower, upper = start - margin, end + margin
    starts_before = [ALLOCATIONS.c.host_id == HOSTS.c.id,
                     ALLOCATIONS.c.start_date < upper]
    if exclude_reservation_id is not None:
        starts_before.append(
            ALLOCATIONS.c.reservation_id != exclude_reservation_id)
    # Of the host's allocations that start before the window ends (an
    # index range), the latest is the one that overlaps when any does
    # (unless instance slices nest). Testing it first proves a busy host
    # busy in one index step; only the hosts that pass it get their
    # history read by the exact test. coalesce: a host without
    # allocations passes.
    latest_end = (sa.select(ALLOCATIONS.c.end_date).where(*starts_before)
                  .order_by(ALLOCATIONS.c.start_date.desc()).limit(1)
                  .scalar_subquery())
    busy = sa.or_(
        sa.func.coalesce(latest_end, lower) > lower,
        sa.exists().where(*starts_before, ALLOCATIONS.c.end_date > lower))
    stmt = (sa.select(HOSTS.c.id, HOSTS.c.generation)
            .where(HOSTS.c.reservable, *conditions, ~busy)
            .order_by(HOSTS.c.id).limit(max_count))
    if host_ids is not None:
        stmt = stmt.where(HOSTS.c.id.in_(host_ids))
    return [tuple(row) for row in session.execute(stmt)]


def allocate_hosts(session, reservation_id, start, end, min_count,
                   max_count, cleaning_time=0, host_ids=None, conditions=()):
    """Book between ``min_count`` and ``max_count`` free hosts.

    Writes one whole-host allocation per host for ``[start, end)``.
    ``host_ids`` and ``conditions`` select the hosts as for
    :func:`find_free_hosts`. ``session`` is a :func:`db.api.writer`
    transaction's.

    :returns: the ids of the booked hosts.
    :raises NotEnoughResources: fewer than ``min_count`` hosts are free;
        nothing is written.
    :raises ConcurrentUpdate: another writer booked one of the hosts
        first; rerun the transaction (:func:`db.api.retry_on_conflict`).
    """
    free = find_free_hosts(session, start, end, max_count=max_count,
                           cleaning_time=cleaning_time, host_ids=host_ids,
                           conditions=conditions)
    if len(free) < min_count:
        raise exceptions.NotEnoughResources(
            'Not enough hosts available: %d matching host(s) free from %s '
            'to %s, %d wanted.' % (len(free), start, end, min_count))
    if free:
        _bump_generations(session, free)
        session.execute(sa.insert(ALLOCATIONS), [
            {'id': str(uuid.uuid4()), 'host_id': host_id,
             'reservation_id': reservation_id, 'start_date': start,
             'end_date': end, 'whole_host': True}
            for host_id, _generation in free])
    return [host_id for host_id, _generation in free]


def allocate_slice(session, reservation_id, start, end, size,
                   ratios=(1.0, 1.0, 1.0), cleaning_time=0, conditions=()):
    """Book a slice of one host (an instance's flavor) for ``[start, end)``.

    A host takes the slice when no whole-host allocation overlaps the
    window and its capacity (``vcpus``, ``memory_mb``, ``local_gb`` times
    ``ratios``, as Nova's allocation ratios) minus the slices that overlap
    the window holds ``size``. Slices that overlap the window but not each
    other still add up: the check may refuse a slice that would fit, but
    never books a host beyond its capacity. Of the hosts that fit, the
    lowest id is booked, so slices fill hosts one after another.

    :param size: ``(vcpus, memory_mb, disk_gb)``.
    :returns: the id of the booked host.
    :raises NotEnoughResources: no host fits; nothing is written.
    :raises ConcurrentUpdate: as for :func:`allocate_hosts`.
    """
    margin = datetime.timedelta(minutes=cleaning_time)
    overlapping = [ALLOCATIONS.c.host_id == HOSTS.c.id,
                   ALLOCATIONS.c.start_date < end + margin,
                   ALLOCATIONS.c.end_date > start - margin]
    fits = [capacity * ratio - sa.select(
                sa.func.coalesce(sa.func.sum(used), 0))
            .where(*overlapping, ~ALLOCATIONS.c.whole_host)
            .scalar_subquery() >= wanted
            for capacity, used, ratio, wanted in zip(
                (HOSTS.c.vcpus, HOSTS.c.memory_mb, HOSTS.c.local_gb),
                (ALLOCATIONS.c.vcpus, ALLOCATIONS.c.memory_mb,
                 ALLOCATIONS.c.disk_gb), ratios, size)]
    host = session.execute(
        sa.select(HOSTS.c.id, HOSTS.c.generation).where(
            HOSTS.c.reservable, *conditions,
            ~sa.exists().where(*overlapping, ALLOCATIONS.c.whole_host),
            *fits).order_by(HOSTS.c.id).limit(1)).first()
    if host is None:
        raise exceptions.NotEnoughResources(
            'No reservable host has %d vCPU(s), %d MB of RAM and %d GB of '
            'disk free from %s to %s.' % (size + (start, end)))
    _bump_generations(session, [tuple(host)])
    vcpus, memory_mb, disk_gb = size
    session.execute(sa.insert(ALLOCATIONS).values(
        id=str(uuid.uuid4()), host_id=host.id, reservation_id=reservation_id,
        start_date=start, end_date=end, whole_host=False, vcpus=vcpus,
        memory_mb=memory_mb, disk_gb=disk_gb))
    return host.id


def move_allocations(session, reservation_id, start, end, cleaning_time=0):
    """Move a reservation's allocations to ``[start, end)``.

    Its hosts must be free in the new window apart from its own
    allocations.

    :raises NotEnoughResources: a host is booked by another reservation
        in the new window; nothing is changed.
    :raises ConcurrentUpdate: as for :func:`allocate_hosts`.
    """
    booked = _host_ids(session, reservation_id)
    free = find_free_hosts(session, start, end, cleaning_time=cleaning_time,
                           host_ids=booked,
                           exclude_reservation_id=reservation_id)
    if len(free) < len(booked):
        raise exceptions.NotEnoughResources(
            'Cannot move the reservation to %s - %s: %d of its %d host(s) '
            'are booked then.' % (start, end, len(booked) - len(free),
                                  len(booked)))
    if free:
        _bump_generations(session, free)
        session.execute(
            sa.update(ALLOCATIONS)
            .where(ALLOCATIONS.c.reservation_id == reservation_id)
            .values(start_date=start, end_date=end))


def release(session, reservation_id):
    """Delete a reservation's allocations; its hosts become free."""
    session.execute(
        sa.update(HOSTS)
        .where(HOSTS.c.id.in_(
            sa.select(ALLOCATIONS.c.host_id)
            .where(ALLOCATIONS.c.reservation_id == reservation_id)))
        .values(generation=HOSTS.c.generation + 1))
    session.execute(sa.delete(ALLOCATIONS).where(
        ALLOCATIONS.c.reservation_id == reservation_id))


def _host_ids(session, reservation_id):
    return session.execute(
        sa.select(ALLOCATIONS.c.host_id).distinct()
        .where(ALLOCATIONS.c.reservation_id == reservation_id)).scalars().all()


def _bump_generations(session, hosts):
    """Bump the generation of ``(host_id, generation)`` hosts, all or none.

    One UPDATE that only matches hosts still at the generation the caller
    read. On PostgreSQL and MySQL a concurrent writer of the same host
    waits for our row lock and then re-checks the WHERE clause against our
    committed generation, so it matches fewer rows and fails here.
    """
    generations = dict(hosts)
    result = session.execute(
        sa.update(HOSTS)
        .where(HOSTS.c.id.in_(generations),
               HOSTS.c.generation == sa.case(generations, value=HOSTS.c.id))
        .values(generation=HOSTS.c.generation + 1))
    if result.rowcount != len(generations):
        raise exceptions.ConcurrentUpdate()
