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

"""Engines killed at random while leases of every kind live in a sandbox.

Shared by ``tests/e2e/test_engine_ha.py`` (the CI size) and
``bench/engine_ha.py`` (the soak). Against a ``reservation-sandbox
--engines 0`` (its real Nova, Cinder and Placement):

- :class:`EngineSet` runs N engines of :mod:`harness.killing_engine`
  (the sandbox's ``nova.conf`` and a second file with short
  ``[reservation]`` windows) and starts a new one whenever one dies.
- :class:`EventSampler` reads the leases DB's events every
  :data:`SAMPLE_INTERVAL`: when each event was first seen under each
  claim token, so that afterwards an event's *lateness* is the time from
  its due time (or the end of its lease's previous event) to the first
  sight of the claim that finished it.
- :class:`Workload` runs lease lifecycles through the APIs, as the demo
  user, ``parallel`` at a time: ``host`` (one whole host), ``server``
  (``POST /servers`` with the ``reserved`` hint, built at the start),
  ``capacity`` (``virtual:instance`` with ``amount``, a private flavor and
  an anti-affinity server group) and ``volume`` (``POST /volumes`` with
  the ``reserved`` hint). A create that finds no room (409), or that
  took so long that its start passed (400), is tried again with a later
  window.
- :func:`nova_cinder_findings` reads what Nova, Cinder and Placement
  hold afterwards, from their APIs and their own databases, and lists
  every action that did not take effect exactly once.
"""

import collections
import contextlib
import datetime
import itertools
import json
import os
import re
import signal
import subprocess
import sys
import threading
import time

import sqlalchemy as sa

from harness import sandbox as harness_sandbox
from reservation_ext.sandbox import config
from reservation_ext.store import leases as store_leases

KINDS = ('host', 'server', 'capacity', 'volume')
SAMPLE_INTERVAL = 0.2
RECENT = datetime.timedelta(seconds=2)
# Hang guards, not performance expectations.
LEASE_TIMEOUT = 300
STOP_TIMEOUT = 60
# Seconds between a create and its lease's start: room for the API call
# (a reserved server's lease must not have started when Nova has it).
LEAD = 4
NO_ROOM_RETRY = 1.0
# A hang guard: a 409 that persists is not a lack of room for a while.
NO_ROOM_TRIES = 120
# The 400 of a create slower than LEAD (a busy machine): the start passed.
START_PASSED = 'Start date must be later than current date'
LAUNCHER = os.path.join(os.path.dirname(os.path.abspath(__file__)),
                        'killing_engine.py')
COMPUTE_VERSION = {'OpenStack-API-Version': 'compute 2.37'}
FINISHED = ('TERMINATED', 'ERROR')
# The problems that say an action took effect more or less than once.
DUPLICATE_PREFIXES = ('server', 'volume', 'aggregate', 'flavor', 'the free',
                      'Placement', 'Cinder')
EVENT_ORDER = ('start_lease', 'before_end_lease', 'end_lease')
STARTED = re.compile(r'Engine \S+:(\d+) started')
# Nova's instance event of a build on a compute host.
BUILD_EVENT = 'compute__do_build_and_run_instance'


Settings = collections.namedtuple(
    'Settings', 'lifecycles engines kill_probability parallel window '
    'claim_timeout poll_interval seed')


def run(layout, settings):
    """Run ``settings.lifecycles`` lifecycles while engines die.

    Returns the figures (a dict, one JSON line of ``bench/engine_ha.py``)
    with ``problems``: every action that did not take effect exactly
    once, every lease not TERMINATED, every event stuck.
    """
    conf = write_engine_conf(layout, settings.claim_timeout,
                             settings.poll_interval)
    prefix = 'ha%d' % time.time()
    kill_log = layout.path(prefix + '-kills.log')
    workload = Workload(layout, settings.window, settings.parallel)
    workload.make_hosts_reservable()
    baseline = nova_cinder_baseline(layout)
    engines = EngineSet(layout, [layout.path('nova.conf'), conf],
                        settings.engines, settings.kill_probability,
                        kill_log, settings.seed)
    sampler = EventSampler(layout.leases_db_url, engines.started_pids)
    try:
        engines.wait_started()
        started = time.monotonic()
        workload.run(settings.lifecycles, prefix)
        seconds = time.monotonic() - started
    finally:
        statuses = engines.stop()
        sampler.stop()
    try:
        return _figures(layout, settings, workload, engines, sampler,
                        baseline, kill_log, statuses, seconds)
    finally:
        sampler.dispose()
        workload.dispose()


