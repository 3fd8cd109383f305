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

"""Concurrent lease API clients, and the history they record.

Each client is a thread of its own project that sends a seeded random
sequence of requests over HTTP, spread over the workers: lease creates
(whole hosts, ``virtual:instance`` capacity with ``amount``, one-server
``virtual:instance`` slices without a flavor, ``virtual:volume``), window
updates, deletes, and schedule proposals (hosts, then often the lease of
the first one; servers and volumes, left to expire). Windows are a few
hours inside one day, so that they overlap a lot.

Every request becomes a :class:`Record`: what was sent, the wall-clock
send and receive times (``time.time()``, the clock the workers' rows are
stamped with, on the same machine), the status and body. After a request
that changed the client's own allocations, the client reads them with
plain SQL (``snapshot``): only the client acts on its leases and
proposals, so what it reads is exactly what the request left.

Deletes are made of the leases whose delete needs neither Nova nor
Cinder: instance-capacity leases that have not started. A pending host
lease's delete asks Nova for its aggregate, a one-server lease's deletes
the server in Nova and a volume lease's the reserved volume in Cinder;
these workers run no Nova or Cinder.
"""

import calendar
import dataclasses
import datetime
import http.client
import json
import random
import threading
import time
import urllib.parse
import uuid

from tests.concurrency import checker

# A hang guard: under load a request waits for locks (and retries) long.
HTTP_TIMEOUT = 300
ROLES = 'member,reader'

_LEASE_ROWS = checker.plain_sql(
    'SELECT a.host_id, a.start_date, a.end_date, a.whole_host, a.vcpus, '
    'a.memory_mb, a.disk_gb FROM host_allocations a JOIN reservations r '
    'ON a.reservation_id = r.id WHERE r.lease_id = :lease_id')
_LEASE_VOLUMES = checker.plain_sql(
    'SELECT l.start_date, l.end_date, v.size_gb FROM volume_reservations v '
    'JOIN reservations r ON v.reservation_id = r.id JOIN leases l '
    'ON r.lease_id = l.id WHERE l.id = :lease_id')
_PROPOSAL_ROWS = checker.plain_sql(
    'SELECT a.host_id, a.start_date, a.end_date, a.whole_host, a.vcpus, '
    'a.memory_mb, a.disk_gb FROM host_allocations a '
    'WHERE a.proposal_id = :proposal_id')
_PROPOSAL = checker.plain_sql(
    'SELECT start_date, end_date, volume_gb, expires_at FROM proposals '
    'WHERE id = :proposal_id')


@dataclasses.dataclass
class Record:
    """One request and what came of it.

    ``kind``: ``host``, ``capacity``, ``slice``, ``volume`` (of a lease or
    a proposals request). ``lease``: the lease id the request acted on or
    made. ``allocations``: after a success, the host allocations of the
    lease (or of every proposal made), as dicts with ``host_id``,
    ``start``, ``end``, ``whole``, ``vcpus``, ``memory_mb``, ``disk_gb``
    (and ``proposal``); ``volumes``: its volume capacity, as dicts with
    ``start``, ``end``, ``gb`` (and ``proposal``). ``proposals``: for a
    proposals request, ``{id: expires_at}`` (epoch seconds); for a create
    from a proposal, the request's ids.
    """

    client: int
    op: str
    kind: str
    send: float
    receive: float = None
    status: int = None
    body: dict = None
    response: object = None
    lease: str = None
    allocations: list = dataclasses.field(default_factory=list)
    volumes: list = dataclasses.field(default_factory=list)
    proposals: dict = dataclasses.field(default_factory=dict)
    # The window asked for (a create, an update), naive UTC datetimes.
    window: tuple = None
    request_size: dict = None


def epoch(moment):
    """A naive UTC datetime as epoch seconds."""
    return calendar.timegm(moment.timetuple()) + moment.microsecond / 1e6


def lease_date(moment):
    return moment.strftime('%Y-%m-%d %H:%M')


