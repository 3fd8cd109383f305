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


"""The one writer of ``instance_reservations``.

A row of :data:`db.tables.INSTANCE_RESERVATIONS` is what an instance
reservation asked for: one reserved server (``virtual:instance``, with
its deferred build's arguments until the lease starts) or an
instance-capacity reservation (``amount`` seats, its private flavor's
source and server group). The plugins write what the request says
(:mod:`reservation_ext.plugins.virtual_instance`,
:mod:`reservation_ext.plugins.instance_capacity`); nova-api keeps and
takes the build arguments (:mod:`reservation_ext.nova_api.server_records`).
"""

import sqlalchemy as sa

from db import tables

INSTANCE_RESERVATIONS = tables.INSTANCE_RESERVATIONS


def add(session, reservation_id, columns):
    """Record what a new instance reservation asks for.

    :param columns: the row's other columns, ``{name: value}``.
    """
    session.execute(sa.insert(INSTANCE_RESERVATIONS).values(
        id=reservation_id, reservation_id=reservation_id, **columns))


def import_requests(session, rows):
    """Record what imported instance reservations asked for (one INSERT).

    :param rows: instance_reservations rows, each with the same keys.
    """
    if rows:
        session.execute(sa.insert(INSTANCE_RESERVATIONS), rows)


def change(session, reservation_id, columns):
    """Record what an updated instance reservation asks for now."""
    session.execute(sa.update(INSTANCE_RESERVATIONS).where(
        INSTANCE_RESERVATIONS.c.reservation_id == reservation_id)
        .values(**columns))


def set_server_group(session, reservation_id, group_id):
    """Record the server group made for a reservation's affinity."""
    session.execute(sa.update(INSTANCE_RESERVATIONS).where(
        INSTANCE_RESERVATIONS.c.reservation_id == reservation_id)
        .values(server_group_id=group_id))


def keep_build_args(session, server_id, build_args):
    """Keep the arguments of a reserved server's deferred build."""
    session.execute(sa.update(INSTANCE_RESERVATIONS).where(
        INSTANCE_RESERVATIONS.c.server_id == server_id)
        .values(build_args=build_args))


def drop_build_args(session, server_id):
    """Forget a deferred build's arguments, if they are still kept.

    :returns: whether this call dropped them (of two concurrent starts,
        one does).
    """
    return bool(session.execute(sa.update(INSTANCE_RESERVATIONS).where(
        INSTANCE_RESERVATIONS.c.server_id == server_id,
        INSTANCE_RESERVATIONS.c.build_args.is_not(None))
        .values(build_args=None)).rowcount)