def _figures(layout, settings, workload, engines, sampler, baseline,
             kill_log, statuses, seconds):
    lease_ids = {lc['lease_id'] for lc in workload.lifecycles}
    # The sampler sees an event's state every SAMPLE_INTERVAL: the idle
    # stretches it measures are that much coarser.
    bound = settings.claim_timeout + settings.poll_interval + SAMPLE_INTERVAL
    lateness = sampler.lateness(lease_ids)
    stuck = sampler.stuck(bound, lease_ids)
    outcomes = {lease_id: workload.lease_status(lease_id)
                for lease_id in lease_ids}
    counts, problems = nova_cinder_findings(
        layout, workload, reservation_ids(layout), baseline)
    problems += workload.failures
    problems += ['lease %s is %s: %s' % ((lease_id,) + outcome)
                 for lease_id, outcome in sorted(outcomes.items())
                 if outcome[0] != 'TERMINATED']
    problems += ['event %s was due with an engine idle for %.1f s' % item
                 for item in sorted(stuck.items())]
    problems += ['engine ended with status %s' % status
                 for status in engines.died_otherwise + statuses
                 if status != 0]
    return {
        'lifecycles': len(workload.lifecycles),
        'by_kind': collections.Counter(
            lc['kind'] for lc in workload.lifecycles),
        'engines': settings.engines,
        'kill_probability': settings.kill_probability,
        'kills': engines.kills,
        'kills_by_point': collections.Counter(
            point for point, _ in read_kill_log(kill_log)),
        'outcomes': collections.Counter(
            status for status, _ in outcomes.values()),
        'no_room_retries': workload.no_room,
        'slow_create_retries': workload.slow_creates,
        'nova_cinder': counts,
        'events': len(lateness),
        'stuck': len(stuck),
        'stuck_bound_s': bound,
        'max_lateness_s': round(max(lateness.values(), default=0), 2),
        'seconds': round(seconds, 1),
        'duplicates': sum(1 for problem in problems
                          if problem.startswith(DUPLICATE_PREFIXES)),
        'problems': problems,
    }


def utcnow():
    return datetime.datetime.utcnow()


def _date(moment):
    return moment.strftime('%Y-%m-%d %H:%M:%S')


def write_engine_conf(layout, claim_timeout, poll_interval):
    """A config file with the short windows of the HA runs; its path."""
    path = layout.path('engine-ha.conf')
    with open(path, 'w') as conf:
        conf.write('[reservation]\nevent_claim_timeout = %d\n'
                   'event_poll_interval = %s\nevent_batch_size = 1\n'
                   'event_retry_backoff = 0.5\n'
                   % (claim_timeout, poll_interval))
    return path


