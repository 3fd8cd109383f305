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

"""The one writer of the leases, their projects, reservations and events.

The tables are ``leases``, ``lease_projects``, ``reservations`` and
``events`` (:data:`db.tables.LEASES`, ``LEASE_PROJECTS``,
``RESERVATIONS`` and ``LEASE_EVENTS``).

The lease service (:mod:`reservation_ext.leases.service` and
:mod:`reservation_ext.leases.updates`) creates, updates and deletes the
leases with their projects, reservations and events; the engine
(:mod:`reservation_ext.engine.events`) claims the due events and records
their outcomes, moving the leases and reservations through their
statuses, and renews its claims while it runs them
(:mod:`reservation_ext.engine.claims`); the host monitor
(:mod:`reservation_ext.engine.host_monitor`) flags the reservations that
miss resources and their leases degraded, and clears the flags again.

Each function runs its statements in the caller's session and returns
what the caller decides on (whether a conditional UPDATE matched, the
ids it changed); the callers keep their transactions, their reads and
their checks. A write conditioned on a status (or a claim token) is how
two writers racing for a row learn which one changed it.
"""

import datetime
import uuid

import sqlalchemy as sa

from db import api as db_api
from db import tables
from reservation_ext import states

LEASES = tables.LEASES
LEASE_PROJECTS = tables.LEASE_PROJECTS
RESERVATIONS = tables.RESERVATIONS
# The resource types whose reservations take a slice of a host, not all
# of it: a server's start checks the room it needs on its host itself.
SLICES = ('virtual:instance',)
LEASE_EVENTS = tables.LEASE_EVENTS
ALLOCATIONS = tables.ALLOCATIONS

EventStatus = states.EventStatus
EventType = states.EventType
LeaseStatus = states.LeaseStatus
ReservationStatus = states.ReservationStatus

# Leases whose events wait: a delete or the Nova/Cinder side of an update
# is under way.
_BUSY_LEASE = (LeaseStatus.DELETING, LeaseStatus.UPDATING)


# Leases and their projects.

def add_lease(session, values, now):
    """Insert a new PENDING lease; return its row as a dict.

    :param values: ``name``, ``user_id``, ``project_id``, ``trust_id``,
        ``start_date``, ``end_date`` and ``before_end_date``.
    """
    lease = {
        'id': str(uuid.uuid4()), 'name': values['name'],
        'user_id': values['user_id'], 'project_id': values['project_id'],
        'trust_id': values['trust_id'],
        'start_date': values['start_date'],
        'end_date': values['end_date'],
        'before_end_date': values['before_end_date'],
        'status': LeaseStatus.PENDING, 'status_reason': None,
        'degraded': False, 'created_at': now, 'updated_at': None,
    }
    session.execute(LEASES.insert().values(**lease))
    return lease


def import_leases(session, leases, reservations, events):
    """Bring leases of another database (Blazar's) over, as they are there.

    Their ids, statuses, dates and events are kept: each table in one
    INSERT. Leases already started join their pools, so the writer's
    commit moves the pool generation.

    :param leases: leases rows (every column but ``status_reason``).
    :param reservations: reservations rows.
    :param events: events rows.
    """
    if leases:
        session.execute(sa.insert(LEASES), leases)
    if reservations:
        session.execute(sa.insert(RESERVATIONS), reservations)
    if events:
        session.execute(sa.insert(LEASE_EVENTS), events)
    if any(lease['status'] != LeaseStatus.PENDING for lease in leases):
        db_api.note_pools_changed(session)


def add_projects(session, lease_id, project_ids):
    """Share a lease with the projects ``project_ids`` (if there are any)."""
    if project_ids:
        session.execute(LEASE_PROJECTS.insert(), [
            {'lease_id': lease_id, 'project_id': project}
            for project in project_ids])


def update_lease(session, lease_id, status, values, now):
    """Set a lease's name and dates if it is still in ``status``.

    :param values: ``name``, ``start_date``, ``end_date`` and
        ``before_end_date``.
    :returns: whether the lease was written (False: it moved on).
    """
    result = session.execute(LEASES.update().where(
        LEASES.c.id == lease_id, LEASES.c.status == status
    ).values(name=values['name'], start_date=values['start_date'],
             end_date=values['end_date'],
             before_end_date=values['before_end_date'], updated_at=now))
    return bool(result.rowcount)


def set_lease_status(session, lease_id, current, status, now):
    """Move a lease from ``current`` to ``status``; return if it was there.

    The caller checks that the move is allowed.
    """
    result = session.execute(LEASES.update().where(
        LEASES.c.id == lease_id, LEASES.c.status == current).values(
            status=status, updated_at=now))
    return bool(result.rowcount)


