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

"""An independent judge of a concurrent lease API run.

It reads the leases DB with plain SQL and the clients' history
(:class:`harness.concurrency.workload.Record`), and uses none of the
planner's code: the rules are restated here from the product's contract.

Allocations and their lifetimes
    Each successful create or update of a lease is a *version* of its
    allocations (host slices or whole hosts, volume GB), as the client
    read them right after the answer; each proposals request's holds are
    one per proposal. A version *may* exist from its request's send to
    the receive of the request that replaced or deleted it (for a hold:
    to its expiry, or the receive of the lease made from its request);
    it *surely* exists from its receive to that request's send (the
    expiry, or that send).

The invariants (``violations``)
    * No host is in two overlapping allocations when either is the whole
      host: windows overlap when they are closer than ``cleaning_time``
      (windows that only touch, without cleaning time, do not).
    * No host carries slices over its capacity at any instant, Placement's
      measure: ``(total - reserved) * allocation_ratio`` of its vCPUs,
      RAM and disk (computehosts' ``vcpus``, ``memory_mb``, ``local_gb``).
    * The volume GB held at any instant are within the reservable GB.
    These hold among the versions that surely coexisted, and in the DB at
    the end (bookings, and holds not yet expired).
    * The DB has exactly the leases the history says exist; a taken
      proposal's request, and every expired proposal, holds nothing.
    * Nova has exactly the servers, and Cinder the volumes, of the
      server and volume leases that exist: a refused create left none,
      a deleted lease took its own along.
    * No answer is a 5xx, or missing; every status is one the request may
      have (creates 201, or 202 from Nova and Cinder, or 409; updates 200
      or 409, deletes 204, proposals 201; a create from a proposal that
      expired may also find it deleted already by another proposals
      request: 404).
    * Every 409 of a create was right: even counting every version that
      may have existed during [send, receive], the request did not fit by
      the booking rules of the contract: ``min`` hosts free of any
      allocation closer than the cleaning time; for servers, a host with
      no whole host booking that close and room for a server besides
      the slices in it (together, as the planner counts them: documented
      as conservative), placed as ``affinity`` says; volume GB within the
      reservable GB besides every reservation overlapping the window. A
      409 of a create from a proposal is right when the proposal expired
      by the receive.
"""

import collections
import dataclasses
import datetime
import math
import re

import sqlalchemy as sa

INFINITY = float('inf')
RESOURCES = ('vcpus', 'memory_mb', 'disk_gb')
_CREATES = ('create', 'create_from_proposal')
# A lease API create answers 201; nova-api and cinder-api, 202.
CREATED = (201, 202)
EXPECTED = {'create': {201, 202, 409}, 'create_from_proposal': {201, 409},
            'update': {200, 409}, 'delete': {204}, 'propose': {201}}


# Result columns typed by name, for the backends (SQLite) whose driver
# returns dates as text.
_TYPES = {'start_date': sa.DateTime, 'end_date': sa.DateTime,
          'expires_at': sa.DateTime, 'until': sa.DateTime,
          'whole_host': sa.Boolean}


def plain_sql(statement):
    """A textual SELECT whose date and flag columns come back typed."""
    names = set(re.findall(r'\b(\w+)\b', statement.split(' FROM ')[0]))
    return sa.text(statement).columns(**{
        name: kind for name, kind in _TYPES.items() if name in names})


@dataclasses.dataclass(frozen=True)
class Limits:
    """The capacity a run is judged against.

    :param hosts: ``{host_id: (vcpus, memory_mb, local_gb)}``.
    :param cleaning_time: minutes.
    :param ratios: Nova's allocation ratios (vCPUs, RAM, disk).
    :param reserved: what Nova keeps on each host (vCPUs, MB, GB).
    :param volume_gb: ``[reservation] volume_reservable_gb``.
    """

    hosts: dict
    cleaning_time: int
    ratios: tuple
    reserved: tuple
    volume_gb: int

    @property
    def margin(self):
        return datetime.timedelta(minutes=self.cleaning_time)

    def usable(self, host_id):
        return tuple((total - kept) * ratio for total, kept, ratio in zip(
            self.hosts[host_id], self.reserved, self.ratios))


@dataclasses.dataclass
class Version:
    """Allocations and volume GB that may and surely existed when."""

    owner: str
    may_from: float
    surely_from: float
    may_to: float = INFINITY
    surely_to: float = INFINITY
    allocations: list = dataclasses.field(default_factory=list)
    volumes: list = dataclasses.field(default_factory=list)


