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

"""Reserved capacity put to work: a month of leases under six policies.

    python bench/utilization.py [--hosts 100] [--days 30] [--seed 15]
                                [--warmup-days 3] [--lead-time 600]
                                [--weight-multiplier M] [--work-interval S]
                                [--policies none blazar ours-unweighted
                                            ours ours-declared-unsurveyed
                                            ours-declared
                                            ours-declared-oracle] [--jobs 2]

A trace-driven simulation over the real lease service, planner and engine
(:mod:`reservation_ext.leases.service`, :mod:`reservation_ext.planning.
planner`, :mod:`reservation_ext.engine.runner`) on an in-memory SQLite
leases DB, with a :class:`~reservation_ext.clock.ManualClock` and the
plugins built with an in-memory Nova (:class:`SimNova`, passed in as their
``clients``; the engine's reclaim acts through the same clients). Time
moves in ticks of 5 minutes; every tick:

1. the requests of the trace that arrive are made: host and instance
   leases through the lease service (the planner books them or refuses:
   ``refused_*``, and ``refused_leases`` says what each asked),
   time-bounded servers as described below;
2. the engine polls (``run_once``) when a lease event is due, until none
   is ready, and, under the ``ours`` policies, at every tick (their polls
   reclaim ahead of the starts; the other polls would find nothing to
   do). The leases start and end through the plugins and
   :class:`SimNova`, which checks that the capacity of every lease that
   starts is free (``late_starts``). The engine's own reclaim
   (:mod:`reservation_ext.engine.reclaim`, in its polls and in every
   lease start) lists the hosts' servers through :class:`SimNova` and
   deletes the preemptibles in a booking's way; :class:`SimNova` reports
   each to the simulation, which records it (:class:`Preemption`) and
   requeues its request. Under the policies that survey
   (:data:`SURVEYED`), the engine's survey of the preemptible work
   (:mod:`reservation_ext.engine.preemptible_work`, in ``run_once``)
   lists every server through :class:`SimNova` (``servers_with_hints``)
   every ``[reservation] preemptible_work_interval`` (300 s by default,
   one tick, or ``--work-interval``), after the tick's arrivals and
   before its placements and ends: a booking made at a tick misses the
   preemptibles placed at the tick before (5 minutes earlier), as a
   production engine's figures miss those placed since its last survey,
   up to an interval;
3. preemptible servers whose work is done end;
4. waiting preemptible requests are placed, first come first served, on
   the hosts the policy's placement rule allows where they fit, the host
   with the most free memory first (Nova's default spreading weigher),
   or under ``ours`` the host Nova's weighing picks (below); a request
   that finds no host waits for the next tick's pass; it waits at most
   ``PATIENCE`` and is then given up (``abandoned``).

The policies:

``none``
    Today: reservable hosts take no preemptible and no time-bounded
    server; only leases use them.
``blazar``
    Blazar's rule (:func:`blazar_allows`): preemptibles on free-pool
    hosts, that is hosts on which no booking (host lease or instance
    slice) is running; they are stopped when a booking starts on their
    host, not before: the engine reclaims in the lease's start only
    (:class:`AtStartReclaimer`), and stops only those in its way (kind to
    Blazar, whose preemptibles all go). Time-bounded servers run in the
    shared pool.
``ours-unweighted``
    Issue 15 (the ReservationFilter's rule, :func:`reservation_ext.
    planning.preemptible_placement.closed_hosts`): preemptibles on any
    reservable capacity that no active host lease holds and where no
    booking starts within ``[reservation] preemption_lead_time``; the
    engine's default reclaim stops them that long before a booking starts
    (at the next tick's poll), and in the lease's start those that landed
    since, only as many as the booking needs.
    A time-bounded server is booked by the planner as a slice of a
    reservable host for ``[now, end)`` (a one-server lease that starts
    now with an end, ``fill_gaps``), in the shared pool when none fits.
    Among the hosts that pass, the most free memory first.
``ours``
    ``ours-unweighted`` with the ReservationWeigher (issue 32): among the
    hosts that pass, Nova's weighing (:class:`NovaWeighing`: the real
    ``HostWeightHandler`` over Nova's ``RAMWeigher`` and the real
    :class:`nova_filters.reservation_weigher.ReservationWeigher`, times
    ``[reservation] preemptible_weight_multiplier``, ``--weight-
    multiplier`` or the option's default) picks the host where a server
    would run longest before a booking reclaims it.
``ours-declared-unsurveyed``
    ``ours`` where each preemptible declares how long its work runs (the
    hint ``preemptible_runtime``, the trace's work length, whole again
    after a preemption): the real :class:`nova_filters.reservation_filter.
    ReservationFilter` over the hosts passes only those whose reclaim
    comes after the work would end (:class:`NovaWeighing`), then Nova's
    weighing picks among those where it fits. The engine does not survey
    the preemptible work (``[reservation] preemptible_work_interval =
    0``): the planner books by host id, blind to the preemptibles.
``ours-declared``
    ``ours-declared-unsurveyed`` with the engine's survey (the production
    default, as under ``ours-unweighted`` and ``ours``): a booking that
    starts within ``[reservation] preemption_lead_time`` takes first the
    hosts that run no preemptible work, then those whose preemptibles
    have done least work (:mod:`reservation_ext.planning.preference`),
    by the figures of the last survey, or of the reclaim of the host.
``ours-declared-oracle``
    An *oracle experiment*, not a policy production can run: the
    scheduler tells the planner what runs where, which no feed does today.
    ``ours-declared-unsurveyed`` (the survey's order would come before
    the weight), where before each booking made to start at once (a
    host lease that starts now, a time-bounded server placed in a gap) the
    simulation writes each reservable host's extra capability
    ``preemptible_work_lost`` (:data:`ORACLE_PROPERTY`, through the host
    store's :func:`reservation_ext.store.hosts.set_capabilities`): the
    vCPU-seconds of work already done by the preemptibles that the
    engine's reclaim would stop there for it, as
    :func:`reservation_ext.planning.reclaim_choice.to_reclaim` picks them
    (all of them for a whole host; for a slice, the newest first until it
    fits). For that request only, ``[power] host_weight_property`` names
    it, so that the planner's own order of preference
    (:mod:`reservation_ext.planning.preference`) takes the hosts where the
    least work is lost first (a host without preemptibles first). A host
    lease's search is ordered by it; a gap-filling slice's search puts the
    tightest gaps first and the weight after them (the planner's
    ``tightest`` order), so there it only breaks ties. Bookings made ahead
    are searched as under ``ours-declared-unsurveyed`` (by host id). Not
    in the default ``--policies``. Its line also says how much work the values
    written promised lost on the hosts booked at once
    (``told_booked_host_lease_share``, ``told_booked_bounded_share``) and
    on the hosts that would have lost least among those the planner could
    book (``told_least_*``: the difference is what the order of the
    search costs, the tightest gaps before the weight for a slice).

The trace (:func:`generate`, ``random.Random(seed)``, seed 15 by default:
the same arguments give the same trace): four Poisson streams over the
warm-up days and the measured days (the warm-up fills the calendar; only
the measured days are counted). Times are on the tick grid; the end
dates of leases and time-bounded servers are on the hour, as people write
them. Hosts have 32 vCPUs, 128 GiB of RAM and 2,000 GB of disk; servers
and slices have the sizes of Nova's m1.small to m1.xlarge (equally
likely, 3.75 vCPUs on average, 2 GiB per vCPU: vCPUs bind). The offered
loads are shares of the reservable vCPU-hours:

* Host leases (``physical:host``), offered 50 %: 1, 2, 4, 8 or 16 hosts
  (40/25/20/10/5 %), for 4 h, 8 h, 1, 2, 3 or 7 days (20/15/35/10/10/
  10 %), 40 % starting at once, the others 1 to 72 hours later (on the
  hour). A bare-metal testbed such as Chameleon leases whole hosts for
  hours to a week, mostly one or a few at a time, often in advance;
  offering half of the host-hours leaves the sizeable idle share between
  leases that the issue is about (the share actually booked is measured,
  ``lease_share``, not assumed).
* Instance leases (``virtual:instance`` slices booked by the planner, as
  ``nova boot --hint reserved=True`` with a later start makes them),
  offered 8 %: for 4 h, 1, 3 or 7 days (30/40/20/10 %), starting 1 to
  48 hours later (on the hour).
* Time-bounded servers (a boot that starts now with an end), offered
  5 %: for 2, 8 or 24 hours (30/40/30 %).
* Preemptible servers, offered 60 %, more than the idle share: work of
  1, 6 or 24 hours (30/40/30 %). A preempted server is deleted
  (``preemptible_on_reclaim = delete``): its work so far is lost and the
  request waits again for a host, first in the queue.

The measure. ``used_share`` is the vCPU-hours used on the reservable
hosts over the vCPU-hours they have in the measured days: a host lease
uses its hosts' vCPUs from its start to its end (the booking, whatever
runs there), an instance lease or a time-bounded slice its size, a
preemptible server its size while it runs, unless it is preempted: the
work of a deleted server is lost, so its run counts in ``lost_share``
instead (the capacity was occupied, for nothing; ``lost_server_hours``
in server-hours). Its parts are ``lease_share`` (host and instance
leases), ``bounded_share`` and ``preemptible_share``; ``occupied_share``
is ``used_share`` plus ``lost_share``. ``late_starts`` counts the
bookings whose capacity was not free when the engine started them, or
that started after their start date. ``preemptions_per_start`` is the
preemptible servers the engine stopped per booking started.
``runtime_s`` is the policy's wall time. ``lost_share`` is broken down
by the booking that reclaimed the work (the one the engine named,
:class:`Preemption` ``needed_at``): ``lost_at_once_share``, made to
start at once (its start within ``[reservation] preemption_lead_time``
of its lease's creation); ``lost_known_at_boot_share``, made before the
server booted; ``lost_made_later_share``, made after, with more notice;
and by its kind, ``lost_by_host_lease_share``,
``lost_by_instance_lease_share``, ``lost_by_bounded_share``. The
engine runs the ends of one
instant before its starts; should a booking still start on a host the
instant a slice there ends, before that end ran, the ending slice's
servers count as gone (``handovers`` says how often that was needed).

Each policy runs in a process of its own, ``--jobs`` at a time. One JSON
line per policy (``work_interval_s``, the policy's survey interval, 0:
none, then ``runtime_s``, the trace's fields and ``weight_multiplier``;
the oracle's line says ``"experiment": "oracle: ..."``,
what it was told). Nothing is asserted; the unit test
(``tests/unit/test_utilization.py``) checks the behaviour on tiny traces.
"""

