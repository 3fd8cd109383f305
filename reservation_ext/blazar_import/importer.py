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

"""Bring a Blazar 18 database's hosts and leases into the leases DB.

What comes over, so that existing leases carry on:

* the reservable hosts (matched by hypervisor hostname: a host that is
  here already stays as it is) with their extra capabilities, and which
  capabilities are private;
* the registered floating IPs, with their ids (matched by network and
  address: one that is here already stays as it is);
* the leases with their ids, names, owners, trusts, dates (UTC, as
  Blazar stores them), statuses and events (the engine runs those not
  done yet), their reservations with their ids, requests and bookings:
  ``physical:host`` (``min``/``max``, the capability queries,
  ``before_end``, the aggregate; the hosts booked), ``virtual:instance``
  and ``flavor:instance`` (the amount, size, affinity, flavor, server
  group and aggregate; a seat per server; for ``flavor:instance`` the
  source flavor Blazar kept in ``resource_properties``, its size counted
  as a request made here counts it) and ``virtual:floatingip`` (network,
  amount, required addresses; the addresses booked). Blazar's
  ``before_end_lease`` event time is the lease's ``before_end_date``.
  What Blazar has no field for is this cloud's default: ``[reservation]
  host_on_end`` and ``instance_on_end``.

A lease comes over whole or not at all; one that cannot is reported with
the reason: a reservation of a kind this import does not bring over, a
lease that Blazar's manager left half-way (a transitional status or an
event in progress), one without a project, or one booked on a host or
floating IP that did not come over (a floating IP whose id is another
address's here stays behind). Blazar lets a project have two leases of
one name; here names are unique in a project, so the second is renamed
(``<name>-<first 8 characters of its id>``) and the report says so.

A lease whose id is here already is skipped: a second import brings
nothing new. Everything is written in one writer transaction, through
the owner of each table, a few INSERTs per table: a failure leaves
nothing behind.
"""

import collections
import dataclasses
import json

import sqlalchemy as sa

from db import api as db_api
from db import tables
from reservation_ext.blazar_import import blazar_schema
from reservation_ext import exceptions
from reservation_ext.floatingips import schemas as fip_schemas
from reservation_ext.plugins import host_end_policies
from reservation_ext.plugins import instance_capacity
from reservation_ext.plugins import physical_host
from reservation_ext.states import EventStatus
from reservation_ext.states import EventType
from reservation_ext.states import LeaseStatus
from reservation_ext.store import allocations as store_allocations
from reservation_ext.store import floating_ips as store_fips
from reservation_ext.store import hosts as store_hosts
from reservation_ext.store import instance_reservations as store_instances
from reservation_ext.store import leases as store_leases

HOSTS = tables.HOSTS
FLOATINGIPS = tables.FLOATINGIPS
LEASES = tables.LEASES
HOST = 'physical:host'
INSTANCE = 'virtual:instance'
FLAVOR = instance_capacity.FLAVOR_RESOURCE_TYPE
FLOATINGIP = 'virtual:floatingip'
# Statuses in which Blazar's manager was still at a lease.
_UNDER_WAY = frozenset([LeaseStatus.STARTING, LeaseStatus.TERMINATING,
                        LeaseStatus.UPDATING, LeaseStatus.DELETING])
_NAME_LENGTH = LEASES.c.name.type.length


@dataclasses.dataclass
class Report:
    """What an import brought over, and what it could not, with why."""

    revision: str
    hosts: int = 0
    hosts_present: int = 0
    capabilities: int = 0
    floatingips: int = 0
    floatingips_present: int = 0
    leases: int = 0
    leases_present: int = 0
    reservations: int = 0
    events: int = 0
    allocations: int = 0
    # (lease id, Blazar's name, the name here)
    renamed: list = dataclasses.field(default_factory=list)
    # (what: "lease <id> (<name>)" or "host <name>", why)
    refused: list = dataclasses.field(default_factory=list)

    def lines(self):
        """The report as the command prints it, line by line."""
        lines = ['Blazar database at revision %s (%s).' % (
            self.revision, blazar_schema.KNOWN_REVISIONS[self.revision])]
        if self.hosts or self.leases or self.floatingips:
            lines.append(
                'Imported %d host(s) with %d extra capability(ies), %d '
                'lease(s) with %d reservation(s), %d event(s) and %d '
                'allocation(s).' % (self.hosts, self.capabilities,
                                    self.leases, self.reservations,
                                    self.events, self.allocations))
        else:
            lines.append('Nothing new to import.')
        lines.append('Already here: %d host(s), %d lease(s).' % (
            self.hosts_present, self.leases_present))
        if self.floatingips or self.floatingips_present:
            lines.append('Floating IPs: %d imported, %d already here.' % (
                self.floatingips, self.floatingips_present))
        if self.renamed:
            lines.append('Renamed (the project has a lease of that name):')
            lines.extend('  lease %s: %s -> %s' % renamed
                         for renamed in self.renamed)
        if self.refused:
            lines.append('Not imported:')
            lines.extend('  %s: %s' % refused for refused in self.refused)
        return lines