def read_limits(conn, cleaning_time, ratios, reserved, volume_gb):
    """The :class:`Limits` of the reservable hosts in the DB."""
    hosts = {row.id: (row.vcpus, row.memory_mb, row.local_gb)
             for row in conn.execute(sa.text(
                 'SELECT id, vcpus, memory_mb, local_gb FROM computehosts '
                 'WHERE reservable'))}
    return Limits(hosts, cleaning_time, ratios, reserved, volume_gb)


# The history

def versions(records):
    """Every :class:`Version` of the history's leases and proposals."""
    found, current, holds = [], {}, {}
    for record in sorted(records, key=lambda r: r.send):
        if record.op == 'propose' and record.status == 201:
            for proposal_id, expires in record.proposals.items():
                if expires is None:
                    continue
                version = Version(
                    'proposal ' + proposal_id, record.send, record.receive,
                    expires, expires,
                    [a for a in record.allocations
                     if a.get('proposal') == proposal_id],
                    [v for v in record.volumes
                     if v.get('proposal') == proposal_id])
                holds[proposal_id] = version
                found.append(version)
            continue
        if record.op == 'create_from_proposal' and record.status == 201:
            for proposal_id in record.proposals:
                if proposal_id in holds:
                    _end(holds[proposal_id], record)
        changed = (record.op in _CREATES and
                   record.status in CREATED) or (
                       record.op == 'update' and record.status == 200)
        if changed or (record.op == 'delete' and record.status == 204):
            if record.lease in current:
                _end(current.pop(record.lease), record)
        if changed:
            version = Version('lease ' + record.lease, record.send,
                              record.receive,
                              allocations=list(record.allocations),
                              volumes=list(record.volumes))
            current[record.lease] = version
            found.append(version)
    return found


def _purged(record, records):
    """A create from a proposal that expired, and went, before it (404).

    The next proposals request deletes the expired proposals; then the
    proposal is not found rather than expired.
    """
    if record.op != 'create_from_proposal' or record.status != 404:
        return False
    expires = _expiries(records).get(record.body['proposal_id'])
    return expires is None or expires <= record.receive


def _expiries(records):
    """``{proposal_id: expires_at}`` (epoch; None when not read)."""
    return {proposal_id: expires for record in records
            if record.op == 'propose' for proposal_id, expires
            in record.proposals.items()}


def _end(version, record):
    """``version`` ends with ``record`` (or its own expiry, if sooner)."""
    version.may_to = min(version.may_to, record.receive)
    version.surely_to = min(version.surely_to, record.send)


def history_violations(records, limits):
    """What the history shows broken (see the module doc)."""
    found = []
    for record in records:
        if record.status not in EXPECTED[record.op] and not _purged(
                record, records):
            found.append('%s %s of client %d answered %s: %s' % (
                record.op, record.kind, record.client, record.status,
                record.response))
    every = versions(records)
    for version in every:
        # At the moment it surely began, with those surely there then.
        moment = version.surely_from
        if moment >= version.surely_to:
            continue
        alive = [other for other in every
                 if other is not version and
                 other.surely_from <= moment < other.surely_to]
        found += ['%s, beside what surely existed then: %s' % (
            version.owner, problem) for problem in capacity_problems(
                version.allocations, version.volumes,
                [a for other in alive for a in other.allocations],
                [v for other in alive for v in other.volumes], limits)]
    return found + unjustified_conflicts(records, every, limits)


def capacity_problems(allocations, volumes, others, other_volumes, limits):
    """What of ``allocations`` and ``volumes`` breaks, beside the others.

    A whole host overlapping another allocation of its host, slices over
    a host's capacity at some instant, volume GB over the reservable GB
    at some instant.
    """
    problems = []
    by_host = collections.defaultdict(list)
    for allocation in others:
        by_host[allocation['host_id']].append(allocation)
    margin = limits.margin
    for allocation in allocations:
        on_host = by_host[allocation['host_id']] + [
            a for a in allocations
            if a is not allocation and a['host_id'] == allocation['host_id']]
        for other in on_host:
            if (allocation['whole'] or other['whole']) and _overlap(
                    allocation, other, margin):
                problems.append('host %d is in two overlapping allocations '
                                '%s and %s' % (allocation['host_id'],
                                               _window(allocation),
                                               _window(other)))
        if not allocation['whole']:
            peak = _peak(allocation, [allocation] + [
                a for a in on_host if not a['whole']], RESOURCES)
            usable = limits.usable(allocation['host_id'])
            if any(used > room for used, room in zip(peak, usable)):
                problems.append('host %d carries slices of %s at once in '
                                '%s, over its %s' % (
                                    allocation['host_id'], peak,
                                    _window(allocation), usable))
    for volume in volumes:
        peak, = _peak(volume, volumes + other_volumes, ('gb',))
        if peak > limits.volume_gb:
            problems.append('%d volume GB held at once in %s, over the %d '
                            'reservable' % (peak, _window(volume),
                                            limits.volume_gb))
    return _unique(problems)