class EngineSet:
    """``count`` killing engines, each replaced by a new one when it dies.

    ``kills`` counts the engines that died of SIGKILL; ``died_otherwise``
    the exit statuses of any that ended in another way before
    :meth:`stop`. ``started_pids()`` are the engines running that have
    said they started (their claims carry ``<host>:<pid>``).
    """

    def __init__(self, layout, config_files, count, kill_probability,
                 kill_log, seed=0):
        self.layout = layout
        self.config_files = config_files
        self.kill_probability = kill_probability
        self.kill_log = kill_log
        self.seeds = itertools.count(seed * 1000)
        self.kills = 0
        self.died_otherwise = []
        self._started = set()
        self._stopping = threading.Event()
        self._lock = threading.Lock()
        self.processes = [self._start(number) for number in range(count)]
        self._watcher = threading.Thread(target=self._watch, daemon=True)
        self._watcher.start()

    def _log_path(self, number):
        return self.layout.log_path('ha-engine-%d' % number)

    def _start(self, number):
        argv = [sys.executable, LAUNCHER, self.kill_log,
                str(self.kill_probability), str(next(self.seeds))]
        for path in self.config_files:
            argv += ['--config-file', path]
        with open(self._log_path(number), 'ab') as log:
            return subprocess.Popen(argv, stdin=subprocess.DEVNULL,
                                    stdout=log, stderr=subprocess.STDOUT,
                                    cwd=self.layout.state_dir)

    def _watch(self):
        while not self._stopping.wait(SAMPLE_INTERVAL):
            with self._lock:
                for number, process in enumerate(self.processes):
                    status = process.poll()
                    if status is None or self._stopping.is_set():
                        continue
                    if status == -signal.SIGKILL:
                        self.kills += 1
                    else:
                        self.died_otherwise.append(status)
                    self.processes[number] = self._start(number)

    def started_pids(self):
        """The pids of the running engines that logged their start."""
        with self._lock:
            running = {process.pid for process in self.processes
                       if process.poll() is None}
        if not running <= self._started:
            for number in range(len(self.processes)):
                with open(self._log_path(number), errors='replace') as log:
                    self._started.update(
                        int(pid) for pid in STARTED.findall(log.read()))
        return running & self._started

    def wait_started(self):
        """Return once every engine has started (a hang guard)."""
        deadline = time.monotonic() + STOP_TIMEOUT
        while len(self.started_pids()) < len(self.processes):
            if time.monotonic() > deadline:
                raise AssertionError('the engines did not start in %d s' %
                                     STOP_TIMEOUT)
            time.sleep(SAMPLE_INTERVAL)

    def stop(self):
        """SIGTERM every engine; their exit statuses."""
        self._stopping.set()
        self._watcher.join()
        with self._lock:
            return harness_sandbox.stop_all(self.processes, STOP_TIMEOUT)


def read_kill_log(path):
    """``[(point, event id)]`` of the kills the engines logged."""
    try:
        with open(path) as log:
            return [tuple(line.split()) for line in log if line.strip()]
    except FileNotFoundError:
        return []


