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

"""Which boots are preemptible, and where they may run.

A boot is preemptible when its flavor has the extra spec
``reservation:preemptible=true`` or it carries the scheduler hint
``preemptible=true``, unless its flavor is an instance-capacity
reservation's (``reservation:id``). It may declare how long its work
runs (:func:`runtime`: the hint ``preemptible_runtime``, else the extra
spec ``reservation:preemptible_runtime``, in seconds). It may run on the
shared pool (hosts that are not reservable) and on the reservable
capacity that nothing holds now and nothing books soon. A reservable
host is *closed* to preemptibles when:

* it is not reservable (in maintenance) or recycles;
* a whole-host booking runs on it now (within the cleaning time);
* a booking of any kind (whole host or slice) that has not started yet
  starts by ``now + preemption_lead_time + cleaning_time``.

* a seat of an instance-capacity reservation that runs now is free:
  a boot with the reservation's flavor may come at any time and must
  find its room (:mod:`reservation_ext.planning.seats`).

A running slice whose server is there does not close its host: Nova
counts the server, so what is left of the host may serve preemptibles
until the next booking comes near. From the lead time on the engine
stops the preemptibles in a booking's way
(:mod:`reservation_ext.engine.reclaim`), and none comes back, since the
host is closed until the booking has started.

Only bookings of reservations count (a proposal's hold is not yet a
lease). The rule is one SQL statement (:func:`closed_hosts`) over the
leases DB; :func:`closed` is its condition, for callers (the utilization
benchmark) that read the same tables. :func:`reclaim_times` says when a
host's preemptibles are reclaimed at the latest (:func:`reclaim_times_of`
for the hosts of a page of server views), and :func:`next_change`
when either answer may change with time alone
(:mod:`reservation_ext.planning.preemptible_view` keeps them until then).
"""

import datetime

from oslo_utils import strutils
import sqlalchemy as sa

from db import tables
from reservation_ext import exceptions
from reservation_ext.states import ReservationStatus

EXTRA_SPEC = 'reservation:preemptible'
HINT = 'preemptible'
# How long the work of a preemptible boot runs, in seconds: the
# ReservationFilter passes only the hosts where it would end before a
# booking reclaims it. The hint wins over the extra spec.
RUNTIME_EXTRA_SPEC = 'reservation:preemptible_runtime'
RUNTIME_HINT = 'preemptible_runtime'
# A year: longer work has no gap to fit, and no one can say it runs that
# long (a typo, a time in milliseconds).
MAX_RUNTIME = 365 * 24 * 3600
# The extra spec of an instance-capacity reservation's flavor: its servers
# run on booked seats, never preemptible (even when the flavor it was
# made from was).
RESERVED_FLAVOR_SPEC = 'reservation:id'

HOSTS = tables.HOSTS
ALLOCATIONS = tables.ALLOCATIONS
RESERVATIONS = tables.RESERVATIONS
RECYCLING = tables.RECYCLING
INSTANCE_RESERVATIONS = tables.INSTANCE_RESERVATIONS


def is_preemptible(extra_specs, hints):
    """Return whether a boot is preemptible.

    :param extra_specs: its flavor's extra specs.
    :param hints: its scheduler hints; a value may be a list of one, as
        Nova keeps them.
    """
    extra_specs = extra_specs or {}
    if RESERVED_FLAVOR_SPEC in extra_specs:
        return False
    return any(strutils.bool_from_string(value) for value in
               (extra_specs.get(EXTRA_SPEC), _one((hints or {}).get(HINT))))


def server_is_preemptible(server):
    """Return whether a server is preemptible, from its view in Nova.

    The view at a microversion that shows the flavor's extra specs and
    the scheduler hints (2.100), as the engine and the calendar list them.
    """
    return is_preemptible(server.get('flavor', {}).get('extra_specs'),
                          server.get('scheduler_hints'))