def import_blazar(ctx, clock, conf, url):
    """Import the Blazar database at ``url``; return the :class:`Report`.

    :raises blazar_schema.UnknownSchema: a schema it does not know, before
        anything is written.
    """
    revision, data = blazar_schema.read(url)
    report = Report(revision)
    with db_api.writer(ctx, clock) as session:
        known = _Known(_import_hosts(session, data, report, clock.now()),
                       _import_floatingips(session, data, report,
                                           clock.now()))
        rows = _Rows(conf, clock.now())
        taken = {(row.project_id, row.name) for row in session.execute(
            sa.select(LEASES.c.project_id, LEASES.c.name))}
        present = set(session.scalars(sa.select(LEASES.c.id)))
        index = _Index(data)
        for lease in data.leases:
            if lease['id'] in present:
                report.leases_present += 1
                continue
            why = _why_not(lease, index, known)
            if why:
                report.refused.append(
                    ('lease %s (%s)' % (lease['id'], lease['name']), why))
                continue
            name = _free_name(lease, taken)
            if name != lease['name']:
                report.renamed.append((lease['id'], lease['name'], name))
            rows.add(dict(lease, name=name), index, known)
        rows.write(session, report)
    return report


def _import_hosts(session, data, report, now):
    """Bring the hosts over; return ``{Blazar host id: our id}``."""
    here = dict(session.execute(sa.select(HOSTS.c.hypervisor_hostname,
                                          HOSTS.c.id)).all())
    names = {row['id']: row['property_name']
             for row in data.resource_properties}
    capabilities = collections.defaultdict(dict)
    for row in data.computehost_extra_capabilities:
        capabilities[row['computehost_id']][
            names[row['property_id']]] = row['capability_value']
    ids, new = {}, []
    for host in data.computehosts:
        name = host['hypervisor_hostname']
        if not name:
            report.refused.append(('host %s' % host['id'],
                                   'it has no hypervisor hostname'))
        elif name in here:
            ids[host['id']] = here[name]
            report.hosts_present += 1
        else:
            new.append(host)
    made = store_hosts.import_hosts(session, [
        (dict(_host_values(host), created_at=host['created_at'] or now),
         capabilities[host['id']]) for host in new])
    ids.update(zip([host['id'] for host in new], made))
    report.hosts = len(made)
    report.capabilities = sum(len(capabilities[host['id']]) for host in new)
    _import_private_properties(session, data)
    return ids


def _import_floatingips(session, data, report, now):
    """Bring the floating IPs over; return ``{Blazar's id: our id}``.

    An address is matched by its network and address: one here already
    stays as it is. A new one keeps its id.
    """
    here = {(row.floating_network_id, row.floating_ip_address): row.id
            for row in session.execute(sa.select(FLOATINGIPS))}
    taken = set(here.values())
    ids, new = {}, []
    for fip in data.floatingips:
        what = 'floating IP %s (%s)' % (fip['id'], fip['floating_ip_address'])
        try:
            address = fip_schemas.parse_address(fip['floating_ip_address'])
        except exceptions.InvalidInput:
            report.refused.append((what, 'it is not an IP address'))
            continue
        key = (fip['floating_network_id'], address)
        if key in here:
            ids[fip['id']] = here[key]
            report.floatingips_present += 1
        elif fip['id'] in taken:
            report.refused.append((what, 'its id is another address\'s '
                                   'here'))
        else:
            here[key] = ids[fip['id']] = fip['id']
            new.append(dict(
                {name: fip[name] for name in (
                    'id', 'floating_network_id', 'subnet_id', 'reservable',
                    'updated_at')},
                floating_ip_address=address,
                created_at=fip['created_at'] or now))
    store_fips.import_floatingips(session, new)
    report.floatingips = len(new)
    return ids


@dataclasses.dataclass
class _Known:
    """Blazar's hosts and floating IPs that are here: ``{its id: ours}``."""

    hosts: dict
    floatingips: dict


def _host_values(host):
    return {key: host[key] for key in (
        'hypervisor_hostname', 'service_name', 'availability_zone',
        'hypervisor_type', 'hypervisor_version', 'vcpus', 'memory_mb',
        'local_gb', 'cpu_info', 'reservable')}


