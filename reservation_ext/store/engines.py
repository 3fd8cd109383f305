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

"""The one writer of ``engine_heartbeats``: each engine's last good poll.

``reservation-engine`` records itself when it starts
(:func:`record_start`), after every poll in which the leases DB answered
(:func:`record_poll`) and forgets itself when it stops cleanly
(:func:`forget`). An engine that died keeps its row, so that
``reservation-status engines`` (:func:`list_engines`, :func:`is_stale`)
shows it stale until an operator deletes it; an engine whose row was
deleted while it runs writes it again at its next poll.
"""

import datetime

import sqlalchemy as sa

from db import tables

ENGINE_HEARTBEATS = tables.ENGINE_HEARTBEATS

# How many poll intervals without a successful poll make an engine stale.
STALE_POLLS = 3


def record_start(session, identity, now):
    """Write (or rewrite) the row of an engine that starts at ``now``.

    :param identity: the engine's ``engine_id``, ``host``, ``pid`` and
        ``version`` (a dict)
    """
    forget(session, identity['engine_id'])
    session.execute(sa.insert(ENGINE_HEARTBEATS).values(
        started_at=now, last_poll_at=None, **identity))


def record_poll(session, identity, now):
    """Note that an engine polled the DB successfully at ``now``.

    An engine without a row (the DB was out at its start, or an operator
    removed it while it ran) gets one again, started now.
    """
    if not session.execute(
            sa.update(ENGINE_HEARTBEATS)
            .where(ENGINE_HEARTBEATS.c.engine_id == identity['engine_id'])
            .values(last_poll_at=now)).rowcount:
        session.execute(sa.insert(ENGINE_HEARTBEATS).values(
            started_at=now, last_poll_at=now, **identity))


def forget(session, engine_id):
    """Delete an engine's row (it stopped); return whether there was one."""
    return bool(session.execute(sa.delete(ENGINE_HEARTBEATS).where(
        ENGINE_HEARTBEATS.c.engine_id == engine_id)).rowcount)


def list_engines(session):
    """Return every engine's row, by host and engine id."""
    return session.execute(
        sa.select(ENGINE_HEARTBEATS).order_by(
            ENGINE_HEARTBEATS.c.host,
            ENGINE_HEARTBEATS.c.engine_id)).mappings().all()


def is_stale(row, now, poll_interval):
    """Say whether an engine missed :data:`STALE_POLLS` polls by ``now``.

    An engine that has not polled yet counts from its start.
    """
    last = row['last_poll_at'] or row['started_at']
    return now - last > datetime.timedelta(
        seconds=STALE_POLLS * poll_interval)