def _one(hint):
    """Return a hint's value; Nova keeps them as lists of one."""
    if isinstance(hint, (list, tuple)):
        return hint[0] if hint else None
    return hint


def check_hint(hints):
    """Return the ``preemptible`` hint of a boot as a bool (False: absent).

    :raises InvalidInput: naming the hint, when it is not a boolean.
    """
    hint = _one((hints or {}).get(HINT))
    try:
        return strutils.bool_from_string(hint, strict=True) \
            if hint is not None else False
    except ValueError:
        raise exceptions.InvalidInput(HINT, 'must be true or false')


def check_runtime(value, field):
    """Return a declared runtime as seconds.

    :param value: the hint's or the extra spec's value (a string).
    :param field: its name, for the error.
    :raises InvalidInput: naming ``field``, when ``value`` is not a whole
        number of seconds from 1 to :data:`MAX_RUNTIME`.
    """
    text = str(value)
    # A longer text is too large, and int() would refuse it past 4,300
    # digits.
    if not (text.isascii() and text.isdigit() and
            len(text) <= len(str(MAX_RUNTIME)) and
            0 < int(text) <= MAX_RUNTIME):
        raise exceptions.InvalidInput(
            field, 'must be a whole number of seconds from 1 to %d'
            % MAX_RUNTIME)
    return int(text)


def runtime(extra_specs, hints):
    """Return the runtime a boot declares (seconds), or None.

    The ``preemptible_runtime`` hint, else the flavor's extra spec
    ``reservation:preemptible_runtime``.

    :param hints: the boot's scheduler hints; a value may be a list of
        one, as Nova keeps them.
    :raises InvalidInput: naming the hint or extra spec whose value is
        not a runtime (:func:`check_runtime`).
    """
    hint = _one((hints or {}).get(RUNTIME_HINT))
    if hint is not None:
        return check_runtime(hint, RUNTIME_HINT)
    spec = (extra_specs or {}).get(RUNTIME_EXTRA_SPEC)
    return None if spec is None else check_runtime(spec, RUNTIME_EXTRA_SPEC)


def horizon(now, lead_time, cleaning_time):
    """Return the horizon: bookings starting before it close their host now.

    :param lead_time: ``[reservation] preemption_lead_time`` (seconds).
    :param cleaning_time: ``[reservation] cleaning_time`` (minutes).
    """
    return now + datetime.timedelta(seconds=lead_time, minutes=cleaning_time)


def closed(now, lead_time, cleaning_time, hosts=HOSTS):
    """Return the SQL condition of a ``hosts`` row closed to preemptibles."""
    margin = datetime.timedelta(minutes=cleaning_time)
    not_started = sa.exists().where(
        RESERVATIONS.c.id == ALLOCATIONS.c.reservation_id,
        RESERVATIONS.c.status == ReservationStatus.PENDING)
    free_seat = sa.and_(ALLOCATIONS.c.server_id.is_(None), sa.exists().where(
        INSTANCE_RESERVATIONS.c.reservation_id == ALLOCATIONS.c.reservation_id,
        INSTANCE_RESERVATIONS.c.server_id.is_(None)))
    booked = sa.exists().where(
        ALLOCATIONS.c.host_id == hosts.c.id,
        ALLOCATIONS.c.reservation_id.is_not(None),
        # As the engine's reclaim: a booking at the horizon is reclaimed
        # now, so nothing may land after that.
        ALLOCATIONS.c.start_date <= horizon(now, lead_time, cleaning_time),
        ALLOCATIONS.c.end_date > now - margin,
        sa.or_(ALLOCATIONS.c.whole_host, not_started, free_seat))
    recycling = sa.exists().where(RECYCLING.c.host_id == hosts.c.id)
    return sa.or_(~hosts.c.reservable, recycling, booked)