def _import_private_properties(session, data):
    """Make Blazar's private host properties private here, unless set."""
    here = set(session.scalars(sa.select(tables.HOST_PROPERTIES.c.name)))
    for row in data.resource_properties:
        if (row['resource_type'] == HOST and row['private'] and
                row['property_name'] not in here):
            store_hosts.set_property_private(session, row['property_name'],
                                             True)


class _Index:
    """Blazar's rows by the lease or reservation they belong to."""

    def __init__(self, data):
        self.reservations = _group(data.reservations, 'lease_id')
        self.events = _group(data.events, 'lease_id')
        self.allocations = _group(data.computehost_allocations,
                                  'reservation_id')
        self.fip_allocations = _group(data.floatingip_allocations,
                                      'reservation_id')
        self.required_fips = _group(data.required_floatingips,
                                    'floatingip_reservation_id')
        # flavor:instance requests are Blazar's instance_reservations too.
        instances = {row['reservation_id']: row
                     for row in data.instance_reservations}
        self.requests = {
            HOST: {row['reservation_id']: row
                   for row in data.computehost_reservations},
            INSTANCE: instances, FLAVOR: instances,
            FLOATINGIP: {row['reservation_id']: row
                         for row in data.floatingip_reservations}}


def _group(rows, key):
    grouped = collections.defaultdict(list)
    for row in rows:
        grouped[row[key]].append(row)
    return grouped


def _why_not(lease, index, known):
    """Say why a lease cannot come over (None: it can)."""
    if lease['status'] in _UNDER_WAY or any(
            event['status'] == EventStatus.IN_PROGRESS
            for event in index.events[lease['id']]):
        return ("Blazar's manager left it %s: let the manager finish, then "
                "import again" % lease['status'])
    if not lease['project_id']:
        return 'it has no project'
    for event in index.events[lease['id']]:
        if event['event_type'] not in EventType.ALL:
            return 'its event %s is of the unknown type %s' % (
                event['id'], event['event_type'])
    for reservation in index.reservations[lease['id']]:
        why = _why_not_reservation(reservation, index, known)
        if why:
            return 'its reservation %s %s' % (reservation['id'], why)
    return None


def _why_not_reservation(reservation, index, known):
    """Say why a reservation cannot come over (None: it can)."""
    kind = reservation['resource_type']
    if kind not in index.requests:
        return 'is %s, a kind this import does not know' % kind
    request = index.requests[kind].get(reservation['id'])
    if request is None:
        return 'has no %s request' % kind
    if kind == FLAVOR and _flavor_request(request) is None:
        return 'has no source flavor that Blazar recorded'
    for allocation in index.allocations[reservation['id']]:
        if allocation['compute_host_id'] not in known.hosts:
            return 'is booked on host %s, which did not come over' % (
                allocation['compute_host_id'])
    for allocation in index.fip_allocations[reservation['id']]:
        if allocation['floatingip_id'] not in known.floatingips:
            return ('is booked on floating IP %s, which did not come over'
                    % allocation['floatingip_id'])
    return None


def _flavor_request(request):
    """A flavor:instance request's size and source flavor (None: none).

    Blazar 18 keeps the source flavor, as Nova showed it with its extra
    specs, as JSON in the request's ``resource_properties``.
    """
    try:
        source = json.loads(request['resource_properties'])
        return instance_capacity.flavor_request(str(source['id']), source)
    except (TypeError, ValueError, KeyError):
        return None


def _free_name(lease, taken):
    """The lease's name, or a new one if its project has it already."""
    name = lease['name']
    if (lease['project_id'], name) in taken:
        suffix = '-' + lease['id'][:8]
        name = name[:_NAME_LENGTH - len(suffix)] + suffix
    taken.add((lease['project_id'], name))
    return name


