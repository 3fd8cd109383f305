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

"""The reservable host inventory behind ``/v1/os-hosts`` (admin only).

Adding a host checks with Nova that it is a real compute host, records
its properties (vcpus, memory_mb, local_gb, cpu_info, hypervisor type and
version, availability zone) with the request's other keys as extra
capabilities, and puts it into the free-pool aggregate, so that ordinary
instances stop landing on it. Removing a host is refused while a lease
holds it now or later, or while the power manager has it switched off.
No view shows the secret extra capabilities (BMC credentials,
:mod:`reservation_ext.power.credentials`).
"""

import json

import sqlalchemy as sa

from db import api as db_api
from db import tables
from reservation_ext import dates
from reservation_ext import exceptions
from reservation_ext.hosts import schemas
from reservation_ext.planning import capabilities as capability_queries
from reservation_ext.planning import planner
from reservation_ext import policy
from reservation_ext.power import credentials
from reservation_ext.power import policy as power_policy
from reservation_ext.store import allocations as store_allocations
from reservation_ext.store import hosts as store_hosts
from reservation_ext import validation

HOSTS = tables.HOSTS
CAPABILITIES = tables.CAPABILITIES
ALLOCATIONS = tables.ALLOCATIONS
RESERVATIONS = tables.RESERVATIONS
HOST_PROPERTIES = tables.HOST_PROPERTIES

# Keys of a host view that are columns; every other key is an extra
# capability, and these cannot be one.
VIEW_COLUMNS = ('id', 'hypervisor_hostname', 'hypervisor_type',
                'hypervisor_version', 'vcpus', 'cpu_info', 'memory_mb',
                'local_gb', 'service_name', 'availability_zone',
                'reservable', 'created_at', 'updated_at', 'failure',
                'failed_at', 'power_state', 'power_managed', 'power_failure')
# The power manager's next transition of a host (reservation_ext.engine.
# power): view keys that are no column of their own name.
POWER_KEYS = ('power_next_transition', 'power_next_transition_at',
              'power_state_since')
# Keys of Blazar's host view that are always null here: Blazar has no host
# status yet, and this service acts as its service user, not through a
# trust of the host's operator.
NULL_KEYS = ('status', 'trust_id')
# Blazar's limit on the name of an extra capability.
CAPABILITY_KEY_MAX_LENGTH = 64
_RESERVED_KEYS = frozenset(VIEW_COLUMNS + NULL_KEYS + POWER_KEYS +
                           ('name', 'generation'))


# The extra capabilities of the rows, by id.
EXTRA = capability_queries.HOST_TARGET


