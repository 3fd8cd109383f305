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

"""The calendar's data: lease API answers turned into timeline rows.

Pure functions of the lease API's JSON (no Django, no HTTP), so that the
views stay thin and the shapes are unit-tested
(``tests/unit/test_horizon_calendar.py``). Dates leave here as ISO 8601
with ``Z`` (the API's are naive UTC with microseconds), which every
browser's ``Date`` parses the same way.
"""

import datetime
import re

# The calendar's rows, in the order shown: (kind, label). A reservation's
# kind comes from its resource type (and, for virtual:instance, whether
# it names a server: one reserved server, or Blazar's "amount servers of
# a size" capacity).
KINDS = (
    ('hosts', 'Hosts'),
    ('servers', 'Servers'),
    ('capacity', 'Instance capacity'),
    ('volumes', 'Volumes'),
    ('floatingips', 'Floating IPs'),
    ('networks', 'Networks'),
    ('stacks', 'Stacks'),
    ('storage_pools', 'Storage pools'),
    ('other', 'Other'),
)
# Rows shown even when empty: the kinds a project usually reserves, so
# that the calendar's layout does not jump as leases come and go.
ALWAYS_SHOWN = ('hosts', 'servers', 'capacity', 'volumes', 'floatingips',
                'networks', 'stacks')
_KIND_OF_TYPE = {
    'physical:host': 'hosts',
    'flavor:instance': 'capacity',
    'virtual:volume': 'volumes',
    'virtual:floatingip': 'floatingips',
    'network': 'networks',
    'heat:stack': 'stacks',
    'storage:pool': 'storage_pools',
}
# The request form's resource types: the ones the availability and
# proposals APIs can answer from a form (heat:stack needs a template).
# Each with its fields: (name, label, default).
REQUEST_TYPES = (
    ('physical:host', 'Hosts', 'hosts', (
        ('count', 'Number of hosts', '1'),
        ('resource_properties', 'Resource properties (JSON query)', ''),
    )),
    ('virtual:instance', 'Server capacity', 'servers', (
        ('vcpus', 'vCPUs', '1'),
        ('memory_mb', 'RAM (MB)', '512'),
        ('disk_gb', 'Disk (GB)', '1'),
    )),
    ('virtual:volume', 'Volume', 'GB', (
        ('size_gb', 'Size (GB)', '10'),
    )),
    ('virtual:floatingip', 'Floating IPs', 'floating IPs', (
        ('network_id', 'External network id', ''),
        ('count', 'Number of addresses', '1'),
    )),
)
DURATION_UNITS = {'m': 60, 'h': 3600, 'd': 86400}
_API_DATE = re.compile(
    r'^(\d{4}-\d{2}-\d{2})[T ](\d{2}:\d{2})(:\d{2})?(\.\d+)?(Z|[+-]00:?00)?$')


class RequestError(ValueError):
    """A request form field is missing or wrong; ``field`` names it."""

    def __init__(self, field, message):
        """The error of ``field``: ``field: message``."""
        super().__init__('%s: %s' % (field, message))
        self.field = field


def iso_utc(text):
    """``2030-01-10T09:00:00.000000`` as ``2030-01-10T09:00:00Z``.

    None stays None; text in another form is returned unchanged, so that
    an unexpected date shows rather than breaks the page.
    """
    if not text:
        return None
    match = _API_DATE.match(text)
    if not match:
        return text
    day, minute, second = match.group(1), match.group(2), match.group(3)
    return '%sT%s%sZ' % (day, minute, second or ':00')


def parse_utc(text):
    """An API date (or :func:`iso_utc` text) as an aware UTC datetime."""
    value = datetime.datetime.strptime(iso_utc(text), '%Y-%m-%dT%H:%M:%SZ')
    return value.replace(tzinfo=datetime.timezone.utc)


def reservation_kind(reservation):
    """The calendar row (a :data:`KINDS` key) of a reservation view."""
    resource_type = reservation.get('resource_type')
    if resource_type == 'virtual:instance':
        return 'servers' if reservation.get('server_id') else 'capacity'
    return _KIND_OF_TYPE.get(resource_type, 'other')


def reservation_summary(reservation):
    """A short text of what a reservation holds, for a bar's label."""
    kind = reservation_kind(reservation)
    get = reservation.get
    if kind == 'hosts':
        count = (get('min') if get('min') == get('max')
                 else '%s-%s' % (get('min'), get('max')))
        text = '%s host(s)' % count
        if get('resource_properties'):
            text += ' %s' % get('resource_properties')
        return text
    if kind in ('servers', 'capacity'):
        size = '%s vCPU, %s MB, %s GB' % (
            get('vcpus'), get('memory_mb'), get('disk_gb'))
        if kind == 'capacity':
            return '%s x (%s)' % (get('amount'), size)
        return size
    if kind == 'volumes':
        return '%s GB' % get('size_gb')
    if kind == 'floatingips':
        return '%s address(es)' % get('amount', 1)
    if kind == 'storage_pools':
        return '%s-%s pool(s)' % (get('min'), get('max'))
    return get('resource_type') or kind