class EventSampler:
    """Samples the events of the leases DB every :data:`SAMPLE_INTERVAL`.

    Two measures, per event:

    - ``lateness()``: seconds from its due time (or the end of its lease's
      previous event, since a lease's events run in order) to the first
      sight of the claim that finished it: what a kill, a queue or a slow
      engine cost it;
    - ``stuck()``: the longest stretch in which an engine's claim would
      have taken it (due and ready by the claim's own rules: not yet
      claimed, or its claim expired; not held behind an end on its host
      nor waiting for its results) while an engine was idle (a started
      engine holding no live claim): what the engines' protocol
      must keep within ``event_claim_timeout + event_poll_interval``
      (plus the sampler's own :data:`SAMPLE_INTERVAL`). An
      engine reclaiming preemptible capacity, running plugins' pending
      work or starved of CPU holds no claim either, so the measure errs
      towards stuck.
    """

    def __init__(self, db_url, started_pids):
        self.engine = sa.create_engine(db_url)
        self.started_pids = started_pids
        self.first_seen = {}
        self._last_sample = datetime.datetime.min + RECENT
        self._stretch_from = {}
        self.longest_stretch = collections.Counter()
        self._stop = threading.Event()
        self._failure = None
        self._thread = threading.Thread(target=self._run, daemon=True)
        self._thread.start()

    def _run(self):
        try:
            while not self._stop.wait(SAMPLE_INTERVAL):
                self.sample()
        except Exception as exc:
            # Raised again by stop(): figures of a sampler that died
            # would count nothing as stuck.
            self._failure = exc

    def sample(self):
        pids = self.started_pids()
        seen = utcnow()
        with self.engine.connect() as conn:
            # The unfinished events, and those finished since the last
            # sample (with a margin): their final claim may be new.
            rows = conn.execute(sa.text(
                "SELECT id, lease_id, event_type, time, status, claimed_by, "
                "claim_expires_at, retry_at FROM events WHERE status NOT IN "
                "('DONE', 'ERROR') OR updated_at >= :since"),
                {'since': self._last_sample - RECENT}).all()
            # What the engines' claims would take: a start held behind an
            # end on its host, or an event that waits for its results, is
            # not theirs to take yet.
            claimable = store_leases.claimable_events(conn, seen)
        self._last_sample = seen
        for row in rows:
            if row.claimed_by is not None:
                self.first_seen.setdefault((row.id, row.claimed_by), seen)
        unfinished = [row for row in rows
                      if row.status not in ('DONE', 'ERROR')]
        busy = {_pid(row.claimed_by) for row in unfinished
                if row.status == 'IN_PROGRESS' and
                row.claim_expires_at is not None and
                _as_datetime(row.claim_expires_at) >= seen}
        idle = bool(pids - busy)
        nobodys = {row.id for row in _ready(unfinished)
                   if row.id in claimable} if idle else set()
        for event_id in list(self._stretch_from):
            if event_id not in nobodys:
                del self._stretch_from[event_id]
        for event_id in nobodys:
            since = self._stretch_from.setdefault(event_id, seen)
            self.longest_stretch[event_id] = max(
                self.longest_stretch[event_id],
                (seen - since).total_seconds())

    def stop(self):
        """Stop sampling, after one last sample.

        :raises: what made the sampling thread stop early.
        """
        self._stop.set()
        self._thread.join()
        if self._failure is not None:
            raise self._failure
        self.sample()

    def stuck(self, bound, lease_ids):
        """The events of ``lease_ids`` stuck for longer than ``bound``.

        ``{event id: seconds}`` of the events of ``lease_ids`` that were
        due and nobody's for longer than ``bound`` with an engine idle.
        """
        events = self._events(lease_ids)
        return {event_id: seconds for event_id, seconds
                in self.longest_stretch.items()
                if event_id in events and seconds > bound}

    def _events(self, lease_ids):
        with self.engine.connect() as conn:
            return {row.id: row for row in conn.execute(sa.text(
                "SELECT id, lease_id, time, claimed_by FROM events "
                "ORDER BY lease_id, time")).all()
                if row.lease_id in lease_ids}

    def lateness(self, lease_ids):
        """``{event id: seconds}`` past due before its last claim."""
        late, previous = {}, {}
        for row in self._events(lease_ids).values():
            claimed = self.first_seen.get((row.id, row.claimed_by))
            if claimed is None:
                continue
            due = _as_datetime(row.time)
            due = max(due, previous.get(row.lease_id, due))
            late[row.id] = max(0.0, (claimed - due).total_seconds())
            previous[row.lease_id] = claimed
        return late

    def dispose(self):
        self.engine.dispose()


def _pid(token):
    # A claim token is ``<host>:<pid>:<uuid>``.
    return int(token.split(':')[-2])


def _ready(unfinished):
    """The first unfinished event of each lease (they run in order)."""
    first = {}
    for row in sorted(unfinished, key=lambda row: (
            _as_datetime(row.time), EVENT_ORDER.index(row.event_type))):
        first.setdefault(row.lease_id, row)
    return first.values()


def _as_datetime(value):
    if isinstance(value, str):
        return datetime.datetime.fromisoformat(value)
    return value