def _unique(items):
    return list(dict.fromkeys(items))


def _overlap(one, other, margin=datetime.timedelta(0)):
    """Whether two windows overlap, or come closer than ``margin``."""
    return (one['start'] < other['end'] + margin and
            other['start'] < one['end'] + margin)


def _window(item):
    return '[%s, %s)' % (item['start'], item['end'])


def _peak(item, items, keys):
    """The largest sums of ``keys`` of ``items`` at an instant of ``item``.

    ``items`` include ``item``; a dict listed twice counts once.
    """
    seen, unique = set(), []
    for other in items:
        if id(other) not in seen:
            seen.add(id(other))
            unique.append(other)
    moments = [item['start']] + [other['start'] for other in unique
                                 if item['start'] < other['start'] <
                                 item['end']]
    best = tuple(0 for _ in keys)
    for moment in moments:
        total = tuple(sum(other[key] for other in unique
                          if other['start'] <= moment < other['end'])
                      for key in keys)
        best = tuple(max(b, t) for b, t in zip(best, total))
    return best


# The 409s

def unjustified_conflicts(records, every, limits):
    """The 409s of creates that the history does not justify."""
    found = []
    expiries = _expiries(records)
    for record in records:
        if record.status != 409:
            continue
        if record.op == 'create_from_proposal':
            proposal_id = record.body['proposal_id']
            expires = expiries.get(proposal_id)
            # Unknown: purged as expired before the client could read it.
            if expires is not None and expires > record.receive:
                found.append('create from proposal %s refused with 409 '
                             'before it expired' % proposal_id)
            continue
        if record.op != 'create':
            continue
        possible = [v for v in every if v.may_from < record.receive and
                    v.may_to > record.send]
        allocations = [a for v in possible for a in v.allocations]
        volumes = [v for version in possible for v in version.volumes]
        if fits(record, allocations, volumes, limits):
            found.append('%s create of client %d for %s refused with 409, '
                         'but it fit even beside every allocation that may '
                         'have existed then: %s' % (
                             record.kind, record.client, record.window,
                             record.response))
    return found


def fits(record, allocations, volumes, limits):
    """Whether a create request fits beside ``allocations``, ``volumes``."""
    start, end = record.window
    wanted = {'start': start, 'end': end}
    request = record.request_size
    if record.kind == 'volume':
        held = sum(v['gb'] for v in volumes if _overlap(v, wanted))
        return held + request['size_gb'] <= limits.volume_gb
    margin = limits.margin
    near = collections.defaultdict(list)
    for allocation in allocations:
        if _overlap(allocation, wanted, margin):
            near[allocation['host_id']].append(allocation)
    if record.kind == 'host':
        free = [host for host in limits.hosts if not near[host]]
        return len(free) >= request['min']
    size = tuple(request[key] for key in RESOURCES)
    seats = [_seats(limits.usable(host), near[host], size)
             for host in limits.hosts]
    amount = request.get('amount', 1)
    affinity = request.get('affinity')
    if record.kind == 'slice' or affinity is True:
        return max(seats) >= amount
    if affinity is False:
        return sum(1 for count in seats if count) >= amount
    return sum(seats) >= amount


def _seats(usable, near, size):
    """How many servers of ``size`` a host takes beside ``near``."""
    if any(a['whole'] for a in near):
        return 0
    rooms = [capacity - sum(a[key] for a in near)
             for capacity, key in zip(usable, RESOURCES)]
    if any(room < 0 for room in rooms):
        return 0
    counts = [math.floor(room / wanted)
              for room, wanted in zip(rooms, size) if wanted]
    return min(counts) if counts else 0


# The DB at the end

_ALLOCATIONS = plain_sql(
    'SELECT id, host_id, start_date, end_date, whole_host, vcpus, '
    'memory_mb, disk_gb, proposal_id, expires_at FROM host_allocations')
_VOLUMES = plain_sql(
    'SELECT l.start_date, l.end_date, v.size_gb FROM volume_reservations v '
    'JOIN reservations r ON v.reservation_id = r.id '
    'JOIN leases l ON r.lease_id = l.id')
