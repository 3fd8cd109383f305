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

"""Blazar v1 views of leases, shared by the lease service and the engine.

The same view is the API response and the payload of every ``lease.*``
notification, so that consumers (billing) see one shape. The plugins get
the reservations as these views too (:func:`reservation_views`) and the
lease as :func:`lease_dicts` makes it, from the API and from the engine.
"""

import sqlalchemy as sa

from db import tables
from reservation_ext import dates
from reservation_ext import exceptions
from reservation_ext.planning import healing

LEASES = tables.LEASES
LEASE_PROJECTS = tables.LEASE_PROJECTS
RESERVATIONS = tables.RESERVATIONS
LEASE_EVENTS = tables.LEASE_EVENTS


def plugin_for(plugins, resource_type):
    """Return the plugin of ``resource_type``; raise PluginError if none."""
    try:
        return plugins[resource_type]
    except KeyError:
        raise exceptions.PluginError(
            'No plugin is loaded for resource type %s.' % resource_type)


def plugin_view(resource_type, plugin):
    """Return a plugin's ``/v1/plugins`` view: its type, what it reserves.

    The description is the first line of the plugin class's docstring.
    """
    doc = (type(plugin).__doc__ or '').strip()
    return {'resource_type': resource_type,
            'description': doc.splitlines()[0] if doc else ''}


def lease_views(session, plugins, rows):
    """Return the views of the lease ``rows``, in a fixed number of queries.

    One query per child table, plus one ``get_details`` call per resource
    type present.
    """
    ids = [row.id for row in rows]
    projects = projects_of(session, ids)
    reservations = reservation_views(session, plugins, ids)
    events = _grouped(session, LEASE_EVENTS, ids,
                      (LEASE_EVENTS.c.time, LEASE_EVENTS.c.event_type))
    return [dict(_lease_view(row), projects=projects.get(row.id, []),
                 reservations=reservations.get(row.id, []),
                 events=[_event_view(e) for e in events.get(row.id, [])])
            for row in rows]


def lease_views_by_id(session, plugins, lease_ids):
    """Return the views of the leases ``lease_ids`` that still exist."""
    rows = session.execute(sa.select(LEASES).where(
        LEASES.c.id.in_(lease_ids))).all()
    return lease_views(session, plugins, rows)


def projects_of(session, lease_ids):
    """Return who each lease is shared with: ``{lease_id: [project_id]}``."""
    return {lease_id: [row.project_id for row in rows]
            for lease_id, rows in _grouped(
                session, LEASE_PROJECTS, lease_ids,
                (LEASE_PROJECTS.c.project_id,)).items()}


def lease_dicts(session, rows):
    """Return ``{lease_id: lease}`` of the leases of ``rows``, for plugins.

    Each is a dict of the lease's columns (dates as datetimes) and
    ``projects``.
    """
    projects = projects_of(session, [row.id for row in rows])
    return {row.id: dict(row._mapping, projects=projects.get(row.id, []))
            for row in rows}


def reservation_views(session, plugins, lease_ids):
    """Return ``{lease_id: [view, ...]}`` of the leases' reservations.

    Each view has its plugin's fields (``get_details``): it is what the
    API shows and what the plugins get. Beside Blazar's fields,
    ``failed_hosts`` lists the hypervisor hostnames of the failed hosts
    (nova-compute down or disabled) that the reservation still holds: the
    bookings not healed yet, or for which no replacement was free
    (``missing_resources``).
    """
    grouped = _grouped(session, RESERVATIONS, lease_ids,
                       (RESERVATIONS.c.created_at, RESERVATIONS.c.id))
    rows = [row for group in grouped.values() for row in group]
    details = _details(session, plugins, rows)
    failed = healing.on_failed_hosts(session, [row.id for row in rows])
    return {lease_id: [{**details.get(row.id, {}),
                        **_reservation_view(row),
                        'failed_hosts': failed.get(row.id, [])}
                       for row in group]
            for lease_id, group in grouped.items()}


def _details(session, plugins, reservation_rows):
    """Return the plugins' fields of each reservation, one call per type.

    A type whose plugin is not loaded has none: its leases still show,
    and the engine fails their events (:func:`plugin_for`).
    """
    by_type = {}
    for row in reservation_rows:
        by_type.setdefault(row.resource_type, []).append(row.id)
    details = {}
    for resource_type, ids in by_type.items():
        if resource_type in plugins:
            details.update(plugins[resource_type].get_details(session, ids))
    return details


def _grouped(session, table, lease_ids, order_by):
    """Return ``{lease_id: [row, ...]}`` of ``table``'s rows of the leases."""
    groups = {}
    if not lease_ids:
        return groups
    rows = session.execute(sa.select(table).where(
        table.c.lease_id.in_(lease_ids)).order_by(*order_by))
    for row in rows:
        groups.setdefault(row.lease_id, []).append(row)
    return groups


def _lease_view(row):
    return {
        'id': row.id, 'name': row.name,
        'start_date': dates.format_date(row.start_date),
        'end_date': dates.format_date(row.end_date),
        'status': row.status, 'status_reason': row.status_reason,
        'degraded': row.degraded, 'user_id': row.user_id,
        'project_id': row.project_id, 'trust_id': row.trust_id,
        'created_at': dates.format_timestamp(row.created_at),
        'updated_at': dates.format_timestamp(row.updated_at),
    }


def _reservation_view(row):
    return {
        'id': row.id, 'lease_id': row.lease_id, 'status': row.status,
        'missing_resources': row.missing_resources,
        'resources_changed': row.resources_changed,
        'resource_id': row.resource_id,
        'resource_type': row.resource_type,
        'created_at': dates.format_timestamp(row.created_at),
        'updated_at': dates.format_timestamp(row.updated_at),
    }


def _event_view(row):
    return {
        'id': row.id, 'lease_id': row.lease_id, 'status': row.status,
        'event_type': row.event_type,
        'time': dates.format_date(row.time),
        'created_at': dates.format_timestamp(row.created_at),
        'updated_at': dates.format_timestamp(row.updated_at),
    }
