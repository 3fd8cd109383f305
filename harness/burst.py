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

"""A burst of lease starts and ends at one instant, in a sandbox.

Against a ``reservation-sandbox --engines 0`` (its real Nova, Cinder and
Placement), as an operator and a user would, through the APIs only:

- :func:`prepare` lifts the demo project's Nova and Cinder quotas and
  makes every compute host reservable;
- :class:`Engines` runs ``reservation-engine`` processes with the
  sandbox's ``nova.conf`` and one more file that points their service
  user at a :class:`~harness.fault_proxy.FaultProxy`, through which all
  their calls go (and only theirs);
- :func:`book` creates, as the demo user, the *enders* (leases that
  started a moment ago and end at the instant T0: one whole host each on
  the hosts the starters lease next, reserved servers, one of them ending
  with ``snapshot_delete``, volumes) and the *starters* (N leases all
  starting at T0: whole hosts, reserved servers, ``virtual:instance``
  capacity, reserved volumes);
- :func:`observe` reads afterwards when each action was issued (the
  engine's calls the proxy recorded) and when it took effect (Nova's and
  Cinder's own databases), and the leases DB's outcome.
"""

import collections
import concurrent.futures
import datetime
import json
import subprocess
import time

import sqlalchemy as sa

from harness import sandbox as harness_sandbox
from reservation_ext.sandbox import config

COMPUTE_VERSION = {'OpenStack-API-Version': 'compute 2.37'}
DATE_FORMAT = '%Y-%m-%d %H:%M:%S'
CREATE_THREADS = 8
STOP_TIMEOUT = 15
# The build of a server on a compute host, in Nova's instance actions.
BUILD_EVENT = 'compute__do_build_and_run_instance'
# The start and end actions each kind of lease issues, by the engine's
# calls that carry them out: (resource, action) as Lease.key names them.
ISSUING = {
    ('host', 'start'): {'add_host'},
    ('host', 'end'): {'DELETE'},
    ('server', 'start'): {'os-reservation-start'},
    ('server', 'end'): {'DELETE'},
    # The flavor and group are made at the lease's creation: the start
    # issues nothing, its event's finish opens the flavor to boots.
    ('capacity', 'start'): set(),
    ('volume', 'start'): {'os-reservation-start'},
    ('volume', 'end'): {'os-reservation-end'},
}
# Leases that end at T0, per 100 starters, and the starters' mix.
ENDERS_PER_100 = {'server': 8, 'volume': 8}
LEASED_HOSTS = 4
STARTER_KINDS = ('server', 'capacity', 'volume')
FINISHED = ('DONE', 'ERROR')


def utcnow():
    """Naive UTC now, as the services' databases keep time."""
    return datetime.datetime.now(datetime.timezone.utc).replace(tzinfo=None)


class Lease:
    """One lease of the burst: its kind, phase at T0 and resource ids."""

    def __init__(self, kind, phase, name, resource_id=None):
        """Ids are filled in once the lease exists."""
        self.kind, self.phase, self.name = kind, phase, name
        self.resource_id = resource_id
        self.lease_id = self.reservation_id = self.host = None