_HELD_VOLUMES = plain_sql(
    'SELECT start_date, end_date, volume_gb, expires_at FROM proposals '
    'WHERE volume_gb > 0')


def db_violations(conn, records, limits, now):
    """What the DB shows broken at ``now`` (a naive UTC datetime)."""
    live = []
    for row in conn.execute(_ALLOCATIONS):
        if row.proposal_id is None or row.expires_at > now:
            live.append({'host_id': row.host_id, 'start': row.start_date,
                         'end': row.end_date, 'whole': bool(row.whole_host),
                         'vcpus': row.vcpus, 'memory_mb': row.memory_mb,
                         'disk_gb': row.disk_gb})
    volumes = [{'start': row.start_date, 'end': row.end_date,
                'gb': row.size_gb} for row in conn.execute(_VOLUMES)]
    volumes += [{'start': row.start_date, 'end': row.end_date,
                 'gb': row.volume_gb} for row in conn.execute(_HELD_VOLUMES)
                if row.expires_at > now]
    found = ['in the DB: ' + problem for problem in capacity_problems(
        live, volumes, [], [], limits)]
    return found + _lease_problems(conn, records) + _hold_problems(
        conn, records, now)


def _lease_problems(conn, records):
    expected = set()
    for record in sorted(records, key=lambda r: r.send):
        if record.op in _CREATES and record.status in CREATED:
            expected.add(record.lease)
        elif record.op == 'delete' and record.status == 204:
            expected.discard(record.lease)
    actual = set(conn.execute(sa.text('SELECT id FROM leases')).scalars())
    problems = ['lease %s is in the DB, but no create made it or it was '
                'deleted' % lease for lease in sorted(actual - expected)]
    return problems + ['lease %s was made and not deleted, but is not in '
                       'the DB' % lease for lease in sorted(expected - actual)]


def _hold_problems(conn, records, now):
    taken = set()
    for record in records:
        if record.op == 'create_from_proposal' and record.status == 201:
            taken.update(record.proposals)
    problems = []
    for row in conn.execute(plain_sql(
            'SELECT id, expires_at FROM proposals')):
        if row.id in taken:
            problems.append('proposal %s is still there after a lease was '
                            'made from its request' % row.id)
        elif row.expires_at <= now:
            problems.append('proposal %s is still there after it expired'
                            % row.id)
    for row in conn.execute(plain_sql(
            'SELECT a.proposal_id, a.expires_at, p.expires_at AS until '
            'FROM host_allocations a LEFT JOIN proposals p '
            'ON a.proposal_id = p.id WHERE a.proposal_id IS NOT NULL')):
        if row.until is None or row.expires_at != row.until:
            problems.append('a hold of proposal %s counts until %s, not '
                            'until the proposal expires (%s)' % (
                                row.proposal_id, row.expires_at, row.until))
    return _unique(problems)


def cloud_violations(records, servers, volumes):
    """What Nova and Cinder hold that the history does not say.

    :param servers: the ids of every server in Nova (all projects).
    :param volumes: the ids of every volume in Cinder (all projects).
    """
    alive = {}
    for record in sorted(records, key=lambda r: r.send):
        if record.op == 'create' and record.resource and \
                record.status in CREATED:
            alive[record.lease] = (record.kind, record.resource)
        elif record.op == 'delete' and record.status == 204:
            alive.pop(record.lease, None)
    expected = {kind: {resource for made, resource in alive.values()
                       if made == kind} for kind in ('slice', 'volume')}
    problems = []
    for kind, name, found in (('slice', 'server', set(servers)),
                              ('volume', 'volume', set(volumes))):
        problems += ['%s %s has no lease' % (name, resource)
                     for resource in sorted(found - expected[kind])]
        problems += ['%s %s of a lease is gone' % (name, resource)
                     for resource in sorted(expected[kind] - found)]
    return problems


def summary(records):
    """Counts of a run: requests, statuses by operation, 409s."""
    by_status = collections.Counter(str(r.status) for r in records)
    by_op = collections.Counter('%s %s %s' % (r.op, r.kind, r.status)
                                for r in records)
    return {'operations': len(records), 'status': dict(sorted(
        by_status.items())), 'by_operation': dict(sorted(by_op.items())),
        'conflicts': by_status.get('409', 0)}


def utc_now():
    """Now as the naive UTC datetime the DB rows are compared with."""
    return datetime.datetime.now(datetime.timezone.utc).replace(tzinfo=None)