class HostInventory:
    """Admin operations on the reservable hosts."""

    def __init__(self, conf, clock, nova):
        self.conf = conf
        self.clock = clock
        self.nova = nova

    def create(self, ctx, body):
        """Add the Nova compute host ``body['name']``; return its view."""
        policy.authorize(ctx, 'create', ctx.project_id, policy.HOSTS)
        validation.check_schema(body, schemas.CREATE)
        capabilities = {key: value for key, value in body.items()
                        if key != 'name'}
        _check_capabilities(capabilities)
        hypervisor = self.nova.find_hypervisor(body['name'])
        hostname = hypervisor['hypervisor_hostname']
        with db_api.context_manager.reader.using(ctx) as session:
            _check_new(session, hostname)
        service_host = hypervisor['service']['host']
        values = {
            'hypervisor_hostname': hostname, 'service_name': service_host,
            'availability_zone': self.nova.availability_zone_of(
                service_host),
            'hypervisor_type': hypervisor.get('hypervisor_type'),
            'hypervisor_version': hypervisor.get('hypervisor_version'),
            'vcpus': hypervisor['vcpus'],
            'memory_mb': hypervisor['memory_mb'],
            'local_gb': hypervisor['local_gb'],
            'cpu_info': _cpu_info(hypervisor.get('cpu_info')),
            'reservable': True, 'generation': 0,
            'created_at': self.clock.now(),
        }
        freepool = self.nova.ensure_aggregate(self.conf.freepool_name)
        self.nova.add_to_aggregate(freepool, service_host)
        host_id = self._insert(ctx, values, capabilities)
        return self.get(ctx, host_id)

    def list(self, ctx):
        """Return views of every reservable host."""
        policy.authorize(ctx, 'list', ctx.project_id, policy.HOSTS)
        with db_api.context_manager.reader.using(ctx) as session:
            rows = session.execute(
                sa.select(HOSTS).order_by(HOSTS.c.id)).all()
            return _views(session, rows)

    def get(self, ctx, host_id):
        """Return the view of one host."""
        policy.authorize(ctx, 'get', ctx.project_id, policy.HOSTS)
        with db_api.context_manager.reader.using(ctx) as session:
            return _views(session, [_get_row(session, host_id)])[0]

    def update(self, ctx, host_id, body):
        """Set (or, with ``null``, remove) extra capabilities.

        ``power_managed`` (a boolean, or its text) is the host's own:
        whether the power manager switches it.
        """
        policy.authorize(ctx, 'update', ctx.project_id, policy.HOSTS)
        validation.check_schema(body, schemas.UPDATE)
        columns = {key: validation.parse_boolean(str(body[key]), key)
                   for key in schemas.UPDATE_COLUMNS if key in body}
        capabilities = {key: value for key, value in body.items()
                        if key not in columns}
        _check_capabilities(capabilities)
        with db_api.writer(ctx, self.clock) as session:
            row = _get_row(session, host_id)
            current = EXTRA.values_of(session, [row.id]).get(row.id, {})
            current.update(capabilities)
            store_hosts.set_capabilities(session, row.id, {
                key: value for key, value in current.items()
                if value is not None})
            store_hosts.update_host(session, row.id, self.clock.now(),
                                    columns)
        return self.get(ctx, host_id)

    def delete(self, ctx, host_id):
        """Remove a host that no current or future lease holds."""
        policy.authorize(ctx, 'delete', ctx.project_id, policy.HOSTS)
        with db_api.context_manager.reader.using(ctx) as session:
            row = _get_row(session, host_id)
            _check_unused(session, row.id, self.clock.now())
            _check_on(session, row.id, self.clock.now())
        freepool = self.nova.find_aggregate(self.conf.freepool_name)
        if freepool is not None:
            self.nova.remove_from_aggregate(freepool, row.service_name)
        self._remove(ctx, row.id)

    def allocations(self, ctx, host_id=None, lease_id=None,
                    reservation_id=None):
        """Return ``[{resource_id, reservations: [...]}]`` per host."""
        policy.authorize(ctx, 'get_allocations', ctx.project_id,
                         policy.HOSTS)
        with db_api.context_manager.reader.using(ctx) as session:
            if host_id is not None:
                host_id = _get_row(session, host_id).id
            return _allocations(session, host_id, lease_id, reservation_id)

    def properties(self, ctx, detail=False, include_private=False):
        """List the extra capability names in use (with values: ``detail``)."""
        policy.authorize(ctx, 'get_properties', ctx.project_id,
                         policy.HOSTS)
        with db_api.context_manager.reader.using(ctx) as session:
            private = set(session.scalars(
                sa.select(HOST_PROPERTIES.c.name)
                .where(HOST_PROPERTIES.c.private)))
            values = {}
            for name, value in session.execute(
                    sa.select(CAPABILITIES.c.name, CAPABILITIES.c.value)
                    .distinct()
                    .order_by(CAPABILITIES.c.name, CAPABILITIES.c.value)):
                values.setdefault(name, []).append(value)
        return [_property_view(name, values[name], name in private, detail)
                for name in values
                if (include_private or name not in private)
                and not credentials.is_secret(name)]

    def update_property(self, ctx, name, body):
        """Make the extra capability ``name`` private or public."""
        policy.authorize(ctx, 'update_properties', ctx.project_id,
                         policy.HOSTS)
        validation.check_schema(body, schemas.PROPERTY_UPDATE)
        private = body['private']
        with db_api.writer(ctx, self.clock) as session:
            if not session.scalar(sa.select(sa.exists().where(
                    CAPABILITIES.c.name == name))):
                raise exceptions.NotFound(kind='Host property', id=name)
            store_hosts.set_property_private(session, name, private)
        return {'property_name': name, 'private': private,
                'resource_type': 'physical:host'}

    @db_api.retry_on_conflict(exceptions.ConcurrentUpdate)
    def _insert(self, ctx, values, capabilities):
        with db_api.writer(ctx, self.clock) as session:
            _check_new(session, values['hypervisor_hostname'])
            return store_hosts.add_host(session, values, capabilities)

    @db_api.retry_on_conflict(exceptions.ConcurrentUpdate)
    def _remove(self, ctx, host_id):
        with db_api.writer(ctx, self.clock) as session:
            _check_unused(session, host_id, self.clock.now())
            _check_on(session, host_id, self.clock.now())
            # Past allocations only: they go with the host.
            store_allocations.forget_host(session, host_id)
            store_hosts.remove_host(session, host_id)


def allocated_hosts(session, reservation_ids):
    """Return ``{reservation_id: [host view]}``: the hosts each one has booked.

    The views are as ``/v1/os-hosts`` shows them (extra capabilities
    beside the properties), each host once per reservation. For the
    enforcement filters' ``allocations``, as Blazar's host plugin gives.
    """
    pairs = session.execute(
        sa.select(ALLOCATIONS.c.reservation_id, ALLOCATIONS.c.host_id)
        .where(ALLOCATIONS.c.reservation_id.in_(reservation_ids))
        .distinct().order_by(ALLOCATIONS.c.host_id)).all()
    rows = session.execute(sa.select(HOSTS).where(
        HOSTS.c.id.in_({host_id for _, host_id in pairs}))).all()
    views = {int(view['id']): view for view in _views(session, rows)}
    found = {reservation_id: [] for reservation_id in reservation_ids}
    for reservation_id, host_id in pairs:
        found[reservation_id].append(views[host_id])
    return found