def plan(count):
    """``[(kind, phase)]`` of the enders and ``count`` starters."""
    hosts = min(LEASED_HOSTS, count // 4)
    leases = [('host', 'end')] * hosts
    for kind, per_100 in ENDERS_PER_100.items():
        leases += [(kind, 'end')] * max(1, count * per_100 // 100)
    leases += [('host', 'start')] * hosts
    rest = count - hosts
    for number, kind in enumerate(STARTER_KINDS):
        leases += [(kind, 'start')] * (rest // len(STARTER_KINDS) + (
            1 if number < rest % len(STARTER_KINDS) else 0))
    return leases


class Cloud:
    """The sandbox's APIs, as its admin and its demo user."""

    def __init__(self, layout):
        """Sessions of the sandbox's admin and demo users."""
        self.layout = layout
        self.admin = config.session(layout)
        self.demo = config.session(layout, 'demo')

    def call(self, user, service_type, method, path, **kwargs):
        """Send a request as ``user``; its response (errors not raised)."""
        session = self.admin if user == 'admin' else self.demo
        headers = COMPUTE_VERSION if service_type == 'compute' else {}
        return session.request(path, method, raise_exc=False,
                               headers=headers, endpoint_filter={
                                   'service_type': service_type}, **kwargs)


def prepare(cloud):
    """Lift the quotas a burst exceeds; make the compute hosts reservable.

    As ``openstack quota set`` does, for the demo project (the window
    quotas at boot would otherwise refuse a burst over the default
    quotas; it owns the capacity leases' server groups, 10 by default)
    and for the engine's service user's project (admin here). The first
    host stays out of the reservable pool: ordinary servers need one.
    """
    for project in (cloud.demo.get_project_id(),
                    cloud.admin.get_project_id()):
        cloud.call('admin', 'compute', 'PUT', '/os-quota-sets/%s' % project,
                   json={'quota_set': {
                       'instances': -1, 'cores': -1, 'ram': -1,
                       'server_groups': -1, 'server_group_members': -1}})
        cloud.call('admin', 'volumev3', 'PUT',
                   '/os-quota-sets/%s' % project,
                   json={'quota_set': {'volumes': -1, 'gigabytes': -1,
                                       'snapshots': -1}})
    for name in config.host_names(cloud.layout)[1:]:
        cloud.call('admin', 'reservation', 'POST', '/os-hosts',
                   json={'name': name})


def _date(moment):
    """A date as the lease API and the hints take it."""
    return moment.strftime(DATE_FORMAT)


def _hints(name, start, end, on_end=None):
    """The scheduler hints of a reserved server or volume."""
    params = {'name': name, 'start': _date(start), 'end': _date(end)}
    if on_end:
        params['on_end'] = on_end
    return {'reserved': 'True', 'lease_params': json.dumps(params)}


def create(cloud, lease, start, end, on_end=None):
    """Create one lease as the demo user; fill in its resource id.

    :returns: None, or why the create failed.
    """
    if lease.kind in ('host', 'capacity'):
        reservation = ({'resource_type': 'physical:host', 'min': 1,
                        'max': 1, 'hypervisor_properties': json.dumps(
                            ['=', '$hypervisor_hostname', lease.host]),
                        'resource_properties': ''} if lease.kind == 'host'
                       else {'resource_type': 'virtual:instance',
                             'vcpus': 1, 'memory_mb': 512, 'disk_gb': 1,
                             'amount': 1, 'affinity': False})
        response = cloud.call('demo', 'reservation', 'POST', '/leases',
                              json={'name': lease.name,
                                    'start_date': _date(start),
                                    'end_date': _date(end), 'events': [],
                                    'reservations': [reservation]})
    elif lease.kind == 'server':
        response = cloud.call('demo', 'compute', 'POST', '/servers', json={
            'server': {'name': lease.name, 'flavorRef': '1',
                       'imageRef': config.IMAGE_ID, 'networks': 'none'},
            'os:scheduler_hints': _hints(lease.name, start, end, on_end)})
    else:
        response = cloud.call('demo', 'volumev3', 'POST', '/volumes', json={
            'volume': {'size': 1, 'name': lease.name},
            'OS-SCH-HNT:scheduler_hints': _hints(lease.name, start, end)})
    if response.status_code >= 300:
        return '%s %s: HTTP %d %s' % (lease.kind, lease.name,
                                      response.status_code, response.text)
    body = response.json()
    lease.resource_id = body.get(lease.kind, {}).get('id')
    return None


def book(cloud, prefix, count, t0, t1, stuck_name):
    """Create the enders, then the ``count`` starters, in parallel.

    Enders run from a moment from now to ``t0``; starters from ``t0`` to
    ``t1``. The first server ender is ``stuck_name`` and ends with
    ``snapshot_delete``. The n-th host ender and the n-th host starter
    lease the same host (the second reservable one, the third...).

    :returns: ``(leases, failures)``
    """
    leases, failures = [], []
    soon = utcnow() + datetime.timedelta(seconds=10)
    hosts = collections.Counter()
    for number, (kind, phase) in enumerate(plan(count)):
        name = '%s-%s-%s-%d' % (prefix, phase, kind, number)
        if (kind, phase) == ('server', 'end') and not any(
                lease.name == stuck_name for lease in leases):
            name = stuck_name
        leases.append(Lease(kind, phase, name))
        if kind == 'host':
            hosts[phase] += 1
            leases[-1].host = config.host_names(cloud.layout)[hosts[phase]]
    # Whole hosts first: a server booked a moment before on the same host
    # would leave it not free whole.
    batches = [(phase, first, [
        lease for lease in leases if lease.phase == phase and
        (lease.kind == 'host') == first]) for phase in ('end', 'start')
        for first in (True, False)]
    with concurrent.futures.ThreadPoolExecutor(CREATE_THREADS) as pool:
        for phase, _hosts, batch in batches:
            start, end = (soon, t0) if phase == 'end' else (t0, t1)
            failures += [failure for failure in pool.map(
                lambda lease: create(
                    cloud, lease, start, end,
                    'snapshot_delete' if lease.name == stuck_name else None),
                batch) if failure]
    _fill_ids(cloud.layout, leases)
    return leases, failures


def _fill_ids(layout, leases):
    """Each lease's and reservation's id, from the leases DB."""
    with _database(layout.leases_db_url) as engine, engine.connect() as conn:
        rows = conn.execute(sa.text(
            'SELECT l.name, l.id, r.id FROM leases l JOIN reservations r '
            'ON r.lease_id = l.id')).all()
    ids = {name: (lease_id, reservation_id)
           for name, lease_id, reservation_id in rows}
    for lease in leases:
        lease.lease_id, lease.reservation_id = ids.get(lease.name,
                                                       (None, None))


class _database:
    """A SQLAlchemy engine on a URL, disposed of on leaving."""

    def __init__(self, url):
        """Make the engine; nothing connects yet."""
        self.engine = sa.create_engine(url)

    def __enter__(self):
        """The engine."""
        return self.engine

    def __exit__(self, *exc_info):
        """Dispose of the engine's connections."""
        self.engine.dispose()


def lease_states(layout, leases):
    """``{lease id: (status, reason, {event type: (status, updated)})}``."""
    ids = [lease.lease_id for lease in leases if lease.lease_id]
    with _database(layout.leases_db_url) as engine, engine.connect() as conn:
        rows = conn.execute(sa.text(
            'SELECT id, status, status_reason FROM leases WHERE id IN '
            ':ids').bindparams(sa.bindparam('ids', expanding=True)),
            {'ids': ids}).all()
        events = conn.execute(sa.text(
            'SELECT lease_id, event_type, status, updated_at FROM events '
            'WHERE lease_id IN :ids').bindparams(
                sa.bindparam('ids', expanding=True)), {'ids': ids}).all()
    states = {row[0]: (row[1], row[2], {}) for row in rows}
    for lease_id, event_type, status, updated in events:
        states[lease_id][2][event_type] = (status, updated)
    return states


class Engines:
    """``count`` reservation-engine processes whose calls go via a proxy.

    They read the sandbox's ``nova.conf`` and ``burst-engine.conf``, which
    points ``[reservation_client] auth_url`` at the proxy's Keystone.
    """

    def __init__(self, layout, proxy, count, workers=None):
        """Write the engines' extra config file; start them.

        :param workers: their ``[reservation] engine_workers``, if given.
        """
        path = layout.path('burst-engine.conf')
        with open(path, 'w') as conf:
            conf.write('[reservation_client]\nauth_url = %s/v3\n'
                       % proxy.service_url('keystone'))
            if workers is not None:
                conf.write('[reservation]\nengine_workers = %d\n'
                           % workers)
        argv = [harness_sandbox.executable('reservation-engine'),
                '--config-file', layout.path('nova.conf'),
                '--config-file', path]
        self.processes = []
        for number in range(count):
            with open(layout.log_path('burst-engine-%d' % number),
                      'ab') as log:
                self.processes.append(subprocess.Popen(
                    argv, stdin=subprocess.DEVNULL, stdout=log,
                    stderr=subprocess.STDOUT, cwd=layout.state_dir))

    def stop(self):
        """SIGTERM each engine (SIGKILL when it lingers); their statuses."""
        return harness_sandbox.stop_all(self.processes, STOP_TIMEOUT)


def plain_boot(cloud, name, timeout):
    """Boot a server without hints; seconds until ACTIVE, or None."""
    began = time.monotonic()
    response = cloud.call('demo', 'compute', 'POST', '/servers', json={
        'server': {'name': name, 'flavorRef': '1',
                   'imageRef': config.IMAGE_ID, 'networks': 'none'}})
    if response.status_code != 202:
        return None
    path = '/servers/%s' % response.json()['server']['id']
    while time.monotonic() - began < timeout:
        status = cloud.call('demo', 'compute', 'GET', path).json()[
            'server']['status']
        if status in ('ACTIVE', 'ERROR'):
            return (round(time.monotonic() - began, 2)
                    if status == 'ACTIVE' else None)
        time.sleep(0.25)
    return None


def _query(url, statement, **params):
    """The rows of one statement on the database at ``url``."""
    with _database(url) as engine, engine.connect() as conn:
        return conn.execute(sa.text(statement), params).all()


def nova_facts(layout, server_ids):
    """``{server id: (build finish times, deleted_at)}`` from Nova's DB."""
    url = layout.sqlite_url('nova_cell1')
    builds = collections.defaultdict(list)
    for uuid, finished in _query(
            url, 'SELECT a.instance_uuid, e.finish_time FROM '
            'instance_actions_events e JOIN instance_actions a ON '
            'e.action_id = a.id WHERE e.event = :event', event=BUILD_EVENT):
        if uuid in server_ids:
            builds[uuid].append(_as_datetime(finished))
    deleted = {uuid: _as_datetime(at) for uuid, at in _query(
        url, 'SELECT uuid, deleted_at FROM instances WHERE deleted != 0')}
    return {server_id: (builds.get(server_id, []), deleted.get(server_id))
            for server_id in server_ids}


def cinder_facts(layout, volume_ids):
    """``{volume id: (launched_at, deleted_at)}`` from Cinder's DB."""
    rows = _query(layout.sqlite_url('cinder'),
                  'SELECT id, launched_at, deleted_at FROM volumes')
    return {row[0]: (_as_datetime(row[1]), _as_datetime(row[2]))
            for row in rows if row[0] in volume_ids}


def volume_commits(layout):
    """How many volume quota reservations Cinder has committed so far.

    Cinder commits a reserved volume's quota when the lease starts it,
    once: one per volume started.
    """
    return _query(layout.sqlite_url('cinder'),
                  "SELECT count(*) FROM reservations WHERE resource = "
                  "'volumes' AND delta = 1")[0][0]


def _as_datetime(value):
    """A datetime from a SQLite text column (or as it is)."""
    if isinstance(value, str):
        return datetime.datetime.fromisoformat(value)
    return value


def call_key(call, aggregates):
    """``(resource, id, action)`` of an engine call that changes something.

    ``aggregates`` maps Nova's aggregate ids to their names (reservation
    ids). None for a read or a call of no interest.
    """
    if call.method == 'GET':
        return None
    parts = call.path.strip('/').split('/')
    # Nova's and Cinder's paths begin with their version.
    kind, rest = (parts[1], parts[2:]) if len(parts) > 1 else (None, [])
    if kind == 'servers' and rest:
        return 'server', rest[0], call.action or call.method
    if kind == 'volumes' and rest:
        return 'volume', rest[0], call.action or call.method
    if kind == 'os-aggregates' and rest:
        return ('host', aggregates.get(rest[0]),
                call.action or call.method)
    if kind == 'flavors' and rest:
        return 'capacity', rest[0], call.action or call.method
    if kind == 'os-server-groups' and call.body:
        name = call.body.get('server_group', {}).get('name', '')
        return 'capacity', name[len('reservation-'):], 'server_group'
    return None


def aggregate_ids(layout):
    """``{aggregate id: name}`` of the aggregates Nova has now."""
    return {str(aggregate_id): name for aggregate_id, name in _query(
        layout.sqlite_url('nova_api'), 'SELECT id, name FROM aggregates')}


def first_answers(calls, aggregates):
    """``{(resource, id): {action: first 2xx answer}}`` of engine calls.

    ``aggregates``: :func:`aggregate_ids` before the first call. Nova
    may give a new aggregate the id of one deleted a moment ago, so an
    id means the aggregate last created with it, as the creates' answers
    say.
    """
    aggregates = dict(aggregates)
    first = collections.defaultdict(dict)
    for call in sorted(calls, key=lambda call: call.at):
        created = (call.answer or {}).get('aggregate')
        if call.path.endswith('/os-aggregates') and created:
            aggregates[str(created['id'])] = created['name']
        key = call_key(call, aggregates)
        if key is None or not 200 <= call.status < 300:
            continue
        first[key[:2]].setdefault(key[2], call.at)
    return first


def duplicate_creates(calls):
    """Creates Nova carried out more than once, by the engine's calls.

    Aggregates, flavors and server groups, by the name or id the create
    asks for.
    """
    made = collections.Counter()
    for call in calls:
        if (call.method == 'POST' and call.body and
                200 <= call.status < 300 and
                call.path.rstrip('/').rsplit('/', 1)[-1] in (
                    'os-aggregates', 'flavors', 'os-server-groups')):
            (kind, body), = call.body.items()
            made[kind, body.get('name') or body.get('id')] += 1
    return sum(count - 1 for count in made.values())


def observe(layout, leases, calls, aggregates, t0):
    """One record per lease: outcome and seconds past T0.

    ``issued``: until the engine's last call carrying out the start (or
    end) got its answer; ``usable``: until it took effect (server built
    or deleted, volume created or deleted; a host or capacity is usable
    once issued). None when it did not happen.
    """
    states = lease_states(layout, leases)
    first = first_answers(calls, aggregates)
    servers = nova_facts(layout, {lease.resource_id for lease in leases
                                  if lease.kind == 'server'})
    volumes = cinder_facts(layout, {lease.resource_id for lease in leases
                                    if lease.kind == 'volume'})
    records = []
    # A lease whose create failed is counted apart (create_failures).
    for lease in [lease for lease in leases if lease.lease_id]:
        status, reason, events = states.get(lease.lease_id,
                                            (None, None, {}))
        event = events.get(lease.phase + '_lease', (None, None))
        issued = _issued(lease, first, event[1])
        usable = _usable(lease, issued, servers, volumes)
        records.append({
            'kind': lease.kind, 'phase': lease.phase, 'status': status,
            'reason': reason, 'event': event[0], 'finished_at': event[1],
            'builds': len(servers.get(lease.resource_id, ((), None))[0]),
            'issued': _late(issued, t0), 'usable': _late(usable, t0)})
    return records


def _issued(lease, first, finished_at):
    """When the engine's last call issuing the lease's phase answered.

    For a phase that issues no call, when its event finished.
    """
    actions = ISSUING[lease.kind, lease.phase]
    if not actions:
        return finished_at
    resource = (lease.reservation_id if lease.kind in ('host', 'capacity')
                else lease.resource_id)
    answered = first.get((lease.kind, resource), {})
    if not all(action in answered for action in actions):
        return None
    return max(answered[action] for action in actions)


def _usable(lease, issued, servers, volumes):
    """When the lease's phase took effect in Nova or Cinder."""
    if lease.kind == 'server':
        builds, deleted = servers.get(lease.resource_id, ((), None))
        return (min(builds, default=None) if lease.phase == 'start'
                else deleted)
    if lease.kind == 'volume':
        launched, deleted = volumes.get(lease.resource_id, (None, None))
        return launched if lease.phase == 'start' else deleted
    return issued


def _late(moment, t0):
    """Seconds from ``t0`` to ``moment``, or None."""
    return None if moment is None else (moment - t0).total_seconds()
