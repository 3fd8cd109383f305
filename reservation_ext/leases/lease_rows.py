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

"""One lease's row as the lease operations find, check and move it.

What the lease service (:mod:`reservation_ext.leases.service`) and its
updates (:mod:`reservation_ext.leases.updates`) both need: the row a
caller may act on (by policy), the lease as the plugins get it, the
statuses a lease may be changed in and moved to, its name unique in its
project, and when its events are due. The writes themselves are made
by :mod:`reservation_ext.store.leases`.
"""

import datetime

import sqlalchemy as sa

from db import api as db_api
from db import tables
from reservation_ext import exceptions
from reservation_ext.leases import views
from reservation_ext import policy
from reservation_ext.states import EventType
from reservation_ext.states import LeaseStatus
from reservation_ext.store import leases as store_leases

LEASES = tables.LEASES

# Retries a whole writer transaction that lost a race.
retry = db_api.retry_on_conflict(exceptions.ConcurrentUpdate)


def get_row(session, ctx, lease_id, action):
    """Return the lease row, if policy lets the caller do ``action`` on it.

    A lease the caller may not see is reported as not found, so that
    other projects' leases stay invisible; one it may see but not act on
    (a reader's update) is Forbidden.
    """
    row = session.execute(
        sa.select(LEASES).where(LEASES.c.id == lease_id)).first()
    if row is None or not policy.allowed(ctx, 'get', row.project_id):
        raise exceptions.NotFound(kind='Lease', id=lease_id)
    policy.authorize(ctx, action, row.project_id)
    return row


def lease_dict(session, row):
    """Return the lease as plugins get it (:func:`views.lease_dicts`)."""
    return views.lease_dicts(session, [row])[row.id]


def check_stable(status, action):
    """Raise InvalidState unless a lease in ``status`` may be ``action``.

    :param action: what is done to it, for the message (``'updated'``).
    """
    if status not in LeaseStatus.STABLE:
        raise exceptions.InvalidState(
            'A lease in status %s cannot be %s.' % (status, action))


def name_taken(name):
    """Return the Conflict of a lease name that its project has already."""
    return exceptions.Conflict(
        'A lease named %r already exists in this project.' % name)


def check_name_free(session, project_id, name):
    """Raise :func:`name_taken` if the project has a lease ``name``."""
    taken = session.execute(sa.select(LEASES.c.id).where(
        LEASES.c.project_id == project_id,
        LEASES.c.name == name)).first()
    if taken:
        raise name_taken(name)


def move_status(session, lease_id, current, status, now):
    """Move a lease from ``current`` to ``status``.

    :raises InvalidState: the lease may not make that move.
    :raises ConcurrentUpdate: it is no longer ``current``.
    """
    if not LeaseStatus.can_move(current, status):
        raise exceptions.InvalidState(
            'A lease cannot go from %s to %s.' % (current, status))
    if not store_leases.set_lease_status(session, lease_id, current, status,
                                         now):
        raise exceptions.ConcurrentUpdate()


@retry
def set_error(ctx, clock, lease_id, reason):
    """Put a lease in ERROR with ``reason``, in a transaction of its own."""
    with db_api.writer(ctx, clock) as session:
        store_leases.set_lease_error(session, lease_id, reason, clock.now())


def event_times(conf, lease):
    """Say when each event of ``lease`` (a dict of its dates) is due."""
    default_before_end = max(
        lease['start_date'], lease['end_date'] - datetime.timedelta(
            minutes=conf.reservation.minutes_before_end_lease))
    return {
        EventType.START_LEASE: lease['start_date'],
        EventType.BEFORE_END_LEASE: (lease['before_end_date'] or
                                     default_before_end),
        EventType.END_LEASE: lease['end_date'],
    }
