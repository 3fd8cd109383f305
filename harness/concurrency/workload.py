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

"""Concurrent clients of the leases, and the history they record.

Each client is a thread of its own project (:mod:`.cloud`) that sends a
seeded random sequence of requests over HTTP: lease creates (whole hosts
and ``virtual:instance`` capacity with ``amount`` through the lease API,
one of its processes per client; one server through nova-api, booted with the
``reserved`` and ``lease_params`` hints in one of Nova's flavors; one
volume through cinder-api, with the same hints), window updates and
deletes of any of its leases through the lease API, and schedule
proposals (hosts, then often the lease of the first one; servers and
volumes, left to expire). Windows are a few hours inside one day, so
that they overlap a lot.

Every request becomes a :class:`Record`: what was sent, the wall-clock
send and receive times (``time.time()``, the clock the services' rows are
stamped with, on the same machine), the status and body. After a request
that changed the client's own allocations, the client reads them with
plain SQL (``snapshot``): only the client acts on its leases and
proposals, so what it reads is exactly what the request left.
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

from harness.concurrency import checker

# A hang guard: under load a request waits for locks (and retries) long.
HTTP_TIMEOUT = 300
# Boots without a network (2.37).
COMPUTE_VERSION = 'compute 2.37'
# Nova's and Cinder's answer to a create they accepted.
ACCEPTED = 202

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
# The lease a server create made: Nova's create answer does not name it.
_SERVER_LEASE = checker.plain_sql(
    'SELECT r.lease_id FROM instance_reservations i JOIN reservations r '
    'ON i.reservation_id = r.id WHERE i.server_id = :server_id')
_PROPOSAL = checker.plain_sql(
    'SELECT start_date, end_date, volume_gb, expires_at FROM proposals '
    'WHERE id = :proposal_id')


@dataclasses.dataclass
class Record:
    """One request and what came of it.

    ``kind``: ``host``, ``capacity``, ``slice``, ``volume`` (of a lease or
    a proposals request). ``lease``: the lease id the request acted on or
    made; ``resource``: the server or volume a create made.
    ``allocations``: after a success, the host allocations of the lease
    (or of every proposal made), as dicts with ``host_id``, ``start``,
    ``end``, ``whole``, ``vcpus``, ``memory_mb``, ``disk_gb`` (and
    ``proposal``); ``volumes``: its volume capacity, as dicts with
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
    resource: str = None
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
    """One project's client: ``ops`` requests, one after the other.

    :param cloud: a :class:`harness.concurrency.cloud.Cloud`.
    :param volume_unit: volumes are 2 to 10 times this many GB.
    """

    def __init__(self, index, cloud, engine, base, ops, seed, volume_unit):
        self.index = index
        self.cloud = cloud
        self.project, self.token = cloud.credentials[index]
        self.engine = engine
        self.base = base
        self.ops = ops
        self.volume_unit = volume_unit
        self.rng = random.Random('%s-%d' % (seed, index))
        self.records = []
        # lease id -> kind, of the leases this client has.
        self.leases = {}

    # HTTP

    def call(self, method, url, body=None, headers=()):
        """``(status, json or None, send, receive)`` of one request."""
        endpoint = urllib.parse.urlsplit(url)
        headers = dict(headers, **{'X-Auth-Token': self.token,
                                   'Accept': 'application/json'})
        data = None
        if body is not None:
            data = json.dumps(body).encode()
            headers['Content-Type'] = 'application/json'
        connection = http.client.HTTPConnection(
            endpoint.hostname, endpoint.port, timeout=HTTP_TIMEOUT)
        send = time.time()
        try:
            connection.request(method, endpoint.path, data, headers)
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

    def lease_api(self, path):
        """The URL of ``path`` on this client's lease API process.

        The clients are spread over the processes, each keeping to one
        (as a client's connection to a load balancer would), so that each
        process's keystonemiddleware validates a token once.
        """
        apis = self.cloud.lease_apis
        return apis[self.index % len(apis)] + path

    def request(self, op, kind, method, url, body=None, headers=(),
                **fields):
        status, payload, send, receive = self.call(method, url, body,
                                                   headers)
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
            if choice < 0.45 or (choice < 0.8 and not self.leases):
                self.create()
            elif choice < 0.65:
                self.update(self.rng.choice(sorted(self.leases)))
            elif choice < 0.8:
                self.delete(self.rng.choice(sorted(self.leases)))
            else:
                self.propose()

    def window(self, hours=(1, 4)):
        start = self.base + datetime.timedelta(
            minutes=30 * self.rng.randrange(0, 20))
        return start, start + datetime.timedelta(
            minutes=30 * self.rng.randrange(2 * hours[0], 2 * hours[1] + 1))

    def reservation(self, kind):
        """A lease API reservation of a proposals request.

        Of kind ``host``, ``capacity``, ``slice`` or ``volume``.
        """
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
            return dict(self.size(), resource_type='virtual:instance')
        return {'resource_type': 'virtual:volume',
                'size_gb': self.volume_size()}

    def size(self):
        rng = self.rng
        return {'vcpus': rng.choice([2, 4, 8, 16]),
                'memory_mb': rng.choice([2048, 4096, 8192, 16384]),
                'disk_gb': rng.choice([20, 40, 80, 160])}

    def volume_size(self):
        return self.volume_unit * self.rng.randint(2, 10)

    def create(self):
        kind = self.rng.choices(['host', 'capacity', 'slice', 'volume'],
                                [4, 3, 1, 2])[0]
        start, end = self.window()
        name = 'lease-%d' % len(self.records)
        record = getattr(self, '_create_' + kind)(name, start, end)
        if record.status in (201, ACCEPTED):
            self.leases[record.lease] = kind
            self.snapshot_lease(record)

    def _create_lease(self, kind, name, start, end):
        reservation = self.reservation(kind)
        body = {'name': name, 'start_date': lease_date(start),
                'end_date': lease_date(end), 'reservations': [reservation],
                'events': []}
        record = self.request('create', kind, 'POST',
                              self.lease_api('/leases'), body,
                              window=(start, end), request_size=reservation)
        if record.status == 201:
            record.lease = record.response['lease']['id']
        return record

    def _create_host(self, name, start, end):
        return self._create_lease('host', name, start, end)

    def _create_capacity(self, name, start, end):
        return self._create_lease('capacity', name, start, end)

    @staticmethod
    def _hints(name, start, end):
        return {'reserved': 'True', 'lease_params': json.dumps(
            {'name': name, 'start': lease_date(start),
             'end': lease_date(end)})}

    def _create_slice(self, name, start, end):
        """``nova boot`` of a server reserved for the window."""
        flavor = self.rng.choice(self.cloud.flavors)
        body = {'server': {'name': name, 'flavorRef': flavor['id'],
                           'imageRef': self.cloud.image,
                           'networks': 'none'},
                'os:scheduler_hints': self._hints(name, start, end)}
        record = self.request(
            'create', 'slice', 'POST', self.cloud.compute + '/servers', body,
            {'OpenStack-API-Version': COMPUTE_VERSION}, window=(start, end),
            request_size={'vcpus': flavor['vcpus'],
                          'memory_mb': flavor['ram'],
                          'disk_gb': flavor['disk']})
        if record.status == ACCEPTED:
            record.resource = record.response['server']['id']
            with self.engine.connect() as conn:
                record.lease = conn.execute(_SERVER_LEASE, {
                    'server_id': record.resource}).scalar_one()
        return record

    def _create_volume(self, name, start, end):
        """``cinder create`` of a volume reserved for the window."""
        size = self.volume_size()
        body = {'volume': {'name': name, 'size': size},
                'OS-SCH-HNT:scheduler_hints': self._hints(name, start, end)}
        record = self.request(
            'create', 'volume', 'POST', self.cloud.volume + '/volumes', body,
            window=(start, end), request_size={'size_gb': size})
        if record.status == ACCEPTED:
            volume = record.response['volume']
            record.resource = volume['id']
            record.lease = volume['metadata']['reservation:lease_id']
        return record

    def update(self, lease_id):
        start, end = self.window()
        record = self.request(
            'update', self.leases[lease_id], 'PUT',
            self.lease_api('/leases/' + lease_id),
            {'start_date': lease_date(start), 'end_date': lease_date(end)},
            lease=lease_id, window=(start, end))
        if record.status == 200:
            self.snapshot_lease(record)

    def delete(self, lease_id):
        record = self.request('delete', self.leases[lease_id], 'DELETE',
                              self.lease_api('/leases/' + lease_id),
                              lease=lease_id)
        if record.status == 204:
            del self.leases[lease_id]

    def propose(self):
        kind = self.rng.choices(['host', 'slice', 'volume'], [3, 1, 1])[0]
        reservation = self.reservation(kind)
        for key in ('hypervisor_properties', 'resource_properties'):
            reservation.pop(key, None)
        body = {'reservations': [reservation],
                'duration': '%dm' % (30 * self.rng.randint(2, 6)),
                'not_before': lease_date(self.base),
                'not_after': lease_date(self.base +
                                        datetime.timedelta(hours=12)),
                'count': self.rng.randint(1, 3)}
        record = self.request('propose', kind, 'POST',
                              self.lease_api('/leases/proposals'), body,
                              request_size=reservation)
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
                              self.lease_api('/leases'), body,
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


def run(cloud, engine, clients, ops, seed, base, volume_unit):
    """Run ``clients`` clients of ``ops`` requests each, all at once.

    :returns: every client's records, in the order each client sent them.
    """
    workers = [Client(index, cloud, engine, base, ops, seed, volume_unit)
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