import argparse
import collections
import contextlib
import dataclasses
import datetime
import functools
import heapq
import json
import multiprocessing
import platform
import random
import sys
import time
import uuid

import nova.conf  # noqa: F401 - nova's options, as nova-scheduler has them
from nova import objects
from nova.scheduler import host_manager
from nova.scheduler import weights
from nova.scheduler.weights import ram
from oslo_config import cfg
import sqlalchemy as sa

from db import api as db_api
from db import models
from nova_filters import reservation_filter
from nova_filters import reservation_weigher
from reservation_ext.clients import plugin_clients
from reservation_ext import clock as clock_mod
from reservation_ext import conf as conf_mod
from reservation_ext import context
from reservation_ext import dates
from reservation_ext.engine import reclaim
from reservation_ext.engine import runner
from reservation_ext import exceptions
from reservation_ext.leases import notifications
from reservation_ext.leases import parsing as lease_requests
from reservation_ext.leases import service as lease_service
from reservation_ext.planning import host_capacity
from reservation_ext.planning import planner
from reservation_ext.planning import preemptible_placement
from reservation_ext.planning import reclaim_choice
from reservation_ext.planning import work_at_stake
from reservation_ext import plugins as plugins_mod
from reservation_ext.plugins import virtual_instance
from reservation_ext.store import hosts as store_hosts

POLICIES = ('none', 'blazar', 'ours-unweighted', 'ours',
            'ours-declared-unsurveyed', 'ours-declared')
T0 = datetime.datetime(2030, 1, 1)
TICK = datetime.timedelta(minutes=5)
HOUR = datetime.timedelta(hours=1)
PATIENCE = datetime.timedelta(hours=24)
# How far ahead the simulation reads the bookings at once.
READ_AHEAD = datetime.timedelta(hours=2)
HOST_SIZE = (32, 131072, 2000)
# (vcpus, memory_mb, disk_gb) of m1.small to m1.xlarge.
FLAVORS = ((1, 2048, 20), (2, 4096, 40), (4, 8192, 80), (8, 16384, 160))
PROJECT = 'sim-project'
HOST_LEASE = 'host'
INSTANCE_LEASE = 'instance'
BOUNDED = 'bounded'
PREEMPTIBLE = 'preemptible'


@dataclasses.dataclass(frozen=True)
class Stream:
    """One stream of requests of the trace.

    :param offered: the share of the reservable vCPU-hours it asks for.
    :param hours: ``((hours, weight), ...)``: how long each runs.
    :param hosts: ``((hosts, weight), ...)``: host leases' sizes.
    :param now_share: the share that starts at once (the others later).
    :param ahead: ``(min, max)`` hours between a request and its start.
    """

    kind: str
    offered: float
    hours: tuple
    hosts: tuple = ((0, 1),)
    now_share: float = 1.0
    ahead: tuple = (0, 0)


STREAMS = (
    Stream(HOST_LEASE, 0.50, ((4, 20), (8, 15), (24, 35), (48, 10),
                              (72, 10), (168, 10)),
           hosts=((1, 40), (2, 25), (4, 20), (8, 10), (16, 5)),
           now_share=0.4, ahead=(1, 72)),
    Stream(INSTANCE_LEASE, 0.08, ((4, 30), (24, 40), (72, 20), (168, 10)),
           now_share=0.0, ahead=(1, 48)),
    Stream(BOUNDED, 0.05, ((2, 30), (8, 40), (24, 30))),
    Stream(PREEMPTIBLE, 0.60, ((1, 30), (6, 40), (24, 30))),
)

Preemption = collections.namedtuple('Preemption',
                                    'host at needed_at server_id')
Preemption.__doc__ = """A preemptible server stopped for a booking.

``needed_at`` is when the bookings on ``host`` need its capacity.
"""

Request = collections.namedtuple('Request',
                                 'at kind start end hosts size name')
Request.__doc__ = """One request of the trace.

``at`` is when it is made; ``start`` and ``end`` the window it asks for
(a preemptible's: when it would end if it started at once; its work is
``end - start``); ``hosts`` a host lease's count; ``size`` a server's or
slice's ``(vcpus, memory_mb, disk_gb)``.
"""


# The trace.

def _mean(pairs):
    return sum(v * w for v, w in pairs) / sum(w for _v, w in pairs)


def _pick(rand, pairs):
    return rand.choices([v for v, _w in pairs], [w for _v, w in pairs])[0]


