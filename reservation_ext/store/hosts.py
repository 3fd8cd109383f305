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


"""The one writer of the reservable hosts: computehosts and what they offer.

``computehosts`` (:data:`db.tables.HOSTS`), ``host_capabilities``
(:data:`db.tables.CAPABILITIES`) and ``host_properties``
(:data:`db.tables.HOST_PROPERTIES`). The inventory adds, changes and
removes hosts; the planner moves their generations (its
compare-and-swap); the host monitor and the power manager record
failures, recoveries and power transitions.

Every extra capability is stored with its text and, when the text is a
finite number, that number (``num_value``), so that numeric operators of
capability queries run in SQL on every backend.
"""

import math

import sqlalchemy as sa

from db import api as db_api
from db import tables
from reservation_ext.states import PowerState

HOSTS = tables.HOSTS
CAPABILITIES = tables.CAPABILITIES
HOST_PROPERTIES = tables.HOST_PROPERTIES


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
    session.execute(
        sa.delete(CAPABILITIES).where(CAPABILITIES.c.host_id == host_id))
    rows = capability_rows(host_id, capabilities)
    if rows:
        session.execute(sa.insert(CAPABILITIES), rows)


def capability_rows(host_id, capabilities):
    """Make host_capabilities rows for ``{name: value}`` (values as text)."""
    return [{'host_id': host_id, 'name': name, 'value': str(value),
             'num_value': as_number(str(value))}
            for name, value in sorted(capabilities.items())]