def set_lease_error(session, lease_id, reason, now):
    """Put a lease in ERROR with ``reason``, whatever its status."""
    session.execute(LEASES.update().where(
        LEASES.c.id == lease_id).values(
            status=LeaseStatus.ERROR, status_reason=reason, updated_at=now))


def delete_lease(session, lease_id):
    """Delete a lease; the schema cascades to every row under it.

    :returns: whether it was still there.
    """
    result = session.execute(LEASES.delete().where(LEASES.c.id == lease_id))
    return bool(result.rowcount)


def begin_leases(session, lease_ids, sources, status):
    """Move the leases of claimed events to ``status`` (STARTING, ...).

    Only those in one of ``sources``; the engine finds the others out
    of step when it runs their events.
    """
    session.execute(
        LEASES.update()
        .where(LEASES.c.id.in_(lease_ids), LEASES.c.status.in_(sources))
        .values(status=status))


def complete_leases(session, lease_ids, during, status):
    """Move the leases still ``during`` an event to ``status``.

    Their events succeeded; any earlier status reason is cleared.
    """
    session.execute(
        LEASES.update()
        .where(LEASES.c.id.in_(lease_ids), LEASES.c.status == during)
        .values(status=status, status_reason=None))


def fail_lease(session, lease_id, sources, reason):
    """Put a lease in one of ``sources`` in ERROR with ``reason``.

    Its event failed for the last time.

    :returns: whether the lease was in one of ``sources`` (and is now in
        ERROR).
    """
    return bool(session.execute(
        LEASES.update()
        .where(LEASES.c.id == lease_id, LEASES.c.status.in_(sources))
        .values(status=LeaseStatus.ERROR, status_reason=reason)).rowcount)


def mark_degraded(session, lease_id):
    """Flag a lease degraded; return whether it was not yet."""
    return bool(session.execute(
        sa.update(LEASES).where(LEASES.c.id == lease_id, ~LEASES.c.degraded)
        .values(degraded=True)).rowcount)


def undegraded():
    """Return SQL: a degraded lease whose reservations miss no resources."""
    return sa.and_(LEASES.c.degraded, ~sa.exists().where(
        RESERVATIONS.c.lease_id == LEASES.c.id,
        RESERVATIONS.c.missing_resources))


def clear_degraded(session):
    """Clear ``degraded`` where :func:`undegraded`; the ids cleared here.

    Row by row, so that of two engines each lease is one's
    (:func:`db.api.update_each`).
    """
    return db_api.update_each(session, sa.update(LEASES).where(
        undegraded()).values(degraded=False))


# Reservations.

def add_reservation(session, lease_id, resource_type, now,
                    reservation_id=None):
    """Insert a PENDING reservation of a lease; return its id.

    Its resource is set once the plugin reserved it
    (:func:`set_resource`).

    :param reservation_id: the id the create gave it already (a new one
        if None).
    """
    reservation_id = reservation_id or str(uuid.uuid4())
    session.execute(RESERVATIONS.insert().values(
        id=reservation_id, lease_id=lease_id,
        resource_type=resource_type, status=ReservationStatus.PENDING,
        missing_resources=False, resources_changed=False,
        created_at=now))
    return reservation_id


def set_resource(session, reservation_id, resource_id):
    """Record the plugin's resource of a reservation being created."""
    # Still the creation of the row: not an update to be timestamped.
    session.execute(RESERVATIONS.update().where(
        RESERVATIONS.c.id == reservation_id).values(
            resource_id=resource_id, updated_at=None))


def set_reservations_status(session, lease_ids, status):
    """Move every reservation of the leases ``lease_ids`` to ``status``."""
    session.execute(
        RESERVATIONS.update()
        .where(RESERVATIONS.c.lease_id.in_(lease_ids))
        .values(status=status))


def mark_resources_changed(session, reservation_id):
    """Flag a reservation's resources changed; return if it was not yet."""
    return _raise_flag(session, reservation_id,
                       RESERVATIONS.c.resources_changed)


def mark_missing(session, reservation_id):
    """Flag a reservation missing resources; return if it was not yet."""
    return _raise_flag(session, reservation_id,
                       RESERVATIONS.c.missing_resources)


def _raise_flag(session, reservation_id, flag):
    return bool(session.execute(
        sa.update(RESERVATIONS)
        .where(RESERVATIONS.c.id == reservation_id, ~flag)
        .values(**{flag.name: True})).rowcount)