def _check_capabilities(capabilities):
    """Refuse extra capabilities that Blazar would not store either.

    Those named as a host's own properties, and those with a name longer
    than Blazar allows (with Blazar's message).
    """
    validation.check_extra_capabilities(
        capabilities, _RESERVED_KEYS,
        'is a property of the host, not an extra capability',
        CAPABILITY_KEY_MAX_LENGTH)


def _cpu_info(value):
    """Return ``cpu_info`` as Blazar stores it: JSON text (Nova's before 2.28).

    Since microversion 2.28 Nova gives an object; blazar-dashboard's host
    page parses the text as JSON.
    """
    return value if value is None or isinstance(value, str) else \
        json.dumps(value, sort_keys=True)


def _check_new(session, hostname):
    if session.scalar(sa.select(HOSTS.c.id).where(
            HOSTS.c.hypervisor_hostname == hostname)) is not None:
        raise exceptions.Conflict(
            'Host %s is already in the reservable pool.' % hostname)


def _check_unused(session, host_id, now):
    held = session.scalar(sa.select(sa.func.count()).where(
        ALLOCATIONS.c.host_id == host_id, ALLOCATIONS.c.end_date > now,
        *planner.Busy(now).counted()))
    if held:
        raise exceptions.Conflict(
            'Host %s is held by %d current or future reservation(s) or '
            'schedule proposal(s); it can be removed once they ended, '
            'expired or were deleted.' % (host_id, held))


def _check_on(session, host_id, now):
    """Refuse to remove a host that the power manager switched off.

    Or that an engine is switching now (a live claim): Nova would get it
    back powered off, with its service disabled.
    """
    state, claimed_until = session.execute(
        sa.select(HOSTS.c.power_state, HOSTS.c.power_claimed_until)
        .where(HOSTS.c.id == host_id)).one()
    if claimed_until is not None and claimed_until > now:
        state = 'being switched'
    if state != power_policy.ON:
        raise exceptions.Conflict(
            'Host %s is %s by the power manager; it can be removed once '
            'it is on: set power_managed to false and wait until its '
            'power_state is on.' % (host_id, state))


def _get_row(session, host_id):
    """Return the host by id or hypervisor hostname, or raise NotFound."""
    condition = HOSTS.c.hypervisor_hostname == str(host_id)
    row_id = validation.database_id(host_id)
    if row_id is not None:
        condition = sa.or_(condition, HOSTS.c.id == row_id)
    row = session.execute(sa.select(HOSTS).where(condition)).first()
    if row is None:
        raise exceptions.NotFound(kind='Host', id=host_id)
    return row


def _views(session, rows):
    capabilities = EXTRA.values_of(session, [row.id for row in rows])
    return [{**credentials.without_secrets(capabilities.get(row.id, {})),
             **_host_view(row)} for row in rows]


def _host_view(row):
    view = dict.fromkeys(NULL_KEYS)
    view.update((column, getattr(row, column)) for column in VIEW_COLUMNS)
    view['id'] = str(row.id)
    # failure: 'down' or 'disabled' while the engine's host monitor finds
    # the host's nova-compute so (since failed_at), 'power' while the
    # power manager's host does not come up, else null.
    view['power_next_transition'] = row.power_next_action
    view['power_next_transition_at'] = row.power_next_at
    # When the engine last changed power_state (null: never switched).
    view['power_state_since'] = row.power_changed_at
    for stamp in ('created_at', 'updated_at', 'failed_at',
                  'power_next_transition_at', 'power_state_since'):
        view[stamp] = dates.format_timestamp(view[stamp])
    return view


def _property_view(name, values, private, detail):
    if not detail:
        return {'property': name}
    return {'property': name, 'private': private, 'values': values}


def _allocations(session, host_id, lease_id, reservation_id):
    stmt = (sa.select(ALLOCATIONS.c.host_id, ALLOCATIONS.c.reservation_id,
                      RESERVATIONS.c.lease_id, ALLOCATIONS.c.start_date,
                      ALLOCATIONS.c.end_date)
            .join(RESERVATIONS,
                  RESERVATIONS.c.id == ALLOCATIONS.c.reservation_id)
            .order_by(ALLOCATIONS.c.host_id, ALLOCATIONS.c.start_date))
    for column, value in ((ALLOCATIONS.c.host_id, host_id),
                          (RESERVATIONS.c.lease_id, lease_id),
                          (ALLOCATIONS.c.reservation_id, reservation_id)):
        if value is not None:
            stmt = stmt.where(column == value)
    by_host = {}
    for row in session.execute(stmt):
        by_host.setdefault(row.host_id, []).append({
            'id': row.reservation_id, 'lease_id': row.lease_id,
            'start_date': dates.format_date(row.start_date),
            'end_date': dates.format_date(row.end_date)})
    if host_id is not None:
        by_host.setdefault(host_id, [])
    return [{'resource_id': str(host), 'reservations': reservations}
            for host, reservations in by_host.items()]