def lease_bar(lease, reservation):
    """One bar of the project calendar: a reservation of a lease."""
    return {
        'lease_id': lease.get('id'),
        'lease': lease.get('name'),
        'status': lease.get('status'),
        'reservation_id': reservation.get('id'),
        'kind': reservation_kind(reservation),
        'resource_type': reservation.get('resource_type'),
        'summary': reservation_summary(reservation),
        'start': iso_utc(lease.get('start_date')),
        'end': iso_utc(lease.get('end_date')),
    }


def lease_rows(leases):
    """The project calendar's rows of ``leases`` (lease API views).

    A row per reservation kind (:data:`KINDS`), each with a bar per
    reservation of that kind, sorted by start; the :data:`ALWAYS_SHOWN`
    rows come even when empty, the others only when they have a bar.
    """
    bars = {kind: [] for kind, _label in KINDS}
    for lease in leases:
        for reservation in lease.get('reservations') or ():
            bars[reservation_kind(reservation)].append(
                lease_bar(lease, reservation))
    return [{'kind': kind, 'label': label,
             'bars': sorted(bars[kind], key=lambda bar: (
                 bar['start'] or '', bar['lease'] or ''))}
            for kind, label in KINDS
            if bars[kind] or kind in ALWAYS_SHOWN]


def host_rows(hosts, allocations, leases=()):
    """The admin calendar's rows: a host each, with the leases on it.

    ``hosts`` are host views (GET /v1/os-hosts), ``allocations`` the
    allocation list (GET /v1/os-hosts/allocations) and ``leases`` the
    lease views the caller may list, which name the allocations' leases
    and say what kind of reservation books the host.
    """
    reservations = {reservation.get('id'): (lease, reservation)
                    for lease in leases
                    for reservation in lease.get('reservations') or ()}
    booked = {str(allocation.get('resource_id')):
              allocation.get('reservations') or ()
              for allocation in allocations}
    rows = []
    for host in sorted(hosts, key=lambda host: host.get(
            'hypervisor_hostname') or ''):
        # A reservation with several seats (instance capacity) on a host
        # is listed once per seat: one bar says it.
        bookings = {(booking.get('id'), booking.get('start_date'),
                     booking.get('end_date')): booking
                    for booking in booked.get(str(host.get('id')), ())}
        bars = [_allocation_bar(booking, reservations)
                for booking in bookings.values()]
        rows.append(dict(host_state(host), bars=sorted(
            bars, key=lambda bar: bar['start'] or '')))
    return rows


def _allocation_bar(booking, reservations):
    """A bar of the admin calendar: one reservation booking a host."""
    lease, reservation = reservations.get(booking.get('id'), ({}, {}))
    return {
        'lease_id': booking.get('lease_id'),
        'lease': lease.get('name') or booking.get('lease_id'),
        'project_id': lease.get('project_id'),
        'status': lease.get('status'),
        'reservation_id': booking.get('id'),
        'kind': reservation_kind(reservation) if reservation else 'other',
        'summary': (reservation_summary(reservation) if reservation
                    else ''),
        'start': iso_utc(booking.get('start_date')),
        'end': iso_utc(booking.get('end_date')),
    }


def host_state(host):
    """What the admin calendar says of a host beside its bars.

    The host view's failure and power fields, as ``openstack reservation
    host show`` gives them; ``problem`` is the text of a failure or a
    power failure, or None for a healthy host.
    """
    problem = None
    if host.get('failure'):
        since = iso_utc(host.get('failed_at'))
        problem = 'failed (%s) since %s' % (
            host['failure'],
            since[:16].replace('T', ' ') + ' UTC' if since else '?')
    elif host.get('power_failure'):
        problem = 'power failure: %s' % host['power_failure']
    return {
        'id': str(host.get('id')),
        'host': host.get('hypervisor_hostname'),
        'reservable': host.get('reservable', True),
        'power_state': host.get('power_state'),
        'power_managed': host.get('power_managed'),
        'power_state_since': iso_utc(host.get('power_state_since')),
        'power_next_transition': host.get('power_next_transition'),
        'power_next_transition_at': iso_utc(
            host.get('power_next_transition_at')),
        'failure': host.get('failure'),
        'failed_at': iso_utc(host.get('failed_at')),
        'problem': problem,
    }


def availability_steps(availability):
    """The steps of a GET /v1/availability answer, with ISO dates."""
    return [{'start': iso_utc(step.get('start')),
             'end': iso_utc(step.get('end')),
             'amount': step.get('amount', 0)}
            for step in availability.get('free') or ()]


def proposal_slots(proposals):
    """The slots of a POST /v1/leases/proposals answer, in start order."""
    slots = [{'id': proposal.get('id'),
              'start': iso_utc(proposal.get('start_date')),
              'end': iso_utc(proposal.get('end_date')),
              'expires_at': iso_utc(proposal.get('expires_at')),
              'hosts': proposal.get('hosts')}
             for proposal in proposals]
    return sorted(slots, key=lambda slot: slot['start'] or '')