def _on_grid(moment, step=TICK):
    """``moment`` rounded up to a multiple of ``step`` after T0."""
    steps = -((T0 - moment) // step)
    return T0 + steps * step


def _rate_per_hour(stream, hosts):
    """Requests per hour that offer ``stream.offered`` of the vCPU-hours."""
    if stream.kind == HOST_LEASE:
        vcpus = HOST_SIZE[0] * _mean(stream.hosts)
    else:
        vcpus = _mean([(flavor[0], 1) for flavor in FLAVORS])
    return stream.offered * hosts * HOST_SIZE[0] / (
        _mean(stream.hours) * vcpus)


def _requests_of(rand, stream, hosts, begin, end):
    rate = _rate_per_hour(stream, hosts)
    at, made = begin, []
    while True:
        at += datetime.timedelta(hours=rand.expovariate(rate))
        if at >= end:
            return made
        made.append(_request(rand, stream, _on_grid(at), len(made)))


def _request(rand, stream, at, number):
    start = at
    if rand.random() >= stream.now_share:
        start = _on_grid(at + datetime.timedelta(
            hours=rand.uniform(*stream.ahead)), HOUR)
    end = start + datetime.timedelta(hours=_pick(rand, stream.hours))
    if stream.kind != PREEMPTIBLE:
        # An end date, as people write them: on the hour.
        end = _on_grid(end, HOUR)
    return Request(at, stream.kind, start, end, _pick(rand, stream.hosts),
                   rand.choice(FLAVORS), '%s-%06d' % (stream.kind, number))


def generate(seed, hosts, days, warmup_days):
    """The trace: every stream's requests, in the order they are made.

    Requests are made from ``warmup_days`` before :data:`T0` to ``days``
    after it.
    """
    rand = random.Random(seed)
    begin = T0 - datetime.timedelta(days=warmup_days)
    end = T0 + datetime.timedelta(days=days)
    made = []
    for stream in STREAMS:
        made += _requests_of(rand, stream, hosts, begin, end)
    order = {stream.kind: n for n, stream in enumerate(STREAMS)}
    return sorted(made, key=lambda r: (r.at, order[r.kind], r.name))


# The placement rules.

def blazar_allows(bookings, now, margin):
    """Blazar's rule: a preemptible may land on a free-pool host.

    Models blazar-nova's preemptible instances: a host is in the free pool
    when no booking (a host lease or an instance reservation) is running
    on it. ``lead`` plays no part: the preemptibles stop at the start.

    :param bookings: the host's :class:`~reservation_ext.planning.
        timelines.Allocation` tuples (``start``, ``end``, ``size``).
    """
    return not any(b.start - margin <= now < b.end + margin
                   for b in bookings)


# The oracle experiment (not a policy: not run by default), and the host
# extra capability it writes for the planner's preference.
ORACLE = 'ours-declared-oracle'
EXPERIMENTS = (ORACLE,)
ORACLE_PROPERTY = 'preemptible_work_lost'
ORACLE_TOLD = ('the scheduler told the planner what runs where: before '
               'each booking made to start at once, each host\'s '
               'preemptible work the booking would lose there')
# ours-declared without the engine's survey of the preemptible work.
UNSURVEYED = 'ours-declared-unsurveyed'
RULES = ('blazar', 'ours-unweighted', 'ours', UNSURVEYED, 'ours-declared',
         ORACLE)
# The policies whose engine reclaims ahead and that fill gaps.
OURS = ('ours-unweighted', 'ours', UNSURVEYED, 'ours-declared', ORACLE)
# The policies that place through Nova's weighing (NovaWeighing), and
# those whose preemptibles declare their runtime to the real filter.
WEIGHED = ('ours', UNSURVEYED, 'ours-declared', ORACLE)
DECLARED = 'ours-declared'
DECLARING = (UNSURVEYED, DECLARED, ORACLE)
# The policies whose engine surveys the preemptible work on the hosts
# (``[reservation] preemptible_work_interval`` as configured; 0 for the
# others): the production default. Blazar has no survey; the oracle is
# told the exact work lost instead, which the survey's order (before the
# host weight) would otherwise override.
SURVEYED = ('ours-unweighted', 'ours', DECLARED)


# The in-memory Nova.

_Server = collections.namedtuple('_Server',
                                 'id host size kind started lease_end')


class SimNova:
    """The compute API the plugins and the engine act through, in memory.

    It keeps the servers of the reservable hosts and the aggregates. It
    is where a lease's start is checked: a host lease's hosts must hold
    no other server when they join its aggregate, a reserved server must
    fit its booked host when it is built, and neither may come after the
    lease's start date. The servers of leases that end at a start's
    instant count as gone (``handovers`` counts the starts that needed it:
    the engine runs the ends of an instant first).

    The engine's reclaim (:mod:`reservation_ext.engine.reclaim`) lists a
    host's servers as Nova's 2.100 views show them: a preemptible server
    by its flavor's extra spec ``reservation:preemptible=true``, a
    reserved server with a plain flavor. A preemptible that it deletes
    (or shelves and offloads: gone from its host either way) is reported
    to ``on_preempted``, with its :class:`_Server`, after it stopped.

    :param on_preempted: called with each preemptible server the engine
        stops.
    """

    def __init__(self, clock, host_names, on_preempted):
        self.clock = clock
        self.on_preempted = on_preempted
        self.hosts = {name: HOST_SIZE for name in host_names}
        self.on_host = {name: {} for name in host_names}
        self.in_use = {name: (0, 0, 0) for name in host_names}
        self.host_of = {}
        self.aggregates = {}
        self.waiting = {}
        self.host_leases = {}
        self.late = []
        self.started = 0
        self.handovers = 0
        self.runs = []

    # What the simulation asks.

    def expect_host_lease(self, reservation_id, lease):
        """A host lease whose hosts will join aggregate ``reservation_id``.

        ``lease`` has its ``id`` and ``start_date``.
        """
        self.host_leases[reservation_id] = lease

    def expect_server(self, server_id, host, size, kind, lease):
        """A reserved server to build on ``host`` at its lease's start."""
        self.waiting[server_id] = (host, size, kind, lease)

    def boot(self, server_id, host, size):
        """Build a preemptible server on ``host`` at once."""
        self._place(_Server(server_id, host, size, PREEMPTIBLE,
                            self.clock.now(), None))

    def stop(self, server_id, lost):
        """End a server; record its run (``lost``: its work is lost).

        :returns: whether it was running.
        """
        host = self.host_of.pop(server_id, None)
        if host is None:
            return False
        server = self.on_host[host].pop(server_id)
        self.in_use[host] = tuple(
            u - s for u, s in zip(self.in_use[host], server.size))
        self.runs.append((server, self.clock.now(), lost))
        return True

    def free(self, host):
        """What the servers on ``host`` leave free, as its capacity."""
        return tuple(c - u for c, u in zip(self.hosts[host],
                                           self.in_use[host]))

    # The plugins' calls (those of reservation_ext.clients.compute).

    def find_aggregate(self, name):
        return self.aggregates.get(name)

    def ensure_aggregate(self, name, metadata=None):
        aggregate = self.aggregates.setdefault(name, {
            'id': name, 'name': name, 'hosts': [], 'metadata': {}})
        aggregate['metadata'].update(metadata or {})
        return aggregate

    def add_to_aggregate(self, aggregate, service_host, missing_ok=False):
        if service_host in aggregate['hosts']:
            return
        lease = self.host_leases.get(aggregate['name'])
        if lease is not None:
            # The whole host: nothing else may stay on it.
            self._check_start(lease, service_host, HOST_SIZE)
        aggregate['hosts'].append(service_host)

    def remove_from_aggregate(self, aggregate, service_host):
        if service_host in aggregate['hosts']:
            aggregate['hosts'].remove(service_host)

    def delete_aggregate(self, name):
        self.aggregates.pop(name, None)

    def servers_on(self, service_host):
        return [{'id': server_id} for server_id in self.on_host[service_host]]

    def servers_with_hints_on(self, service_host):
        return [_view(server)
                for server in self.on_host[service_host].values()]

    def servers_with_hints(self):
        """Every server on every host, as the engine's survey lists them."""
        return [_view(server) for servers in self.on_host.values()
                for server in servers.values()]

    def delete_servers(self, server_ids, **waits):
        for server_id in server_ids:
            self._remove(server_id)

    def shelve_offload(self, server_id, **waits):
        # Offloaded, a server leaves its host as a deleted one does.
        self._remove(server_id)

    def start_server(self, server_id, lease_id, **waits):
        host, size, kind, lease = self.waiting.pop(server_id)
        self._check_start(lease, host, size)
        self._place(_Server(server_id, host, size, kind, self.clock.now(),
                            lease['end_date']))

    def end_server(self, server_id, on_end, **waits):
        self.stop(server_id, lost=False)

    # Checks.

    def _check_start(self, lease, host, size):
        """Count a start; late if ``size`` does not fit or it is late."""
        now = self.clock.now()
        servers = self.on_host[host].values()
        staying = [s.size for s in servers
                   if s.lease_end is None or s.lease_end > now]
        capacity = self.hosts[host]
        fits = _fits(_total(staying + [size]), capacity)
        if fits and not _fits(_total([s.size for s in servers] + [size]),
                              capacity):
            self.handovers += 1
        self.started += 1
        if not fits or now > lease['start_date']:
            self.late.append(lease['id'])

    def _place(self, server):
        self.on_host[server.host][server.id] = server
        self.in_use[server.host] = tuple(
            u + s for u, s in zip(self.in_use[server.host], server.size))
        self.host_of[server.id] = server.host

    def _remove(self, server_id):
        """A server stopped through the API; a preemptible's is reported."""
        host = self.host_of.get(server_id)
        if host is None:
            return
        server = self.on_host[host][server_id]
        preempted = server.kind == PREEMPTIBLE
        # Only the engine's reclaim stops a preemptible: its work is lost.
        self.stop(server_id, lost=preempted)
        if preempted:
            self.on_preempted(server)


def _view(server):
    """Nova's 2.100 view of a server, as an admin sees it.

    The fields the reclaim and the survey read; the hypervisor hostname
    is the host's name (:func:`load_hosts` registers the hosts under the
    same hypervisor and service names).
    """
    extra_specs = ({preemptible_placement.EXTRA_SPEC: 'true'}
                   if server.kind == PREEMPTIBLE else {})
    vcpus, memory_mb, disk_gb = server.size
    return {'id': server.id, 'tenant_id': PROJECT,
            work_at_stake.HYPERVISOR: server.host,
            'created': server.started.strftime('%Y-%m-%dT%H:%M:%SZ'),
            'flavor': {'vcpus': vcpus, 'ram': memory_mb, 'disk': disk_gb,
                       'ephemeral': 0, 'swap': 0, 'extra_specs': extra_specs},
            'scheduler_hints': {}}


def _total(sizes):
    return tuple(sum(column) for column in zip((0, 0, 0), *sizes))


def _fits(used, capacity):
    return all(have <= room for have, room in zip(used, capacity))


class UnusedCinder:
    """The volume plugin's client: the trace reserves no volume."""


class AtStartReclaimer(reclaim.Reclaimer):
    """Blazar's model of preemption: preemptibles stop at the start only.

    blazar-nova kills the preemptible instances on a host when a booking
    starts there, not before. So the polls reclaim nothing ahead; the
    engine's reclaim in a lease's start (:meth:`reclaim_lease`, inherited)
    still stops those in the lease's way, and only those.
    """

    def run(self, ctx):
        """Nothing is reclaimed ahead of a start: no host, 0."""
        return 0


class NovaWeighing:
    """Nova's choice among the hosts that pass, under ``ours``.

    Under ``ours-declared`` (``declared``), the hosts first pass the real
    :class:`nova_filters.reservation_filter.ReservationFilter`, on the
    same clock and leases DB, for a request whose hint
    ``preemptible_runtime`` is the work's length.

    The real weighers, combined by Nova's own
    ``HostWeightHandler.get_weighed_objects``: each weigher's weights
    normalized over the candidate hosts, times its multiplier, summed;
    the heaviest host wins (``host_subset_size`` 1). The weighers are
    Nova's ``RAMWeigher`` (the default spreading one, ``[filter_scheduler]
    ram_weight_multiplier``) and the real
    :class:`nova_filters.reservation_weigher.ReservationWeigher`, on the
    simulation's clock and leases DB, times ``[reservation]
    preemptible_weight_multiplier``. The hosts are Nova ``HostState``
    objects (host and node: the hypervisor hostname) whose free memory is
    what :class:`SimNova` leaves; the request a real ``RequestSpec`` with
    a preemptible flavor.

    The weigher reads the global configuration, as in nova-scheduler: the
    bench's ``[reservation]`` options it reads are copied there.
    """

    SHARED_OPTIONS = ('preemption_lead_time', 'cleaning_time',
                      'preemptible_weight_multiplier',
                      'preemptible_weigher_horizon')

    def __init__(self, conf, clock, host_names, declared=False):
        for name in self.SHARED_OPTIONS:
            cfg.CONF.set_override(name, conf.reservation[name],
                                  group=conf_mod.GROUP)
        objects.register_all()
        self.handler = weights.HostWeightHandler()
        # Nova's order in weight_classes does not matter: the sum does.
        self.weighers = [ram.RAMWeigher(),
                         reservation_weigher.ReservationWeigher(clock=clock)]
        cell = str(uuid.uuid4())
        self.states = {name: host_manager.HostState(name, name, cell)
                       for name in host_names}
        self.filter = (reservation_filter.ReservationFilter(clock=clock)
                       if declared else None)
        self.specs = {}

    def choose(self, free, request):
        """The host Nova picks for ``request`` among ``free``'s, or None.

        :param free: ``{host name: free (vcpus, memory_mb, disk_gb)}``
            of the hosts the policy's rule passes; those where the
            request's size fits are the candidates (Nova's resource
            filters), and under ``ours-declared`` those the
            ReservationFilter passes.
        """
        spec = self._spec(request)
        candidates = [self.states[host] for host, room in free.items()
                      if _fits(request.size, room)]
        if self.filter is not None:
            candidates = self.filter.filter_all(candidates, spec)
        if not candidates:
            return None
        for state in candidates:
            state.free_ram_mb = free[state.nodename][1]
        weighed = self.handler.get_weighed_objects(
            self.weighers, candidates, spec)
        return weighed[0].obj.nodename

    def _spec(self, request):
        """The preemptible request's spec; one per work length."""
        runtime = (str(int(_work(request).total_seconds()))
                   if self.filter is not None else None)
        if runtime not in self.specs:
            hints = ({} if runtime is None else
                     {preemptible_placement.RUNTIME_HINT: [runtime]})
            self.specs[runtime] = objects.RequestSpec(
                project_id=PROJECT, scheduler_hints=hints,
                flavor=objects.Flavor(extra_specs={
                    preemptible_placement.EXTRA_SPEC: 'true'}))
        return self.specs[runtime]


def make_engine(policy, conf, clock, plugins, clients, power=None):
    """The policy's engine: the real one, its reclaim as the policy says.

    ``ours``, ``ours-unweighted`` and ``none`` (which has no preemptible
    to stop) the engine's default :class:`~reservation_ext.engine.
    reclaim.Reclaimer`, built from the plugins' clients; ``blazar`` an
    :class:`AtStartReclaimer`. Every engine has its default survey
    (:class:`~reservation_ext.engine.preemptible_work.WorkSurvey`, on the
    same clients), which does nothing where the policy's interval is 0
    (:func:`surveying`).
    """
    notifier = notifications.get_notifier(conf)
    reclaimer = (AtStartReclaimer(conf, clock, clients, notifier)
                 if policy == 'blazar' else None)
    return runner.Engine(conf, clock, plugins, notifier, engine_id='sim',
                         reclaimer=reclaimer, power=power)


# One policy's run.

def make_conf(lead_time=600, cleaning_time=0, weight_multiplier=None,
              work_interval=None):
    """A ConfigOpts with the project's options, as the engine reads them.

    Nova's allocation ratios are 1.0 and its host reserve 0 (registered
    here as nova.conf would set them): a booked vCPU is a host's vCPU, and
    the shares stay <= 1. ``[reservation] preemptible_on_reclaim`` keeps
    its default, ``delete``: a preempted server's work is lost.

    :param weight_multiplier: ``[reservation]
        preemptible_weight_multiplier``; None keeps the default.
    :param work_interval: ``[reservation] preemptible_work_interval``
        of the policies that survey (:data:`SURVEYED`; the others run
        with 0, :func:`surveying`); None keeps the default.
    """
    conf = cfg.ConfigOpts()
    conf_mod.register_opts(conf)
    conf.register_opts([cfg.FloatOpt('%s_allocation_ratio' % kind,
                                     default=1.0,
                                     help='Nova\'s, as nova.conf sets it.')
                        for kind in ('cpu', 'ram', 'disk')])
    # No host reserve: the in-memory Nova gives the servers whole hosts.
    conf.register_opts([cfg.IntOpt(name, default=0,
                                   help='Nova\'s, as nova.conf sets it.')
                        for name in ('reserved_host_cpus',
                                     'reserved_host_memory_mb',
                                     'reserved_host_disk_mb')])
    conf([], project='reservation-ext', default_config_files=[])
    conf.set_override('preemption_lead_time', lead_time,
                      group=conf_mod.GROUP)
    conf.set_override('cleaning_time', cleaning_time, group=conf_mod.GROUP)
    if weight_multiplier is not None:
        conf.set_override('preemptible_weight_multiplier', weight_multiplier,
                          group=conf_mod.GROUP)
    if work_interval is not None:
        conf.set_override('preemptible_work_interval', work_interval,
                          group=conf_mod.GROUP)
    return conf


@contextlib.contextmanager
def surveying(policy, conf):
    """Run ``policy`` with its ``[reservation] preemptible_work_interval``.

    The configured one under the policies that survey (:data:`SURVEYED`),
    0 (no survey, and the planner weighs no work at stake) under the
    others; the configured value is back afterwards.
    """
    interval = conf.reservation.preemptible_work_interval
    conf.set_override('preemptible_work_interval',
                      interval if policy in SURVEYED else 0,
                      group=conf_mod.GROUP)
    try:
        yield
    finally:
        conf.set_override('preemptible_work_interval', interval,
                          group=conf_mod.GROUP)


def load_hosts(engine, count):
    """``count`` reservable hosts in the leases DB; ``{id: name}``."""
    rows = [({'hypervisor_hostname': 'sim-host-%03d' % n,
              'service_name': 'sim-host-%03d' % n,
              'availability_zone': 'nova', 'vcpus': HOST_SIZE[0],
              'memory_mb': HOST_SIZE[1], 'local_gb': HOST_SIZE[2]}, {})
            for n in range(count)]
    with engine.begin() as conn:
        conn.execution_options(**{models.CLOCK: clock_mod.SYSTEM})
        ids = store_hosts.bulk_load(conn, rows)
    return {host_id: row['service_name']
            for host_id, (row, _caps) in zip(ids, rows)}


def empty_tables(engine):
    """Delete every row of the leases DB (children first)."""
    with engine.begin() as conn:
        for table in reversed(models.Base.metadata.sorted_tables):
            conn.execute(table.delete())


_ALLOCATIONS = models.HostAllocation.__table__
_RESERVATIONS = models.Reservation.__table__
_LEASES = models.Lease.__table__


class Simulation:
    """One policy over a trace, on the configured (empty) leases DB."""

    def __init__(self, policy, trace, hosts, conf, begin, end):
        self.policy = policy
        self.trace = collections.deque(trace)
        self.conf = conf
        self.begin, self.end = begin, end
        self.clock = clock_mod.ManualClock(begin)
        self.hosts = load_hosts(db_api.get_engine(), hosts)
        self.host_ids = {name: host_id
                         for host_id, name in self.hosts.items()}
        self.nova = SimNova(self.clock, self.hosts.values(), self._preempted)
        clients = plugin_clients.PluginClients(conf, nova=self.nova,
                                               cinder=UnusedCinder())
        plugins = plugins_mod.load_plugins(conf, self.clock, clients=clients)
        self.service = lease_service.LeaseService(
            conf, self.clock, plugins, notifications.get_notifier(conf))
        self.engine = make_engine(policy, conf, self.clock, plugins, clients,
                                  self.power_manager(conf, clients))
        self.ctx = context.RequestContext(
            user_id='sim-user', project_id=PROJECT,
            roles=['member', 'reader'], overwrite=False)
        self.margin = datetime.timedelta(
            minutes=conf.reservation.cleaning_time)
        self.queue = collections.deque()
        self.finishing = []
        self.counts = collections.Counter()
        self.preemptions = []
        self.requests = {}
        self.next_due = None
        self.cached = None
        # Under the oracle: {host id: the ORACLE_PROPERTY value written},
        # and the vCPU-seconds told lost on the hosts booked at once and
        # on the best hosts (_note_choice).
        self.told = {}
        self.told_lost = collections.Counter()
        # The leases the planner refused: what they asked.
        self.refused = []
        self.weighing = (NovaWeighing(conf, self.clock, self.hosts.values(),
                                      declared=policy in DECLARING)
                         if policy in WEIGHED else None)

    def power_manager(self, conf, clients):
        """The engine's power manager: None, the ``[power]`` driver's."""
        return None

    def run(self):
        """Tick from the trace's beginning to its end."""
        while self.clock.now() < self.end:
            self.tick()
            self.clock.advance(seconds=TICK.total_seconds())
        for host in self.hosts.values():
            for server_id in list(self.nova.on_host[host]):
                self.nova.stop(server_id, lost=False)

    def tick(self):
        """One step: arrivals, engine (and its reclaim), ends, placements."""
        now = self.clock.now()
        while self.trace and self.trace[0].at <= now:
            self.arrive(self.trace.popleft())
        self._run_engine(now)
        self._finish(now)
        if self.policy in RULES:
            self.place(now)

    def _run_engine(self, now):
        """Poll the engine as a real one would, skipping idle polls.

        A real engine polls every ``event_poll_interval`` seconds. Here it
        polls when a lease event is due, until none is ready, and, when its
        polls reclaim ahead of the starts (``ours``), once every tick. The
        other polls would find nothing to do: the trace has no grace
        periods and no recycling, so no pending work either.
        """
        polled = False
        while self.next_due is not None and self.next_due <= now:
            polled = True
            if not self.engine.run_once():
                # Due but not ready (a retry later): the next tick tries.
                return
            self.next_due = self._next_event()
        if not polled and self.policy in OURS:
            self.engine.run_once()

    def _next_event(self):
        """When the next undone lease event is due, or None."""
        events = models.Event.__table__
        with db_api.context_manager.reader.using(self.ctx) as session:
            return session.scalar(sa.select(sa.func.min(events.c.time)).where(
                events.c.status == 'UNDONE'))

    def _created(self, view):
        """A lease was created: its events and bookings are new."""
        start = _lease_of(view)['start_date']
        self.next_due = min(start, self.next_due or start)
        self.cached = None

    # Arrivals.

    def arrive(self, request):
        """Make ``request`` as its kind is made."""
        if request.kind == PREEMPTIBLE:
            self.counts['preemptible_requests'] += 1
            self.queue.append((request.at, request))
            return
        with self.informed(request):
            if request.kind == BOUNDED:
                self._bounded(request)
                return
            try:
                if request.kind == HOST_LEASE:
                    self._host_lease(request)
                else:
                    self._server_lease(request, request.start)
            except exceptions.NotEnoughResources:
                self.counts['refused_%s_leases' % request.kind] += 1
                self.refused.append('%s: %d host(s), %d h, %d h ahead' % (
                    request.name, request.hosts,
                    _hours(request.end - request.start),
                    _hours(request.start - request.at)))

    @contextlib.contextmanager
    def informed(self, request):
        """Under the oracle, the planner knows what each host would lose.

        For a booking ``request`` made to start at once only: each
        reservable host's :data:`ORACLE_PROPERTY` is written first
        (:meth:`_tell_work_lost`), and ``[power] host_weight_property``
        names it while the request is made, so that the planner's search
        takes the hosts in that order (the lowest first). Otherwise
        nothing changes.
        """
        if self.policy != ORACLE or request.start > self.clock.now():
            yield
            return
        self._tell_work_lost(None if request.kind == HOST_LEASE
                             else request.size)
        best = self._least_loss(request)
        self.conf.set_override('host_weight_property', ORACLE_PROPERTY,
                               group='power')
        try:
            yield
        finally:
            self.conf.clear_override('host_weight_property', group='power')
        self._note_choice(request, best)

    def _least_loss(self, request):
        """The least work any choice of hosts loses for ``request``, or None.

        Of the hosts the planner could book for it (its own searches, read
        only: every free host of a host lease, every host a slice fits
        on), the ``hosts`` that lose least, or the one for a slice. None
        when too few hosts are free.
        """
        now = self.clock.now()
        busy = planner.Busy.from_conf(now, self.conf)
        with db_api.context_manager.reader.using(self.ctx) as session:
            if request.kind == HOST_LEASE:
                hosts = [row[0] for row in planner.find_free_hosts(
                    session, now, request.end, busy)]
                wanted = request.hosts
            else:
                hosts = list(planner.slice_rooms(
                    session, now, request.end, request.size, busy,
                    host_capacity.from_nova_conf(self.conf)))
                wanted = 1
        losses = sorted(self.told[host] for host in hosts)
        return sum(losses[:wanted]) if len(losses) >= wanted else None

    def _note_choice(self, request, least):
        """Add up the work told lost on the hosts booked, and the least.

        In the measured days, for the bookings the planner made.
        """
        allocations = models.HostAllocation.__table__
        reservations = models.Reservation.__table__
        leases = models.Lease.__table__
        with db_api.context_manager.reader.using(self.ctx) as session:
            booked = session.scalars(
                sa.select(allocations.c.host_id)
                .join(reservations,
                      reservations.c.id == allocations.c.reservation_id)
                .join(leases, leases.c.id == reservations.c.lease_id)
                .where(leases.c.name == request.name)).all()
        if not booked or least is None or (
                self.clock.now() < self.measured_from):
            return
        kind = 'host_lease' if request.kind == HOST_LEASE else BOUNDED
        self.told_lost['booked_%s' % kind] += sum(
            self.told[host] for host in booked)
        self.told_lost['least_%s' % kind] += least

    def _tell_work_lost(self, size):
        """Write each host's work a booking of ``size`` would lose there.

        As the host store writes extra capabilities
        (:func:`reservation_ext.store.hosts.set_capabilities`), the hosts
        whose value changed only.
        """
        now = self.clock.now()
        changed = {}
        for host_id, name in self.hosts.items():
            value = int(self.work_lost(name, size, now))
            if self.told.get(host_id) != value:
                changed[host_id] = value
        if changed:
            with db_api.writer(self.ctx, self.clock) as session:
                for host_id, value in changed.items():
                    store_hosts.set_capabilities(
                        session, host_id, {ORACLE_PROPERTY: value})
            self.told.update(changed)

    def work_lost(self, host, size, now):
        """vCPU-seconds of work lost if a booking starts on ``host`` now.

        The work done so far by the preemptibles the engine's reclaim
        would stop there (:func:`reservation_ext.planning.reclaim_choice.
        to_reclaim`): all for a whole host (``size`` None); for a slice of
        ``size``, the newest first until it fits beside the reserved
        servers that stay.
        """
        preemptibles, needed = [], [size]
        for server in self.nova.on_host[host].values():
            if server.kind == PREEMPTIBLE:
                preemptibles.append(reclaim_choice.Server(
                    server.id, server.size, server.started))
            elif server.lease_end is None or server.lease_end > now:
                needed.append(server.size)
        return sum(server.size[0] * (now - server.created_at).total_seconds()
                   for server in reclaim_choice.to_reclaim(
                       self.nova.hosts[host], needed, preemptibles))

    def _host_lease(self, request):
        view = self.service.create(self.ctx, {
            'name': request.name, 'start_date': _date(request.start),
            'end_date': _date(request.end), 'reservations': [{
                'resource_type': 'physical:host', 'min': request.hosts,
                'max': request.hosts, 'hypervisor_properties': '',
                'resource_properties': ''}], 'events': []})
        self._created(view)
        self.nova.expect_host_lease(view['reservations'][0]['id'],
                                    _lease_of(view))

    def _server_lease(self, request, start):
        """A one-server lease booked as a slice, as nova-api makes it."""
        server_id = str(uuid.uuid4())
        now = self.clock.now()
        size = dict(zip(virtual_instance.SIZE_KEYS, request.size))
        lease = lease_requests.lease(request.name, start, request.end, None,
                                     now)
        view = self.service.create_parsed(
            self.ctx, lease_requests.with_reservation(
                lease, self.service.plugins, virtual_instance.RESOURCE_TYPE,
                dict(size, server_id=server_id, flavor_id='sim',
                     shared_pool=False, on_end='delete')))
        self._created(view)
        self.nova.expect_server(
            server_id, view['reservations'][0]['host'], request.size,
            request.kind, _lease_of(view))

    def _bounded(self, request):
        """A time-bounded server: a slice in a gap (ours) or shared pool."""
        if self.policy in OURS and self.conf.reservation.fill_gaps:
            try:
                self._server_lease(request, self.clock.now())
                self.counts['bounded_in_gaps'] += 1
                return
            except exceptions.NotEnoughResources:
                pass
        # The shared pool is not reservable capacity: nothing to count.
        self.counts['bounded_in_shared_pool'] += 1

    # Preemptibles.

    def _schedules(self, now):
        """``{host name: [Allocation]}``: the bookings Blazar's rule reads.

        At least those running now: read for the next ``READ_AHEAD``,
        again when a lease was created or that is over.
        """
        if self.cached is None or self.cached[0] <= now:
            until = now + READ_AHEAD
            with db_api.context_manager.reader.using(self.ctx) as session:
                _hosts, allocations = planner.read_schedules(
                    session, now - self.margin, until + self.margin,
                    planner.Busy(now, self.conf.reservation.cleaning_time),
                    sizes=True)
            self.cached = (until, {self.hosts[host_id]: booked
                                   for host_id, booked in allocations.items()
                                   if booked})
        return self.cached[1]

    def _preempted(self, server):
        """SimNova's report: the engine stopped a preemptible ``server``.

        Deleted, it starts its work again: its request waits for a host,
        first in the queue.
        """
        now = self.clock.now()
        self.preemptions.append(Preemption(
            server.host, now, self._reclaimed_for(server.host), server.id))
        self.queue.appendleft((now, self.requests.pop(server.id)))

    def _reclaimed_for(self, host):
        """The start the engine is reclaiming ``host`` for.

        The earliest start of the bookings on it that the engine claimed
        for this reclaim and has not recorded yet (their
        ``reclaim_claimed_until`` is set; :mod:`reservation_ext.engine.
        reclaim`): the one whose notification names it.
        """
        allocations = models.HostAllocation.__table__
        with db_api.context_manager.reader.using(self.ctx) as session:
            return session.scalar(
                sa.select(sa.func.min(allocations.c.start_date)).where(
                    allocations.c.host_id == self.host_ids[host],
                    allocations.c.reclaim_claimed_until.is_not(None),
                    allocations.c.end_date > self.clock.now()))

    def _finish(self, now):
        while self.finishing and self.finishing[0][0] <= now:
            _ends, server_id = heapq.heappop(self.finishing)
            # A preempted server is no longer there to finish.
            if self.nova.stop(server_id, lost=False):
                del self.requests[server_id]
                self.counts['preemptibles_done'] += 1

    def place(self, now):
        """Place the waiting preemptibles the rule lets land."""
        free = {host: self.nova.free(host) for host in self._open_hosts(now)}
        waiting, self.queue = self.queue, collections.deque()
        # Free capacity only shrinks here: a size (of a work length, when
        # declared) that found no host finds none later in this pass (the
        # trace has a few of each).
        unplaced = set()
        choose = self.weighing.choose if self.weighing else _spread
        for since, request in waiting:
            if now - since > PATIENCE:
                self.counts['abandoned'] += 1
                continue
            key = (request.size,
                   _work(request) if self.policy in DECLARING else None)
            host = None if key in unplaced else choose(free, request)
            if host is None:
                unplaced.add(key)
                self.queue.append((since, request))
                continue
            free[host] = tuple(f - s for f, s in zip(free[host],
                                                     request.size))
            self._boot(now, host, request)

    def _open_hosts(self, now):
        """The hosts the policy lets preemptibles land on now.

        The ``ours`` policies ask the ReservationFilter's rule
        (:func:`reservation_ext.planning.preemptible_placement.closed_hosts`).
        """
        if self.policy == 'blazar':
            schedules = self._schedules(now)
            return [host for host in self.hosts.values()
                    if blazar_allows(schedules.get(host, ()), now,
                                     self.margin)]
        with db_api.context_manager.reader.using(self.ctx) as session:
            closed = preemptible_placement.closed_hosts(
                session, now, self.conf.reservation.preemption_lead_time,
                self.conf.reservation.cleaning_time)
        return [host for host in self.hosts.values() if host not in closed]

    def _boot(self, now, host, request):
        server_id = str(uuid.uuid4())
        self.requests[server_id] = request
        ends = now + _work(request)
        self.nova.boot(server_id, host, request.size)
        heapq.heappush(self.finishing, (ends, server_id))
        self.counts['preemptible_boots'] += 1

    # The results.

    def results(self):
        """The policy's line: the shares, late starts, preemptions."""
        available = (len(self.hosts) * HOST_SIZE[0] *
                     _hours(self.end - self.measured_from))
        shares = collections.Counter()
        for kind, start, end, vcpus in self._bookings():
            shares[kind] += vcpus * self._measured_hours(start, end)
        lost, lost_server_hours = 0.0, 0.0
        # The work of a deleted preemptible is lost: not used, occupied.
        for server, stopped, was_lost in self.nova.runs:
            # Reserved servers are counted by their bookings.
            if server.kind == PREEMPTIBLE:
                hours = self._measured_hours(server.started, stopped)
                if was_lost:
                    lost += server.size[0] * hours
                    lost_server_hours += hours
                else:
                    shares[PREEMPTIBLE] += server.size[0] * hours
        line = {key: round(shares[kind] / available, 4) for key, kind in (
            ('lease_share', 'lease'), ('bounded_share', BOUNDED),
            ('preemptible_share', PREEMPTIBLE))}
        used = sum(shares.values())
        starts = self.nova.started
        line.update(
            used_share=round(used / available, 4),
            occupied_share=round((used + lost) / available, 4),
            lost_share=round(lost / available, 4),
            lost_server_hours=round(lost_server_hours, 1),
            late_starts=len(self.nova.late), lease_starts=starts,
            preemptions=len(self.preemptions),
            preemptions_per_start=round(len(self.preemptions) /
                                        max(starts, 1), 4),
            handovers=self.nova.handovers, **self._counts())
        line['refused_leases'] = self.refused
        line.update(self._lost_by_cause(available))
        if self.policy == ORACLE:
            line.update({'told_%s_share' % key: round(
                self.told_lost[key] / 3600.0 / available, 4) for key in (
                    'booked_host_lease', 'least_host_lease',
                    'booked_bounded', 'least_bounded')})
        return line

    def _lost_by_cause(self, available):
        """The lost share by the booking that reclaimed it.

        When that booking was made (at once, before the server booted,
        after it) and of what kind; see the module's docstring. A
        preemption whose booking is not found counts as ``unattributed``.
        """
        made = self._bookings_made()
        stopped_for = {p.server_id: p for p in self.preemptions}
        lead = datetime.timedelta(
            seconds=self.conf.reservation.preemption_lead_time)
        lost = collections.Counter()
        for server, stopped, was_lost in self.nova.runs:
            if not was_lost:
                continue
            vcpu_hours = server.size[0] * self._measured_hours(
                server.started, stopped)
            why = stopped_for[server.id]
            kind, created = made.get(
                (self.host_ids[why.host], why.needed_at),
                ('unattributed', None))
            if created is None:
                when = 'unattributed'
            elif why.needed_at - created <= lead:
                when = 'at_once'
            elif created <= server.started:
                when = 'known_at_boot'
            else:
                when = 'made_later'
            lost['lost_%s_share' % when] += vcpu_hours
            lost['lost_by_%s_share' % kind] += vcpu_hours
        keys = ['lost_%s_share' % when for when in (
            'at_once', 'known_at_boot', 'made_later', 'unattributed')] + [
            'lost_by_%s_share' % kind for kind in (
                'host_lease', 'instance_lease', BOUNDED, 'unattributed')]
        return {key: round(lost[key] / available, 4) for key in keys}

    def _bookings_made(self):
        """``{(host id, start): (kind, lease created_at)}`` of the bookings.

        Of several bookings that start on a host at once, the first made.
        """
        allocations, leases = _ALLOCATIONS, _LEASES
        rows = self._booking_rows(
            sa.select(allocations.c.host_id, allocations.c.start_date,
                      leases.c.name, leases.c.created_at)
            .order_by(leases.c.created_at.desc()))
        kinds = {HOST_LEASE: 'host_lease', INSTANCE_LEASE: 'instance_lease',
                 BOUNDED: BOUNDED}
        # Later rows overwrite earlier ones: the first made stays.
        return {(host, start): (kinds[name.split('-')[0]], created)
                for host, start, name, created in rows}

    def _booking_rows(self, query):
        """The rows of ``query`` over the bookings, with their leases."""
        with db_api.context_manager.reader.using(self.ctx) as session:
            return session.execute(query.select_from(
                _ALLOCATIONS.join(_RESERVATIONS, _RESERVATIONS.c.id ==
                                  _ALLOCATIONS.c.reservation_id)
                .join(_LEASES, _LEASES.c.id == _RESERVATIONS.c.lease_id))
            ).all()

    @property
    def measured_from(self):
        return max(self.begin, T0)

    def _measured_hours(self, start, end):
        return max(0.0, _hours(min(end, self.end) -
                               max(start, self.measured_from)))

    def _bookings(self):
        """``(kind, start, end, vcpus)`` of every booking of a started lease.

        A host lease's hosts count whole; a slice its size.
        """
        allocations, leases = _ALLOCATIONS, _LEASES
        rows = self._booking_rows(
            sa.select(leases.c.name, allocations.c.start_date,
                      allocations.c.end_date, allocations.c.whole_host,
                      allocations.c.vcpus)
            .where(leases.c.status != 'PENDING'))
        return [(BOUNDED if name.startswith(BOUNDED) else 'lease', start,
                 end, HOST_SIZE[0] if whole else vcpus)
                for name, start, end, whole, vcpus in rows]

    def _counts(self):
        keys = ('refused_host_leases', 'refused_instance_leases',
                'bounded_in_gaps', 'bounded_in_shared_pool',
                'preemptible_requests', 'preemptible_boots',
                'preemptibles_done', 'abandoned')
        return {key: self.counts[key] for key in keys}


def _spread(free, request):
    """The host with the most free memory that fits ``request``, or None."""
    best = None
    for host, room in free.items():
        if _fits(request.size, room) and (
                best is None or room[1] > free[best][1]):
            best = host
    return best


def _work(request):
    """How long a preemptible request's work runs, from its start."""
    return request.end - request.start


def _date(moment):
    return moment.strftime(dates.BLAZAR_DATE_FORMAT)


def _lease_of(view):
    """The lease of a view, with its start date as a datetime."""
    return {'id': view['id'], 'start_date': _parse_view_date(
        view['start_date']), 'end_date': _parse_view_date(view['end_date'])}


def _parse_view_date(text):
    return datetime.datetime.strptime(text, dates.VIEW_DATE_FORMAT)


def _hours(delta):
    return delta.total_seconds() / 3600.0


def simulate(policy, trace, hosts, days, warmup_days, conf):
    """Run one policy on the configured leases DB; its result line.

    The DB is emptied first, so that policies run one after another.
    """
    empty_tables(db_api.get_engine())
    began = time.perf_counter()
    with surveying(policy, conf):
        sim = Simulation(policy, trace, hosts, conf,
                         T0 - datetime.timedelta(days=warmup_days),
                         T0 + datetime.timedelta(days=days))
        sim.run()
        interval = conf.reservation.preemptible_work_interval
    line = {'policy': policy}
    if policy in EXPERIMENTS:
        line['experiment'] = 'oracle: %s' % ORACLE_TOLD
    line.update(sim.results())
    line['work_interval_s'] = interval
    line['runtime_s'] = round(time.perf_counter() - began, 1)
    return line, sim


def offered(trace, hosts, days, warmup_days):
    """Each stream's requested vCPU-hours over the capacity, as generated."""
    hours = {kind: 0.0 for kind in (s.kind for s in STREAMS)}
    for request in trace:
        vcpus = (request.hosts * HOST_SIZE[0] if request.kind == HOST_LEASE
                 else request.size[0])
        hours[request.kind] += vcpus * _hours(request.end - request.start)
    capacity = hosts * HOST_SIZE[0] * 24 * (days + warmup_days)
    return {'offered_%s' % kind: round(value / capacity, 3)
            for kind, value in hours.items()}


def parse_args(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split('\n')[0])
    parser.add_argument('--hosts', type=int, default=100,
                        help='reservable hosts')
    parser.add_argument('--days', type=int, default=30,
                        help='measured days')
    parser.add_argument('--warmup-days', type=int, default=3,
                        help='days of requests before the measured ones')
    parser.add_argument('--seed', type=int, default=15,
                        help='seed of the trace generator')
    parser.add_argument('--lead-time', type=int, default=600,
                        help='[reservation] preemption_lead_time (seconds)')
    parser.add_argument('--weight-multiplier', type=float,
                        help='[reservation] preemptible_weight_multiplier '
                             '(default: the option\'s)')
    parser.add_argument('--work-interval', type=int,
                        help='[reservation] preemptible_work_interval '
                             '(seconds) of the policies that survey '
                             '(default: the option\'s)')
    parser.add_argument('--policies', nargs='+',
                        choices=POLICIES + EXPERIMENTS,
                        default=list(POLICIES),
                        help='the policies to simulate (default: all but '
                             'the oracle experiment %s)' % ORACLE)
    parser.add_argument('--jobs', type=int, default=2,
                        help='policies simulated at once, each in a process '
                             'of its own')
    return parser.parse_args(argv)


def init_process():
    """Make this process ready to simulate: configuration and leases DB.

    One connection to an in-memory SQLite: a simulation is one thread.
    """
    # The lease service's policy checks read the global configuration.
    cfg.CONF([], project='reservation-ext', default_config_files=[])
    db_api.context_manager.configure(connection='sqlite://')
    models.Base.metadata.create_all(db_api.get_engine())


def run_policy(args, policy):
    """The result line of ``policy`` on the trace ``args`` describe."""
    trace = generate(args.seed, args.hosts, args.days, args.warmup_days)
    line, _sim = simulate(policy, trace, args.hosts, args.days,
                          args.warmup_days,
                          make_conf(args.lead_time,
                                    weight_multiplier=args.weight_multiplier,
                                    work_interval=args.work_interval))
    return line


def run_policies(args):
    """``{policy: line}``, the policies run by ``args.jobs`` processes.

    The ``ours`` policies, the longest, are handed out first.
    """
    order = sorted(args.policies, key=lambda policy: policy not in OURS)
    if args.jobs == 1:
        init_process()
        lines = [run_policy(args, policy) for policy in order]
    else:
        with multiprocessing.get_context('spawn').Pool(
                args.jobs, initializer=init_process) as pool:
            lines = pool.map(functools.partial(run_policy, args), order,
                             chunksize=1)
    return dict(zip(order, lines))


def main(argv=None):
    args = parse_args(argv)
    trace = generate(args.seed, args.hosts, args.days, args.warmup_days)
    fields = {'bench': 'utilization', 'hosts': args.hosts, 'days': args.days,
              'warmup_days': args.warmup_days, 'seed': args.seed,
              'tick_s': int(TICK.total_seconds()),
              'lead_time_s': args.lead_time,
              'weight_multiplier': make_conf(
                  weight_multiplier=args.weight_multiplier
              ).reservation.preemptible_weight_multiplier,
              'jobs': args.jobs,
              'db': 'sqlite', 'python': platform.python_version(),
              **offered(trace, args.hosts, args.days, args.warmup_days)}
    lines = run_policies(args)
    for policy in args.policies:
        print(json.dumps(dict(lines[policy], **fields)), flush=True)
    return 0


if __name__ == '__main__':
    sys.exit(main())