class _Rows:
    """The rows of the leases that come over, by table."""

    def __init__(self, conf, now):
        self.conf = conf
        self.now = now
        self.leases, self.reservations, self.events = [], [], []
        self.host_requests, self.instance_requests = [], []
        self.fip_requests, self.fip_allocations = [], []
        self.allocations = []

    def add(self, lease, index, known):
        """Add a lease that can come over, with everything under it."""
        events = index.events[lease['id']]
        before_end = [event['time'] for event in events
                      if event['event_type'] == EventType.BEFORE_END_LEASE]
        self.leases.append(dict(
            self._stamped(lease, 'id', 'name', 'user_id', 'project_id',
                          'trust_id', 'status', 'start_date', 'end_date',
                          'degraded'),
            before_end_date=before_end[0] if before_end else None))
        self.events.extend(dict(
            self._stamped(event, 'id', 'lease_id', 'event_type', 'time',
                          'status'), attempts=0)
            for event in events)
        ended = any(event['event_type'] == EventType.END_LEASE and
                    event['status'] == EventStatus.DONE for event in events)
        for reservation in index.reservations[lease['id']]:
            self._add_reservation(lease, reservation, index, known, ended)

    def _add_reservation(self, lease, reservation, index, known, ended):
        kind = reservation['resource_type']
        request = index.requests[kind][reservation['id']]
        self.reservations.append(dict(
            self._stamped(reservation, 'id', 'lease_id', 'resource_type',
                          'status', 'missing_resources',
                          'resources_changed'),
            # As the plugins do: the request shares the reservation's id.
            resource_id=reservation['id']))
        slice_ = None
        if kind == HOST:
            self.host_requests.append(self._host_request(request, ended))
        elif kind == FLOATINGIP:
            self.fip_requests.append(_fip_request(request, index))
        else:
            slice_ = self._instance_request(request, kind)
            self.instance_requests.append(slice_)
        self.allocations.extend(
            _allocation(allocation, lease, known.hosts, slice_)
            for allocation in index.allocations[reservation['id']])
        self.fip_allocations.extend(
            _fip_allocation(allocation, lease, known.floatingips)
            for allocation in index.fip_allocations[reservation['id']])

    def _stamped(self, row, *keys):
        """The ``keys`` of a Blazar row, with its timestamps (now if none)."""
        return dict({key: row[key] for key in keys},
                    created_at=row['created_at'] or self.now,
                    updated_at=row['updated_at'])

    def _host_request(self, request, ended):
        low, _dash, high = (request['count_range'] or '').partition('-')
        return {
            'id': request['reservation_id'],
            'reservation_id': request['reservation_id'],
            'min': int(low or 1), 'max': int(high or low or 1),
            'hypervisor_properties': request['hypervisor_properties'] or '',
            'resource_properties': request['resource_properties'] or '',
            'requested_hosts': None, 'before_end': request['before_end'],
            'on_end': self.conf.reservation.host_on_end,
            'aggregate_id': request['aggregate_id'],
            # Blazar's end is over for an ended lease: nothing to act on.
            'end_phase': host_end_policies.DONE if ended else None}

    def _instance_request(self, request, kind):
        row = dict(
            {key: request[key] for key in (
                'reservation_id', 'vcpus', 'memory_mb', 'disk_gb', 'amount',
                'affinity', 'flavor_id', 'server_group_id', 'aggregate_id')},
            id=request['reservation_id'],
            resource_properties=request['resource_properties'] or '',
            source_flavor=None,
            on_end=self.conf.reservation.instance_on_end)
        if kind == FLAVOR:
            # Its resource_properties are the source flavor: no query.
            row.update(_flavor_request(request), resource_properties='')
        return row

    def write(self, session, report):
        """Write the rows through each table's owner; count them."""
        store_leases.import_leases(session, self.leases, self.reservations,
                                   self.events)
        physical_host.import_requests(session, self.host_requests)
        store_instances.import_requests(session, self.instance_requests)
        store_fips.import_requests(session, self.fip_requests)
        store_fips.import_bookings(session, self.fip_allocations)
        if self.allocations:
            # As every booking does: planners that read these hosts
            # before lose their compare-and-swap.
            store_hosts.bump_generations(session, {
                row['host_id'] for row in self.allocations})
            store_allocations.book(session, self.allocations)
        report.leases = len(self.leases)
        report.reservations = len(self.reservations)
        report.events = len(self.events)
        report.allocations = len(self.allocations) + len(
            self.fip_allocations)


def _allocation(allocation, lease, host_ids, slice_):
    """A booking for the lease's window: the whole host, or a slice."""
    size = {key: slice_[key] if slice_ else 0
            for key in ('vcpus', 'memory_mb', 'disk_gb')}
    return dict(size, id=allocation['id'],
                host_id=host_ids[allocation['compute_host_id']],
                reservation_id=allocation['reservation_id'],
                start_date=lease['start_date'], end_date=lease['end_date'],
                whole_host=slice_ is None)


def _fip_request(request, index):
    """A floating IP request; Blazar's required addresses as a list."""
    required = [row['address'] for row in
                index.required_fips[request['id']]]
    return {'id': request['reservation_id'],
            'reservation_id': request['reservation_id'],
            'network_id': request['network_id'],
            'amount': request['amount'],
            'required_floatingips': json.dumps(required) if required
            else None}


def _fip_allocation(allocation, lease, fip_ids):
    """A floating IP booked for the lease's window."""
    return {'id': allocation['id'],
            'floatingip_id': fip_ids[allocation['floatingip_id']],
            'reservation_id': allocation['reservation_id'],
            'proposal_id': None, 'proposal_item': None, 'expires_at': None,
            'start_date': lease['start_date'],
            'end_date': lease['end_date']}
