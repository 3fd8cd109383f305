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

"""Read a Blazar 18 database: the tables the import brings over.

Blazar's schema is described here, column by column, as Blazar 18's
models define it (``blazar/db/sqlalchemy/models.py``); nothing of Blazar
is imported. The revision that Blazar's alembic recorded
(``alembic_version``) must be one of :data:`KNOWN_REVISIONS`, or the
database is refused before anything else is read: another schema may
mean other things by the same columns. Everything is read in one
transaction, each table with one SELECT, into plain dicts.
"""

import collections

import sqlalchemy as sa

# Blazar's alembic heads that this module reads: {revision: release}.
KNOWN_REVISIONS = {'553383923ca0': 'Blazar 18.0.0'}

_TABLES = {
    'computehosts': (
        'id', 'hypervisor_hostname', 'service_name', 'availability_zone',
        'hypervisor_type', ('hypervisor_version', sa.BigInteger),
        ('vcpus', sa.Integer), ('memory_mb', sa.Integer),
        ('local_gb', sa.Integer), 'cpu_info', ('reservable', sa.Boolean),
        ('created_at', sa.DateTime)),
    'resource_properties': (
        'id', 'resource_type', 'property_name', ('private', sa.Boolean)),
    'computehost_extra_capabilities': (
        'computehost_id', 'property_id', 'capability_value'),
    'leases': (
        'id', 'name', 'user_id', 'project_id', 'trust_id', 'status',
        ('start_date', sa.DateTime), ('end_date', sa.DateTime),
        ('degraded', sa.Boolean), ('created_at', sa.DateTime),
        ('updated_at', sa.DateTime)),
    'reservations': (
        'id', 'lease_id', 'resource_type', 'status',
        ('missing_resources', sa.Boolean), ('resources_changed', sa.Boolean),
        ('created_at', sa.DateTime), ('updated_at', sa.DateTime)),
    'computehost_reservations': (
        'reservation_id', ('aggregate_id', sa.Integer),
        'resource_properties', 'hypervisor_properties', 'count_range',
        'before_end'),
    'instance_reservations': (
        'reservation_id', ('vcpus', sa.Integer), ('memory_mb', sa.Integer),
        ('disk_gb', sa.Integer), ('amount', sa.Integer),
        ('affinity', sa.Boolean), 'resource_properties', 'flavor_id',
        ('aggregate_id', sa.Integer), 'server_group_id'),
    'computehost_allocations': ('id', 'compute_host_id', 'reservation_id'),
    'floatingips': (
        'id', 'floating_network_id', 'subnet_id', 'floating_ip_address',
        ('reservable', sa.Boolean), ('created_at', sa.DateTime),
        ('updated_at', sa.DateTime)),
    'floatingip_reservations': (
        'id', 'reservation_id', 'network_id', ('amount', sa.Integer)),
    'required_floatingips': ('address', 'floatingip_reservation_id'),
    'floatingip_allocations': ('id', 'floatingip_id', 'reservation_id'),
    'events': (
        'id', 'lease_id', 'event_type', 'status', ('time', sa.DateTime),
        ('created_at', sa.DateTime), ('updated_at', sa.DateTime)),
}

# Blazar's rows, by table name: lists of dicts.
BlazarData = collections.namedtuple('BlazarData', list(_TABLES))


class BlazarDatabaseError(Exception):
    """The Blazar database cannot be imported: the message says why."""


class UnknownSchema(BlazarDatabaseError):
    """The database is not at a Blazar schema revision this module knows."""


def _table(name):
    columns = [sa.column(*(spec if isinstance(spec, tuple) else (spec,)))
               for spec in _TABLES[name]]
    return sa.table(name, *columns)


def revision(connection):
    """Return Blazar's alembic revision, or raise :class:`UnknownSchema`."""
    if not sa.inspect(connection).has_table('alembic_version'):
        raise UnknownSchema(
            'it has no alembic_version table: not a database that '
            "Blazar's blazar-db-manage made")
    found = connection.execute(sa.select(
        sa.column('version_num')).select_from(
            sa.table('alembic_version'))).scalars().all()
    if len(found) != 1 or found[0] not in KNOWN_REVISIONS:
        raise UnknownSchema(
            'its schema is at revision %s, which this import does not know '
            '(it reads %s): upgrade it with Blazar 18\'s '
            '"blazar-db-manage upgrade head" first' % (
                ', '.join(found) or 'none',
                ', '.join('%s, revision %s' % (release, known)
                          for known, release in KNOWN_REVISIONS.items())))
    return found[0]


def read(url):
    """Read the database at ``url``; return ``(revision, BlazarData)``.

    :raises UnknownSchema: before reading any table of Blazar's.
    :raises BlazarDatabaseError: the database cannot be read.
    """
    try:
        engine = sa.create_engine(url)
    except (sa.exc.ArgumentError, ImportError) as e:
        raise BlazarDatabaseError('not a database URL that can be used: %s'
                                  % e)
    try:
        with engine.connect() as connection:
            found = revision(connection)
            return found, BlazarData(**{
                name: [dict(row) for row in connection.execute(
                    sa.select(_table(name))).mappings()]
                for name in _TABLES})
    except sa.exc.SQLAlchemyError as e:
        raise BlazarDatabaseError('cannot read it: %s' % e)
    finally:
        engine.dispose()