def _next_starts(now):
    """The conditions of the bookings that will reclaim a host's servers.

    Those that have not started; a booking never expires, a proposal's
    hold is not a lease yet.
    """
    return [ALLOCATIONS.c.start_date > now,
            ALLOCATIONS.c.expires_at.is_(None)]


def reclaim_times(session, now, until, lead_time, cleaning_time):
    """Return when the preemptibles of each host are reclaimed at the latest.

    ``{hypervisor hostname: time}`` (1 query): the engine's reclaim
    reaches a host ``lead_time`` seconds and the cleaning time before its
    next booking starts. Only the hosts with a booking that starts after
    ``now`` and is reclaimed by ``until`` are there.

    :param lead_time: ``[reservation] preemption_lead_time`` (seconds).
    :param cleaning_time: ``[reservation] cleaning_time`` (minutes).
    """
    ahead = horizon(now, lead_time, cleaning_time) - now
    # Grouped by host id inside, so that the search is the one range of
    # the start index, not a probe per host.
    first = (sa.select(ALLOCATIONS.c.host_id,
                       sa.func.min(ALLOCATIONS.c.start_date).label('start'))
             .where(*_next_starts(now),
                    ALLOCATIONS.c.start_date <= until + ahead)
             .group_by(ALLOCATIONS.c.host_id).subquery())
    rows = session.execute(
        sa.select(HOSTS.c.hypervisor_hostname, first.c.start)
        .join(first, first.c.host_id == HOSTS.c.id))
    return {name: start - ahead for name, start in rows}


def reclaim_times_of(session, now, hostnames, lead_time, cleaning_time):
    """Return :func:`reclaim_times` of a few hosts, however far (1 query).

    For the hosts of a page of server views: a probe per host named.
    A host that is not reservable (not in the inventory) is not there.
    """
    names = sorted(set(hostnames) - {None})
    if not names:
        return {}
    ahead = horizon(now, lead_time, cleaning_time) - now
    rows = session.execute(
        sa.select(HOSTS.c.hypervisor_hostname,
                  sa.func.min(ALLOCATIONS.c.start_date))
        .join(ALLOCATIONS, ALLOCATIONS.c.host_id == HOSTS.c.id)
        .where(HOSTS.c.hypervisor_hostname.in_(names), *_next_starts(now))
        .group_by(HOSTS.c.hypervisor_hostname))
    return {name: start - ahead for name, start in rows}


def next_change(session, now, lead_time, cleaning_time):
    """Return the first time after ``now`` that the answers above may change.

    The first of: a booking comes within the horizon of its start (its
    host may close), a booking starts (its host's next reclaim moves on),
    a booking's end is a cleaning time past (its host may open). Every
    booking counts, also one that would not close its host: an earlier
    time only means an earlier reading. None when no booking is ahead.
    One statement.
    """
    ahead = horizon(now, lead_time, cleaning_time) - now
    margin = datetime.timedelta(minutes=cleaning_time)
    booking = ALLOCATIONS.c.reservation_id.is_not(None)
    first_start = sa.func.min(ALLOCATIONS.c.start_date)
    closing, starting, opening = session.execute(sa.select(
        sa.select(first_start).where(
            booking, ALLOCATIONS.c.start_date > now + ahead)
        .scalar_subquery(),
        sa.select(first_start).where(
            booking, ALLOCATIONS.c.start_date > now).scalar_subquery(),
        sa.select(sa.func.min(ALLOCATIONS.c.end_date)).where(
            booking, ALLOCATIONS.c.end_date > now - margin)
        .scalar_subquery())).one()
    changes = [closing and closing - ahead, starting,
               opening and opening + margin]
    return min((when for when in changes if when is not None), default=None)


def closed_hosts(session, now, lead_time, cleaning_time):
    """Return the hypervisor hostnames closed to preemptibles now (1 query)."""
    return frozenset(session.scalars(
        sa.select(HOSTS.c.hypervisor_hostname)
        .where(closed(now, lead_time, cleaning_time))))