def unmissing(failed_hosts, now):
    """Return SQL: a reservation missing resources that no failed host keeps.

    None of its bookings that end after ``now`` is on one of
    ``failed_hosts`` (ids, or a SELECT of them).
    """
    return sa.and_(
        RESERVATIONS.c.missing_resources,
        ~sa.exists().where(
            ALLOCATIONS.c.reservation_id == RESERVATIONS.c.id,
            ALLOCATIONS.c.host_id.in_(failed_hosts),
            ALLOCATIONS.c.end_date > now))


def clear_missing(session, failed_hosts, now):
    """Clear ``missing_resources`` where :func:`unmissing`."""
    session.execute(sa.update(RESERVATIONS)
                    .where(unmissing(failed_hosts, now))
                    .values(missing_resources=False))


# Events.

def add_events(session, lease_id, times, now):
    """Insert a lease's events, UNDONE.

    :param times: ``{event_type: when it is due}``.
    """
    session.execute(LEASE_EVENTS.insert(), [
        {'id': str(uuid.uuid4()), 'lease_id': lease_id,
         'event_type': event_type, 'time': time,
         'status': EventStatus.UNDONE, 'attempts': 0,
         'created_at': now}
        for event_type, time in times.items()])


def retime_events(session, lease_id, times, now):
    """Move the lease's UNDONE events to ``times`` where they differ.

    :param times: ``{event_type: when it is due}``.
    """
    for event_type, time in times.items():
        session.execute(LEASE_EVENTS.update().where(
            LEASE_EVENTS.c.lease_id == lease_id,
            LEASE_EVENTS.c.event_type == event_type,
            LEASE_EVENTS.c.status == EventStatus.UNDONE,
            LEASE_EVENTS.c.time != time).values(time=time, updated_at=now))


def claim_events(session, now, token, expires, limit):
    """Claim up to ``limit`` due events that may run now; return them.

    First the claims of engines that died or hang, then the events whose
    time (and retry time) has come, selected ``FOR UPDATE SKIP LOCKED``;
    at one instant, ends first. The claim is the UPDATE that sets
    ``token`` and ``expires`` on those that are still claimable.

    :returns: the claimed events' rows (mappings), none if none.
    """
    candidates = []
    for due in _due(now):
        left = limit - len(candidates)
        if left:
            candidates += session.scalars(
                sa.select(LEASE_EVENTS.c.id).where(due, _ready())
                .order_by(LEASE_EVENTS.c.time, _ends_first())
                .limit(left)
                .with_for_update(skip_locked=True, of=LEASE_EVENTS))
    if not candidates:
        return []
    # The conditions are checked again: this UPDATE, not the SELECTs
    # above, is what makes the claim exclusive.
    return db_api.update_returning(
        session, LEASE_EVENTS.update()
        .where(LEASE_EVENTS.c.id.in_(candidates), sa.or_(*_due(now)),
               _ready())
        .values(status=EventStatus.IN_PROGRESS, claimed_by=token,
                claim_expires_at=expires),
        *LEASE_EVENTS.c).mappings().all()


def claimable_events(session, now):
    """Return the ids of the events that a claim would take now.

    Due and ready by the claim's own rules (:func:`_due`, :func:`_ready`),
    however many: for the tools that watch whether engines leave
    claimable events unclaimed.
    """
    return set(session.scalars(sa.select(LEASE_EVENTS.c.id).where(
        sa.or_(*_due(now)), _ready())))


def any_claimable(session, now):
    """Return whether :func:`claim_events` would find an event now.

    A read, so that a poll that finds nothing takes no writer's lock.
    """
    return session.scalar(sa.select(sa.exists().where(
        sa.or_(*_due(now)), _ready())))


def finish_events(session, event_ids, token):
    """Record the events still claimed with ``token`` DONE; their ids."""
    return set(db_api.update_returning(
        session, LEASE_EVENTS.update()
        .where(LEASE_EVENTS.c.id.in_(event_ids), _claimed_with(token))
        .values(status=EventStatus.DONE, claim_expires_at=None,
                retry_at=None, message=None, **_NO_WAITS),
        LEASE_EVENTS.c.id).scalars())


