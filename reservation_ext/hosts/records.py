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

"""Writes to the reservable host inventory (computehosts and capabilities).

Every extra capability is stored with its text and, when the text is a
finite number, that number (``num_value``), so that numeric operators of
capability queries run in SQL on every backend.
"""

import math

import sqlalchemy as sa

from db import tables

HOSTS = tables.HOSTS
CAPABILITIES = tables.CAPABILITIES


def add_host(session, values, capabilities=None):
    """Add a reservable host; return its id.

    :param values: computehosts columns (``hypervisor_hostname``, ``vcpus``,
        ``memory_mb``, ``local_gb``, ...).
    :param capabilities: extra capabilities, a ``{name: value}`` dict.
    """
    host_id = session.execute(
        sa.insert(HOSTS).values(**values).returning(HOSTS.c.id)).scalar_one()
    set_capabilities(session, host_id, capabilities or {})
    return host_id


def set_capabilities(session, host_id, capabilities):
    """Replace the extra capabilities of a host by ``{name: value}``."""
    session.execute(sa.delete(CAPABILITIES).where(CAPABILITIES.c.host_id == host_id))
    rows = capability_rows(host_id, capabilities)
    if rows:
        session.execute(sa.insert(CAPABILITIES), rows)


def capability_rows(host_id, capabilities):
    """host_capabilities rows for ``{name: value}`` (values as text)."""
    return [{'host_id': host_id, 'name': name, 'value': str(value),
             'num_value': as_number(str(value))}
            for name, value in sorted(capabilities.items())]


def bulk_load(connection, hosts):
    """Insert many hosts at once; return their ids in the same order.

    :param hosts: ``(values, capabilities)`` pairs as for :func:`add_host`,
        every ``values`` with the same keys.
    """
    ids = connection.execute(
        sa.insert(HOSTS).returning(HOSTS.c.id, sort_by_parameter_order=True),
        [values for values, _caps in hosts]).scalars().all()
    rows = [row for host_id, (_values, caps) in zip(ids, hosts)
            for row in capability_rows(host_id, caps)]
    if rows:
        connection.execute(sa.insert(CAPABILITIES), rows)
    return ids


def as_number(text):
    """``text`` as a finite float, or None when it is not one.

    Only ASCII numbers: ``float`` also reads ``'١٢'`` as 12.
    """
    if not text.isascii():
        return None
    try:
        number = float(text)
    except ValueError:
        return None
    return number if math.isfinite(number) else None