class Workload:
    """Lease lifecycles of :data:`KINDS`, ``parallel`` at a time.

    ``lifecycles`` lists one dict per lease created: ``kind``, ``name``,
    ``lease_id`` and the Nova or Cinder id it is about (``server_id``,
    ``volume_id``).
    """

    def __init__(self, layout, window, parallel):
        self.layout = layout
        self.window = window
        self.parallel = parallel
        self.admin = config.session(layout)
        self.demo = config.session(layout, 'demo')
        self.leases_db = sa.create_engine(layout.leases_db_url)
        self.lifecycles = []
        self.no_room = 0
        self.slow_creates = 0
        self.failures = []
        self._lock = threading.Lock()

    def make_hosts_reservable(self):
        """Every compute host of the sandbox, once."""
        existing = {host['hypervisor_hostname'] for host in self._call(
            self.admin, 'reservation', 'GET', '/os-hosts')['hosts']}
        for name in config.host_names(self.layout):
            if name not in existing:
                self._call(self.admin, 'reservation', 'POST', '/os-hosts',
                           json={'name': name})

    def run(self, count, prefix='ha'):
        """Run ``count`` lifecycles; return once each lease is finished.

        The leases, servers and volumes are called ``<prefix>-<kind>-<n>``.
        """
        kinds = iter([KINDS[i % len(KINDS)] for i in range(count)])
        numbers = itertools.count()
        self.prefix = prefix
        threads = [threading.Thread(target=self._worker,
                                    args=(kinds, numbers))
                   for _ in range(self.parallel)]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join()

    def _worker(self, kinds, numbers):
        while True:
            with self._lock:
                kind = next(kinds, None)
                number = next(numbers)
            if kind is None:
                return
            try:
                lifecycle = self._create(kind, '%s-%s-%d' % (
                    self.prefix, kind, number))
                with self._lock:
                    self.lifecycles.append(lifecycle)
                self._wait_finished(lifecycle)
            except Exception as exc:
                with self._lock:
                    self.failures.append('%s %d: %r' % (kind, number, exc))

    def _create(self, kind, name):
        for _ in range(NO_ROOM_TRIES):
            start = utcnow() + datetime.timedelta(seconds=LEAD)
            end = start + datetime.timedelta(seconds=self.window)
            response = getattr(self, '_create_' + kind)(name, start, end)
            if response.status_code == 400 and START_PASSED in response.text:
                with self._lock:
                    self.slow_creates += 1
                continue
            if response.status_code != 409:
                break
            with self._lock:
                self.no_room += 1
            time.sleep(NO_ROOM_RETRY)
        if response.status_code >= 300:
            raise AssertionError('%s %s answered %d: %s' % (
                kind, name, response.status_code, response.text))
        body = response.json()
        lifecycle = {'kind': kind, 'name': name,
                     'lease_id': self._lease_id(name)}
        if kind == 'server':
            lifecycle['server_id'] = body['server']['id']
        if kind == 'volume':
            lifecycle['volume_id'] = body['volume']['id']
        return lifecycle

    def _lease(self, name, start, end, reservation):
        return self.demo.post('/leases', raise_exc=False, json={
            'name': name, 'start_date': _date(start),
            'end_date': _date(end), 'events': [],
            'reservations': [reservation]},
            endpoint_filter={'service_type': 'reservation'})

    def _create_host(self, name, start, end):
        return self._lease(name, start, end, {
            'resource_type': 'physical:host', 'min': 1, 'max': 1,
            'hypervisor_properties': '', 'resource_properties': ''})

    def _create_capacity(self, name, start, end):
        return self._lease(name, start, end, {
            'resource_type': 'virtual:instance', 'vcpus': 1,
            'memory_mb': 512, 'disk_gb': 1, 'amount': 1,
            'affinity': False})

    @staticmethod
    def _hint(name, start, end):
        return {'reserved': 'True', 'lease_params': json.dumps(
            {'name': name, 'start': _date(start), 'end': _date(end)})}

    def _create_server(self, name, start, end):
        return self.demo.post('/servers', raise_exc=False, json={
            'server': {'name': name, 'flavorRef': '1',
                       'imageRef': config.IMAGE_ID, 'networks': 'none'},
            'os:scheduler_hints': self._hint(name, start, end)},
            headers=COMPUTE_VERSION,
            endpoint_filter={'service_type': 'compute'})

    def _create_volume(self, name, start, end):
        return self.demo.post('/volumes', raise_exc=False, json={
            'volume': {'size': 1, 'name': name},
            'OS-SCH-HNT:scheduler_hints': self._hint(name, start, end)},
            endpoint_filter={'service_type': 'volumev3'})

    def _lease_id(self, name):
        with self.leases_db.connect() as conn:
            return conn.execute(sa.text(
                'SELECT id FROM leases WHERE name = :name'),
                {'name': name}).scalar_one()

    def _wait_finished(self, lifecycle):
        deadline = time.monotonic() + LEASE_TIMEOUT
        while self.lease_status(lifecycle['lease_id'])[0] not in FINISHED:
            if time.monotonic() > deadline:
                raise AssertionError('lease %s not finished in %d s' % (
                    lifecycle['name'], LEASE_TIMEOUT))
            time.sleep(0.5)

    def lease_status(self, lease_id):
        """``(status, status_reason)`` of a lease."""
        with self.leases_db.connect() as conn:
            return tuple(conn.execute(sa.text(
                'SELECT status, status_reason FROM leases WHERE id = :id'),
                {'id': lease_id}).one())

    @staticmethod
    def _call(session, service_type, method, path, **kwargs):
        return session.request(path, method, endpoint_filter={
            'service_type': service_type}, headers=COMPUTE_VERSION,
            **kwargs).json()

    def dispose(self):
        self.leases_db.dispose()