def renew_claims(session, claims, expires):
    """Move the expiry of the events still claimed as ``claims`` say.

    :param claims: ``{event id: claim token}``, the events an engine is
        running.
    :param expires: their new ``claim_expires_at``.
    :returns: the ids of the events whose claims were lost: another
        claim holds them now (theirs expired and another engine took them
        over). An event recorded meanwhile is neither renewed nor lost.
    """
    if not claims:
        return set()
    # Tokens are new for every claim, so an id and a token of this engine
    # can only match a row that this engine's claim holds.
    renewed = set(db_api.update_returning(
        session, LEASE_EVENTS.update()
        .where(LEASE_EVENTS.c.id.in_(list(claims)),
               LEASE_EVENTS.c.claimed_by.in_(set(claims.values())),
               LEASE_EVENTS.c.status == EventStatus.IN_PROGRESS,
               LEASE_EVENTS.c.wait_deadline.is_(None))
        .values(claim_expires_at=expires),
        LEASE_EVENTS.c.id).scalars())
    rest = set(claims) - renewed
    if not rest:
        return set()
    # A recorded event keeps its token (one that waits too), or none once
    # given back to retry.
    return {row.id for row in session.execute(
        sa.select(LEASE_EVENTS.c.id, LEASE_EVENTS.c.claimed_by)
        .where(LEASE_EVENTS.c.id.in_(rest)))
        if row.claimed_by not in (None, claims[row.id])}


def retry_event(session, event_id, token, attempts, retry_at, message):
    """Give back a failed event claimed with ``token``, due at retry_at."""
    session.execute(
        LEASE_EVENTS.update()
        .where(LEASE_EVENTS.c.id == event_id, _claimed_with(token))
        .values(status=EventStatus.UNDONE, attempts=attempts,
                retry_at=retry_at, message=message, claimed_by=None,
                claim_expires_at=None, **_NO_WAITS))


def fail_event(session, event_id, token, attempts, message):
    """Record an event claimed with ``token`` in ERROR; return if it was."""
    return bool(session.execute(
        LEASE_EVENTS.update()
        .where(LEASE_EVENTS.c.id == event_id, _claimed_with(token))
        .values(status=EventStatus.ERROR, attempts=attempts,
                message=message, claim_expires_at=None,
                **_NO_WAITS)).rowcount)


def wait_event(session, event_id, token, waits, since, deadline):
    """Record that an event claimed with ``token`` waits; return if it was.

    It stays claimed with ``token``, with no claim expiry: no engine
    renews or takes over its claim while it waits (see
    :func:`resume_events`).

    :param waits: what it waits for, as JSON text
    :param since: when the wait began
    :param deadline: when the wait becomes a failed attempt
    """
    return bool(session.execute(
        LEASE_EVENTS.update()
        .where(LEASE_EVENTS.c.id == event_id, _claimed_with(token))
        .values(claim_expires_at=None, waits=waits, waits_since=since,
                wait_deadline=deadline)).rowcount)


def waiting_events():
    """Return the SELECT of the events that wait, oldest wait first."""
    return (sa.select(LEASE_EVENTS)
            .where(LEASE_EVENTS.c.status == EventStatus.IN_PROGRESS,
                   LEASE_EVENTS.c.wait_deadline.is_not(None))
            .order_by(LEASE_EVENTS.c.waits_since))


def events_under_way(session):
    """Count the events that run and those that wait; the oldest wait.

    :returns: ``(running, waiting, since)``, ``since`` when the oldest
        wait began (None without any).
    """
    # CASE rather than FILTER, which MariaDB lacks.
    waits = sa.case((LEASE_EVENTS.c.wait_deadline.is_(None), 0), else_=1)
    row = session.execute(
        sa.select(sa.func.count(), sa.func.sum(waits),
                  sa.func.min(LEASE_EVENTS.c.waits_since))
        .where(LEASE_EVENTS.c.status == EventStatus.IN_PROGRESS)).one()
    total, waiting, since = row
    return total - (waiting or 0), waiting or 0, since


def resume_events(session, events, now):
    """Give the waiting events back to run again; return their ids.

    Their claims become expired ones (a second before ``now``), which the
    next claim takes (see :func:`_due`); they keep their waits, so that
    their run knows that it follows a wait.

    :param events: ``{event id: the claim token it waits with}``
    """
    if not events:
        return set()
    return set(db_api.update_returning(
        session, LEASE_EVENTS.update()
        .where(LEASE_EVENTS.c.id.in_(list(events)),
               LEASE_EVENTS.c.claimed_by.in_(set(events.values())),
               LEASE_EVENTS.c.status == EventStatus.IN_PROGRESS,
               LEASE_EVENTS.c.wait_deadline.is_not(None))
        .values(claim_expires_at=now - datetime.timedelta(seconds=1),
                wait_deadline=None),
        LEASE_EVENTS.c.id).scalars())


# What recording an event's outcome clears: it waits no more.
_NO_WAITS = {'waits': None, 'waits_since': None, 'wait_deadline': None}


def _claimed_with(token):
    """Return SQL: the event is still claimed with ``token``.

    So that an engine whose claim expired cannot overwrite the work of
    its successor.
    """
    return sa.and_(LEASE_EVENTS.c.claimed_by == token,
                   LEASE_EVENTS.c.status == EventStatus.IN_PROGRESS)


