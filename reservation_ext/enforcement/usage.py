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

"""Time-quota usage: the hours of resources a project's leases reserve.

Resources (the ``resource_name`` of the unified limits):

``host_hours``
    whole hosts booked by ``physical:host`` reservations, times hours;
``vcpu_hours``
    vCPUs of the capacity slices booked by ``virtual:instance``,
    ``flavor:instance`` and ``heat:stack`` reservations, times hours (a
    server in the shared pool books none);
``gb_hours``
    GB of ``virtual:volume`` reservations and of the volumes of
    ``heat:stack`` reservations, times the hours of their lease.

Usage counts every lease of the project in the leases DB, whatever its
status, from ``floor`` on: a booking from ``start`` to ``end`` counts
``max(0, end - max(start, floor))`` hours. With ``floor = now - window``
that is the hours used in the past window plus all that is booked ahead.
A deleted lease leaves the DB, and with it the usage.

The sums are made in SQL; :class:`hours` is the hours between two
datetime columns in each dialect the leases DB runs on.
"""

import functools

import sqlalchemy as sa
from sqlalchemy.ext import compiler
from sqlalchemy.sql import expression

from db import tables

HOST_HOURS = 'host_hours'
VCPU_HOURS = 'vcpu_hours'
GB_HOURS = 'gb_hours'
RESOURCES = (HOST_HOURS, VCPU_HOURS, GB_HOURS)

LEASES = tables.LEASES
RESERVATIONS = tables.RESERVATIONS
ALLOCATIONS = tables.ALLOCATIONS
VOLUME_RESERVATIONS = tables.VOLUME_RESERVATIONS
STACK_RESERVATIONS = tables.STACK_RESERVATIONS


class hours(expression.FunctionElement):
    """``hours(start, end)``: the hours from ``start`` to ``end`` (float)."""

    type = sa.Float()
    name = 'hours'
    inherit_cache = True


@compiler.compiles(hours)
def _hours_postgresql(element, sql_compiler, **kw):
    start, end = (sql_compiler.process(arg, **kw)
                  for arg in element.clauses)
    return 'EXTRACT(EPOCH FROM (%s - %s)) / 3600.0' % (end, start)


@compiler.compiles(hours, 'sqlite')
def _hours_sqlite(element, sql_compiler, **kw):
    start, end = (sql_compiler.process(arg, **kw)
                  for arg in element.clauses)
    return '(julianday(%s) - julianday(%s)) * 24.0' % (end, start)


@compiler.compiles(hours, 'mysql')
def _hours_mysql(element, sql_compiler, **kw):
    start, end = (sql_compiler.process(arg, **kw)
                  for arg in element.clauses)
    return 'TIMESTAMPDIFF(MICROSECOND, %s, %s) / 3600000000.0' % (start,
                                                                  end)


def project_usage(session, project_id, floor, lease_id):
    """Return ``(usage, lease_usage)``: ``{resource: hours}`` of the project.

    ``usage`` counts all the project's leases, ``lease_usage`` the lease
    ``lease_id`` alone (the one being created or changed).
    """
    usage = dict.fromkeys(RESOURCES, 0.0)
    lease_usage = dict.fromkeys(RESOURCES, 0.0)
    for resources, query in _QUERIES:
        for is_lease, *sums in session.execute(
                query(project_id, floor, lease_id)):
            for resource, value in zip(resources, sums):
                usage[resource] += float(value or 0)
                if is_lease:
                    lease_usage[resource] += float(value or 0)
    return _rounded(usage), _rounded(lease_usage)


def _rounded(usage):
    """Round ``usage`` to the thousandth of an hour.

    SQLite's date arithmetic is in floating-point days: a whole day must
    not count as 24.0000001 hours.
    """
    return {resource: round(value, 3) for resource, value in usage.items()}


def _clipped_hours(start, end, floor):
    return hours(sa.case((start < floor, floor), else_=start), end)


def _allocation_usage(project_id, floor, lease_id):
    """Select the host-hours and vCPU-hours of the project's allocations.

    Whole hosts, and the slices of capacity and stack reservations.
    """
    span = _clipped_hours(ALLOCATIONS.c.start_date, ALLOCATIONS.c.end_date,
                          floor)
    is_lease = (LEASES.c.id == lease_id).label('is_lease')
    hosts = sa.case((ALLOCATIONS.c.whole_host, span), else_=0.0)
    vcpus = sa.case((ALLOCATIONS.c.whole_host, 0.0),
                    else_=ALLOCATIONS.c.vcpus * span)
    return (sa.select(is_lease, sa.func.sum(hosts), sa.func.sum(vcpus))
            .join_from(ALLOCATIONS, RESERVATIONS,
                       RESERVATIONS.c.id == ALLOCATIONS.c.reservation_id)
            .join(LEASES, LEASES.c.id == RESERVATIONS.c.lease_id)
            .where(LEASES.c.project_id == project_id,
                   ALLOCATIONS.c.end_date > floor)
            .group_by(is_lease))


def _volume_usage(size_gb, project_id, floor, lease_id):
    """Select the GB-hours of a reservation table's ``size_gb`` column.

    A stack's slices count its servers' vCPU-hours in
    :func:`_allocation_usage`; its volumes have no slices.
    """
    span = _clipped_hours(LEASES.c.start_date, LEASES.c.end_date, floor)
    is_lease = (LEASES.c.id == lease_id).label('is_lease')
    volumes = size_gb.table
    return (sa.select(is_lease, sa.func.sum(size_gb * span))
            .join_from(volumes, RESERVATIONS,
                       RESERVATIONS.c.id == volumes.c.reservation_id)
            .join(LEASES, LEASES.c.id == RESERVATIONS.c.lease_id)
            .where(LEASES.c.project_id == project_id,
                   LEASES.c.end_date > floor)
            .group_by(is_lease))


# ``(resources, query)``: the sums of ``query(project_id, floor,
# lease_id)``'s rows ``(is_lease, *sums)`` count for ``resources``.
_QUERIES = (
    ((HOST_HOURS, VCPU_HOURS), _allocation_usage),
    ((GB_HOURS,), functools.partial(_volume_usage,
                                    VOLUME_RESERVATIONS.c.size_gb)),
    ((GB_HOURS,), functools.partial(_volume_usage,
                                    STACK_RESERVATIONS.c.volume_gb)))