@contextlib.contextmanager
def _database(url):
    """A SQLAlchemy engine on ``url``, disposed of afterwards."""
    engine = sa.create_engine(url)
    try:
        yield engine
    finally:
        engine.dispose()


def _db(layout, name):
    """A sandbox service's own database (``nova_cell1``, ``cinder``...)."""
    return _database(layout.sqlite_url(name))


def _query(engine, statement, **params):
    with engine.connect() as conn:
        return conn.execute(sa.text(statement), params).all()


def nova_cinder_baseline(layout):
    """The running totals that :func:`nova_cinder_findings` compares.

    ``(aggregates Placement knows, volume quotas Cinder committed)``
    before a run, so that a sandbox may serve several runs.
    """
    with _db(layout, 'placement') as placement, \
            _db(layout, 'cinder') as cinder:
        return _aggregates_known(placement), _volume_commits(cinder)


def _aggregates_known(placement):
    return len(_query(placement, 'SELECT uuid FROM placement_aggregates'))


def _volume_commits(cinder):
    return _query(cinder, "SELECT count(*) FROM reservations WHERE "
                  "resource = 'volumes' AND delta = 1")[0][0]


def nova_cinder_findings(layout, workload, reservation_ids, baseline):
    """What Nova, Cinder and Placement show of each action, afterwards.

    Returns ``(counts, problems)``: ``counts`` of what the actions left
    (servers built, volumes created, lease aggregates made), ``problems``
    one line per action that did not take effect exactly once.

    :param reservation_ids: ``{lease id: reservation id}``
    :param baseline: :func:`nova_cinder_baseline` before the run
    """
    problems, counts = [], collections.Counter()
    by_kind = collections.defaultdict(list)
    for lifecycle in workload.lifecycles:
        by_kind[lifecycle['kind']].append(lifecycle)
    problems += _aggregate_problems(layout, workload, by_kind['host'],
                                    reservation_ids, counts, baseline[0])
    problems += _server_problems(layout, by_kind['server'], counts)
    problems += _capacity_problems(workload, by_kind['capacity'],
                                   reservation_ids)
    problems += _volume_problems(layout, by_kind['volume'], counts,
                                 baseline[1])
    return counts, problems