def bulk_load(connection, hosts):
    """Insert many hosts at once; return their ids in the same order.

    :param connection: a connection or a session.
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


def import_hosts(session, hosts):
    """Bring hosts of another database (Blazar's) over; return their ids.

    One INSERT of every host and one of every capability, in the order
    given; the pool generation moves at commit, as for any new host.

    :param hosts: ``(values, capabilities)`` pairs as for :func:`add_host`,
        every ``values`` with the same keys.
    """
    if not hosts:
        return []
    return bulk_load(session, hosts)


def as_number(text):
    """Return ``text`` as a finite float, or None when it is not one.

    Only ASCII numbers: ``float`` also reads ``'١٢'`` as 12.
    """
    if not text.isascii():
        return None
    try:
        number = float(text)
    except ValueError:
        return None
    return number if math.isfinite(number) else None


def update_host(session, host_id, now, columns):
    """Record that an admin changed a host: ``updated_at`` and ``columns``.

    :param columns: the host's own columns the request set
        (``power_managed``), ``{name: value}``.
    """
    session.execute(sa.update(HOSTS).where(HOSTS.c.id == host_id)
                    .values(updated_at=now, **columns))


def remove_host(session, host_id):
    """Delete a host's row (its capabilities go with it, by cascade)."""
    session.execute(sa.delete(HOSTS).where(HOSTS.c.id == host_id))


def set_property_private(session, name, private):
    """Make the extra capability ``name`` private (or public) for views."""
    session.execute(sa.delete(HOST_PROPERTIES).where(
        HOST_PROPERTIES.c.name == name))
    session.execute(sa.insert(HOST_PROPERTIES).values(
        name=name, private=private))


def bump_generations_if_unchanged(session, generations):
    """Bump hosts still at the read generation: the planner's compare-and-swap.

    See :func:`db.api.bump_if_unchanged`.

    :param generations: ``{host_id: generation}`` as the caller read them.
    :returns: whether every host matched (else the caller lost the race
        and must roll back).
    """
    return db_api.bump_if_unchanged(session, sa.update(HOSTS), generations)


def bump_generations(session, host_ids):
    """Bump the generation of hosts whose allocations are being deleted.

    :param host_ids: ids, or a SELECT of them.
    """
    session.execute(
        sa.update(HOSTS).where(HOSTS.c.id.in_(host_ids))
        .values(generation=HOSTS.c.generation + 1))


def mark_failed(session, service_name, failure, now):
    """Fail a host whose nova-compute is ``failure``; unreservable now.

    :returns: 1 if this call failed it, 0 if it had failed already.
    """
    return session.execute(
        sa.update(HOSTS).where(HOSTS.c.service_name == service_name,
                               HOSTS.c.failed_at.is_(None))
        .values(updated_at=now, failed_at=now, failure=failure,
                reservable=False)).rowcount


def mark_recovered(session, service_name, now):
    """Make a failed host whose nova-compute is back reservable again.

    :returns: 1 if this call recovered it, 0 if it had not failed.
    """
    return session.execute(
        sa.update(HOSTS).where(HOSTS.c.service_name == service_name,
                               HOSTS.c.failed_at.is_not(None))
        .values(updated_at=now, failed_at=None, failure=None,
                reservable=True)).rowcount


def record_power_plan(session, host_id, action, at, reason,
                      clear_failure=False):
    """Record a host's next planned power transition (all None: none).

    :param clear_failure: also forget ``power_failure`` (no transition
        is due any more).
    """
    cleared = {'power_failure': None} if clear_failure else {}
    session.execute(sa.update(HOSTS).where(HOSTS.c.id == host_id)
                    .values(power_next_action=action, power_next_at=at,
                            power_next_reason=reason, **cleared))


def note_power_failure(session, host_id, why):
    """Record why a due transition of a host was not made."""
    session.execute(sa.update(HOSTS).where(HOSTS.c.id == host_id)
                    .values(power_failure=why))


def claim_power_transition(session, host_id, state, now, token, until):
    """Hold a host for a power transition under ``token`` until ``until``.

    Only while the host is in ``state`` (the power state read) and no
    live claim holds it.

    :returns: whether this call holds it.
    """
    return bool(session.execute(
        sa.update(HOSTS).where(
            HOSTS.c.id == host_id, HOSTS.c.power_state == state,
            sa.or_(HOSTS.c.power_claimed_until.is_(None),
                   HOSTS.c.power_claimed_until <= now))
        .values(power_claimed_by=token,
                power_claimed_until=until)).rowcount)


def record_power_outcome(session, host_id, token, now, state=None,
                         failure=None):
    """Record a claimed transition's outcome and release the claim.

    Only while the claim of ``token`` still holds at ``now``.

    :param state: the host's new power state (a success), else None.
    :param failure: why it failed (cut to the column's length), else None.
    :returns: whether the claim held (and the outcome was recorded).
    """
    values = {'power_claimed_by': None, 'power_claimed_until': None,
              'power_failure': failure}
    if state is not None:
        values.update(power_state=state, power_changed_at=now)
    return bool(session.execute(
        sa.update(HOSTS).where(
            HOSTS.c.id == host_id, HOSTS.c.power_claimed_by == token,
            HOSTS.c.power_claimed_until > now)
        .values(**values)).rowcount)


def confirm_powered_on(session, host_id, now):
    """Record that a host switched on came up: its power state is on.

    :returns: 1 if this call recorded it, 0 if it was no longer powering
        on.
    """
    return session.execute(
        sa.update(HOSTS).where(HOSTS.c.id == host_id,
                               HOSTS.c.power_state == PowerState.POWERING_ON)
        .values(power_state=PowerState.ON, power_changed_at=now,
                power_failure=None)).rowcount


def fail_for_power(session, host_id, failure, why, now,
                   while_powering_on=False):
    """Fail a host that did not come up, as the host monitor fails hosts.

    :param failure: the host's ``failure``; ``why``: its
        ``power_failure``.
    :param while_powering_on: only if it is still powering on.
    :returns: 1 if this call failed it, 0 if it had failed already (or
        was no longer powering on).
    """
    conditions = ([HOSTS.c.power_state == PowerState.POWERING_ON]
                  if while_powering_on else [])
    return session.execute(
        sa.update(HOSTS).where(HOSTS.c.id == host_id,
                               HOSTS.c.failed_at.is_(None), *conditions)
        .values(failed_at=now, failure=failure, reservable=False,
                power_failure=why)).rowcount


def recover_from_power(session, host_id, failure):
    """Mark a host failed with ``failure`` (it did not come up) as back."""
    session.execute(
        sa.update(HOSTS).where(HOSTS.c.id == host_id,
                               HOSTS.c.failure == failure)
        .values(failed_at=None, failure=None, reservable=True))