class Client:
    """One project's client: ``ops`` requests, one after the other."""

    def __init__(self, index, endpoints, engine, base, ops, seed):
        self.index = index
        self.project = 'project-%02d' % index
        self.endpoints = endpoints
        self.engine = engine
        self.base = base
        self.ops = ops
        self.rng = random.Random('%s-%d' % (seed, index))
        self.records = []
        # lease id -> kind, of the leases this client has.
        self.leases = {}
        self._sent = 0

    # HTTP

    def call(self, method, path, body=None):
        """``(status, json or None, send, receive)`` of one request."""
        endpoint = urllib.parse.urlsplit(
            self.endpoints[(self.index + self._sent) % len(self.endpoints)])
        self._sent += 1
        headers = {'X-User-Id': 'user-' + self.project,
                   'X-Project-Id': self.project, 'X-Roles': ROLES,
                   'X-Auth-Token': 'token', 'Accept': 'application/json'}
        data = None
        if body is not None:
            data = json.dumps(body).encode()
            headers['Content-Type'] = 'application/json'
        connection = http.client.HTTPConnection(
            endpoint.hostname, endpoint.port, timeout=HTTP_TIMEOUT)
        send = time.time()
        try:
            connection.request(method, endpoint.path + path, data, headers)
            response = connection.getresponse()
            text = response.read()
            status = response.status
        except OSError as exc:
            # No answer: recorded as status 0, which the checker refuses.
            return 0, {'error': repr(exc)}, send, time.time()
        finally:
            connection.close()
        receive = time.time()
        try:
            payload = json.loads(text) if text else None
        except ValueError:
            payload = {'text': text.decode(errors='replace')}
        return status, payload, send, receive

    def request(self, op, kind, method, path, body=None, **fields):
        status, payload, send, receive = self.call(method, path, body)
        record = Record(client=self.index, op=op, kind=kind, send=send,
                        receive=receive, status=status, body=body,
                        response=payload, **fields)
        self.records.append(record)
        return record

    # Snapshots (plain SQL, after the request)

    def snapshot_lease(self, record):
        with self.engine.connect() as conn:
            record.allocations = [_allocation(row) for row in conn.execute(
                _LEASE_ROWS, {'lease_id': record.lease})]
            record.volumes = [
                {'start': row.start_date, 'end': row.end_date,
                 'gb': row.size_gb} for row in conn.execute(
                     _LEASE_VOLUMES, {'lease_id': record.lease})]

    def snapshot_proposals(self, record):
        with self.engine.connect() as conn:
            for proposal_id in record.proposals:
                row = conn.execute(_PROPOSAL,
                                   {'proposal_id': proposal_id}).first()
                if row is None:
                    # Expired and purged by another request already.
                    continue
                record.proposals[proposal_id] = epoch(row.expires_at)
                record.allocations += [
                    dict(_allocation(hold), proposal=proposal_id)
                    for hold in conn.execute(
                        _PROPOSAL_ROWS, {'proposal_id': proposal_id})]
                if row.volume_gb:
                    record.volumes.append({
                        'start': row.start_date, 'end': row.end_date,
                        'gb': row.volume_gb, 'proposal': proposal_id})

    # The operations

    def run(self):
        for _ in range(self.ops):
            choice = self.rng.random()
            deletable = [lease for lease, kind in self.leases.items()
                         if kind == 'capacity']
            if choice < 0.45 or (choice < 0.65 and not self.leases):
                self.create()
            elif choice < 0.65:
                self.update(self.rng.choice(sorted(self.leases)))
            elif choice < 0.8 and deletable:
                self.delete(self.rng.choice(sorted(deletable)))
            else:
                self.propose()

    def window(self, hours=(1, 4)):
        start = self.base + datetime.timedelta(
            minutes=30 * self.rng.randrange(0, 20))
        return start, start + datetime.timedelta(
            minutes=30 * self.rng.randrange(2 * hours[0], 2 * hours[1] + 1))

    def reservation(self, kind):
        rng = self.rng
        if kind == 'host':
            count = rng.randint(1, 5)
            return {'resource_type': 'physical:host', 'min': count,
                    'max': count, 'hypervisor_properties': '',
                    'resource_properties': ''}
        if kind == 'capacity':
            return dict(self.size(), resource_type='virtual:instance',
                        amount=rng.randint(1, 4),
                        affinity=rng.choice([True, False, None]))
        if kind == 'slice':
            return dict(self.size(), resource_type='virtual:instance',
                        server_id=str(uuid.uuid4()))
        return {'resource_type': 'virtual:volume',
                'size_gb': 50 * rng.randint(2, 10),
                'volume_id': str(uuid.uuid4())}

    def size(self):
        rng = self.rng
        return {'vcpus': rng.choice([2, 4, 8, 16]),
                'memory_mb': rng.choice([2048, 4096, 8192, 16384]),
                'disk_gb': rng.choice([20, 40, 80, 160])}

    def create(self):
        kind = self.rng.choices(['host', 'capacity', 'slice', 'volume'],
                                [4, 3, 1, 2])[0]
        start, end = self.window()
        reservation = self.reservation(kind)
        body = {'name': 'lease-%d' % len(self.records),
                'start_date': lease_date(start),
                'end_date': lease_date(end),
                'reservations': [reservation], 'events': []}
        record = self.request('create', kind, 'POST', '/leases', body,
                              window=(start, end),
                              request_size=reservation)
        if record.status == 201:
            record.lease = record.response['lease']['id']
            self.leases[record.lease] = kind
            self.snapshot_lease(record)

    def update(self, lease_id):
        start, end = self.window()
        record = self.request(
            'update', self.leases[lease_id], 'PUT', '/leases/' + lease_id,
            {'start_date': lease_date(start), 'end_date': lease_date(end)},
            lease=lease_id, window=(start, end))
        if record.status == 200:
            self.snapshot_lease(record)

    def delete(self, lease_id):
        record = self.request('delete', self.leases[lease_id], 'DELETE',
                              '/leases/' + lease_id, lease=lease_id)
        if record.status == 204:
            del self.leases[lease_id]

    def propose(self):
        kind = self.rng.choices(['host', 'slice', 'volume'], [3, 1, 1])[0]
        reservation = self.reservation(kind)
        for key in ('server_id', 'volume_id', 'hypervisor_properties',
                    'resource_properties'):
            reservation.pop(key, None)
        body = {'reservations': [reservation],
                'duration': '%dm' % (30 * self.rng.randint(2, 6)),
                'not_before': lease_date(self.base),
                'not_after': lease_date(self.base +
                                        datetime.timedelta(hours=12)),
                'count': self.rng.randint(1, 3)}
        record = self.request('propose', kind, 'POST', '/leases/proposals',
                              body, request_size=reservation)
        if record.status != 201:
            return
        record.proposals = {p['id']: None
                            for p in record.response['proposals']}
        self.snapshot_proposals(record)
        if kind == 'host' and record.proposals and \
                self.rng.random() < 0.6:
            self.take(record)

    def take(self, proposed):
        first = proposed.response['proposals'][0]['id']
        body = {'name': 'lease-%d' % len(self.records),
                'proposal_id': first}
        record = self.request('create_from_proposal', 'host', 'POST',
                              '/leases', body,
                              proposals=dict(proposed.proposals))
        if record.status == 201:
            record.lease = record.response['lease']['id']
            self.leases[record.lease] = 'host'
            self.snapshot_lease(record)


def _allocation(row):
    return {'host_id': row.host_id, 'start': row.start_date,
            'end': row.end_date, 'whole': bool(row.whole_host),
            'vcpus': row.vcpus, 'memory_mb': row.memory_mb,
            'disk_gb': row.disk_gb}


def run(endpoints, engine, clients, ops, seed, base):
    """Run ``clients`` clients of ``ops`` requests each, all at once.

    :returns: every client's records, in the order each client sent them.
    """
    workers = [Client(index, endpoints, engine, base, ops, seed)
               for index in range(clients)]
    barrier = threading.Barrier(clients)

    def go(client):
        barrier.wait()
        client.run()

    threads = [threading.Thread(target=go, args=(client,), daemon=True)
               for client in workers]
    for thread in threads:
        thread.start()
    for thread in threads:
        # A hang guard: every request has its own timeout already.
        thread.join(HTTP_TIMEOUT * (ops + 1))
    return [record for client in workers for record in client.records]