def _aggregate_problems(layout, workload, host_leases, reservation_ids,
                        counts, known_before):
    """Lease aggregates: gone; every host back in the free pool, alone.

    Placement keeps every aggregate a host ever joined: one more per host
    lease shows each was created once.
    """
    problems = []
    aggregates = workload._call(workload.admin, 'compute', 'GET',
                                '/os-aggregates')['aggregates']
    hosts = set(config.host_names(layout))
    for aggregate in aggregates:
        if aggregate['name'] == 'freepool':
            if set(aggregate['hosts']) != hosts:
                problems.append('the free pool holds %s, not %s' % (
                    sorted(aggregate['hosts']), sorted(hosts)))
        elif aggregate['hosts'] or aggregate['name'] in set(
                reservation_ids.values()):
            problems.append('aggregate %s is left with hosts %s' % (
                aggregate['name'], aggregate['hosts']))
    with _db(layout, 'placement') as placement:
        known = _aggregates_known(placement)
    counts['aggregates_created'] = known - known_before
    if known - known_before != len(host_leases):
        problems.append('Placement knows %d new aggregates for %d host '
                        'leases' % (known - known_before, len(host_leases)))
    return problems


def _server_problems(layout, server_leases, counts):
    """One server per lease, built once on a host, deleted at the end."""
    problems = []
    with _db(layout, 'nova_cell1') as cell:
        for lifecycle in server_leases:
            rows = _query(cell, 'SELECT deleted FROM instances WHERE uuid = '
                          ':uuid', uuid=lifecycle['server_id'])
            builds = _query(
                cell, 'SELECT e.id FROM instance_actions_events e JOIN '
                'instance_actions a ON e.action_id = a.id WHERE '
                'a.instance_uuid = :uuid AND e.event = :event',
                uuid=lifecycle['server_id'], event=BUILD_EVENT)
            counts['servers_built'] += len(builds)
            if len(rows) != 1 or not rows[0][0] or len(builds) != 1:
                problems.append('server %s of %s: %d row(s), deleted %s, '
                                'built %d time(s)' % (
                                    lifecycle['server_id'],
                                    lifecycle['name'], len(rows),
                                    rows and bool(rows[0][0]), len(builds)))
        names = _query(cell, "SELECT display_name FROM instances WHERE "
                       "deleted = 0")
        problems += ['server %s is left' % name for name, in names]
    return problems


def _capacity_problems(workload, capacity_leases, reservation_ids):
    """No flavor or server group of a capacity lease is left."""
    problems = []
    groups = workload._call(workload.admin, 'compute', 'GET',
                            '/os-server-groups?all_projects=True')[
                                'server_groups']
    left = {group['name'] for group in groups}
    for lifecycle in capacity_leases:
        reservation_id = reservation_ids[lifecycle['lease_id']]
        flavor = workload.admin.get(
            '/flavors/%s' % reservation_id, raise_exc=False,
            endpoint_filter={'service_type': 'compute'})
        if flavor.status_code != 404:
            problems.append('flavor %s of %s is left' % (
                reservation_id, lifecycle['name']))
        if 'reservation-%s' % reservation_id in left:
            problems.append('server group of %s is left' % lifecycle['name'])
    return problems


def _volume_problems(layout, volume_leases, counts, committed_before):
    """One volume per lease, created on a backend once, deleted at end.

    Cinder commits the quota of a reserved volume when the lease starts
    it (and never again for a volume that left ``reserved``): one
    committed reservation of one volume per lease.
    """
    problems = []
    with _db(layout, 'cinder') as cinder:
        for lifecycle in volume_leases:
            rows = _query(cinder, 'SELECT deleted, launched_at FROM volumes '
                          'WHERE id = :id', id=lifecycle['volume_id'])
            counts['volumes_created'] += sum(1 for row in rows if row[1])
            if len(rows) != 1 or not rows[0][0] or not rows[0][1]:
                problems.append('volume %s of %s: %s' % (
                    lifecycle['volume_id'], lifecycle['name'], rows))
        committed = _volume_commits(cinder) - committed_before
        counts['volume_quota_commits'] = committed
        if committed != len(volume_leases):
            problems.append('Cinder committed %d volume quotas for %d '
                            'volume leases' % (committed, len(volume_leases)))
    return problems


def reservation_ids(layout):
    """``{lease id: reservation id}`` of the leases DB."""
    with _database(layout.leases_db_url) as engine:
        return dict(_query(engine, 'SELECT lease_id, id FROM reservations'))