def _rank(events):
    """Rank event types at the same time: start, before end, end."""
    return sa.case({t: i for i, t in enumerate(EventType.ALL)},
                   value=events.c.event_type, else_=len(EventType.ALL))


def _due(now):
    """Return SQL conditions of due events, each served by the status index.

    First the claims of engines that died or hang, and those of waits
    that are over (:func:`resume_events`), then the events whose time
    (and retry time) has come. An event that waits has no claim expiry.
    """
    return (
        sa.and_(LEASE_EVENTS.c.status == EventStatus.IN_PROGRESS,
                LEASE_EVENTS.c.claim_expires_at < now),
        sa.and_(LEASE_EVENTS.c.status == EventStatus.UNDONE,
                LEASE_EVENTS.c.time <= now,
                sa.or_(LEASE_EVENTS.c.retry_at.is_(None),
                       LEASE_EVENTS.c.retry_at <= now)))


def _ready():
    """Return the SQL condition: the event's lease lets it run now.

    No earlier event of the lease is unfinished (events of a lease run in
    order of time, then start, before end, end), no user action on the
    lease is under way, and a start's hosts are free (:func:`_hosts_free`).
    """
    earlier = LEASE_EVENTS.alias('earlier')
    blocked = sa.exists().where(
        earlier.c.lease_id == LEASE_EVENTS.c.lease_id,
        earlier.c.status.not_in(EventStatus.FINISHED),
        sa.tuple_(earlier.c.time, _rank(earlier), earlier.c.id) <
        sa.tuple_(LEASE_EVENTS.c.time, _rank(LEASE_EVENTS),
                  LEASE_EVENTS.c.id))
    lease_busy = sa.exists().where(LEASES.c.id == LEASE_EVENTS.c.lease_id,
                                   LEASES.c.status.in_(_BUSY_LEASE))
    return sa.and_(~blocked, ~lease_busy, _hosts_free())


def _hosts_free():
    """Return the SQL condition: a start's hosts are not still ending.

    A start_lease waits while another lease that shares a host with it
    (a whole host or an instance's slice of one, in ``host_allocations``)
    has an end_lease due at or before it that runs or has not been tried
    yet: engines run events at once, so an end no longer frees its hosts
    before a start at the same instant by the order of a batch.

    A slice that starts does not wait for a slice that ends
    (:data:`SLICES`): the host may have room for both, and where it has
    not, the start says so and is retried, so that an end that never
    finishes does not hold back every server booked on its host. As when
    a batch ran them in order, the start does not wait for an end that
    failed and waits for its retry, nor for one that a user's update or
    delete of its lease holds back: the plugins let a late end leave the
    hosts of the next lease where they are.
    """
    ending = LEASE_EVENTS.alias('ending')
    ending_lease = LEASES.alias('ending_lease')
    theirs = ALLOCATIONS.alias('their_allocations')
    their_reservations = RESERVATIONS.alias('their_reservations')
    mine = ALLOCATIONS.alias('my_allocations')
    my_reservations = RESERVATIONS.alias('my_reservations')
    untried = sa.and_(
        ending.c.status == EventStatus.UNDONE, ending.c.attempts == 0,
        ~sa.exists().where(ending_lease.c.id == ending.c.lease_id,
                           ending_lease.c.status.in_(_BUSY_LEASE)))
    both_slices = sa.and_(their_reservations.c.resource_type.in_(SLICES),
                          my_reservations.c.resource_type.in_(SLICES))
    held = sa.exists().where(
        ending.c.event_type == EventType.END_LEASE, ~both_slices,
        sa.or_(ending.c.status == EventStatus.IN_PROGRESS, untried),
        ending.c.time <= LEASE_EVENTS.c.time,
        ending.c.lease_id != LEASE_EVENTS.c.lease_id,
        their_reservations.c.lease_id == ending.c.lease_id,
        theirs.c.reservation_id == their_reservations.c.id,
        my_reservations.c.lease_id == LEASE_EVENTS.c.lease_id,
        mine.c.reservation_id == my_reservations.c.id,
        mine.c.host_id == theirs.c.host_id)
    return sa.or_(LEASE_EVENTS.c.event_type != EventType.START_LEASE, ~held)


def _ends_first():
    """Return SQL ordering: at one instant, ends are claimed first.

    So that a start held back by an end on its hosts (:func:`_hosts_free`)
    does not take the place of that end in a claim that has room for one
    of them only.
    """
    return sa.case((LEASE_EVENTS.c.event_type == EventType.END_LEASE, 0),
                   else_=1)
