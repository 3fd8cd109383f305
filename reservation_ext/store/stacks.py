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

"""The one writer of the stack tables: what a stack lease asked for, got.

A row holds a ``heat:stack`` reservation's template, parameters,
environment and ``on_end``, and the needs Heat's preview showed at the
create (:mod:`reservation_ext.stacks.needs`): its ``volume_gb`` count
against the reservable volume gigabytes
(:mod:`reservation_ext.planning.volume_capacity`) for the lease's window.
The engine records there the stack it made at the start, and its status;
and in ``stack_resources`` the stack's servers and volumes, which Nova's
and Cinder's quotas count already while the lease lasts
(:mod:`reservation_ext.enforcement.window_quotas`).
"""

import uuid

import sqlalchemy as sa

from db import tables

STACK_RESERVATIONS = tables.STACK_RESERVATIONS
STACK_RESOURCES = tables.STACK_RESOURCES
# Heat's types of the resources recorded in ``stack_resources``.
SERVER = 'OS::Nova::Server'
VOLUME = 'OS::Cinder::Volume'


def record_request(session, values):
    """Record a stack reservation's request and needs (the row's columns)."""
    session.execute(sa.insert(STACK_RESERVATIONS).values(**values))


def set_stack(session, reservation_id, stack_id, status, reason=None):
    """Record the stack a reservation's start made, as last seen in Heat."""
    session.execute(sa.update(STACK_RESERVATIONS).where(
        STACK_RESERVATIONS.c.reservation_id == reservation_id).values(
            stack_id=stack_id, stack_status=status,
            stack_status_reason=reason))


def record_resources(session, reservation_id, resources):
    """Record the servers and volumes of a reservation's stack.

    :param resources: ``[(resource_type, physical_id)]``, as Heat lists
        them; those recorded already are kept once.
    """
    known = set(session.execute(
        sa.select(STACK_RESOURCES.c.physical_id).where(
            STACK_RESOURCES.c.reservation_id == reservation_id)).scalars())
    rows = [{'id': str(uuid.uuid4()), 'reservation_id': reservation_id,
             'resource_type': kind, 'physical_id': physical_id}
            for kind, physical_id in dict.fromkeys(resources)
            if physical_id not in known]
    if rows:
        session.execute(sa.insert(STACK_RESOURCES), rows)


def set_image(session, reservation_id, physical_id, image_id):
    """Record the image an end made of a stack's server or volume."""
    session.execute(sa.update(STACK_RESOURCES).where(
        STACK_RESOURCES.c.reservation_id == reservation_id,
        STACK_RESOURCES.c.physical_id == physical_id).values(
            image_id=image_id))
