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

"""Energy: the idle reservable hosts switched off, on a month of leases.

    python bench/energy.py [--hosts 100] [--days 30] [--seed 15]
                           [--warmup-days 3] [--policies noop power]
                           [--boot-s 300] [--min-off-time S]
                           [--power-on-lead-time S] [--spare-hosts N]
                           [--spare-share F]
                           [--jobs 2]

(or ``tox -e bench -- energy.py``). The month of ``bench/utilization.py``
(its trace generator, :func:`utilization.generate`, with the same
defaults) run through the same simulation (:class:`utilization.
Simulation`, policy ``none``: leases are created by the real lease
service, booked by the real planner, started and ended by the real
engine; reservable hosts run no preemptible or time-bounded server, so a
host without a booking is idle), once per power policy:

``noop``
    ``[power] driver = noop``: every host is always on.
``power``
    The real pure policy (:func:`reservation_ext.power.policy.plan`) with
    the ``[power]`` options (their defaults unless given), its hosts and
    windows read as the engine reads them
    (:func:`reservation_ext.engine.power_manager.read_hosts`, in the planner's
    order of preference), and a
    power driver named, so that the planner prefers hosts that are on
    for a window that starts within ``power_on_lead_time``.

The engine's polls on the fake clock: after the lease events of a tick
(5 minutes, as in utilization.py), the policy plans every host from the
bookings in the DB (the windows of its live allocations that end after
now, cleaning time included) and the transitions due are made at once:
``power_off`` turns the host off, ``power_on`` starts its boot, which
takes ``--boot-s`` (300 s by default, less than ``power_on_lead_time``),
after which the host is on. The states are written to
``computehosts.power_state``, where the planner reads them. A 5-minute
step is exact here, not an approximation of the engine's 10-second
poll: every booking starts and ends on the 5-minute grid (host and
instance leases on the hour, the others at a tick), and the policy's
transition times are those instants or ``power_on_lead_time`` (900 s)
before them, so a finer poll would make the same transitions at the
same instants (with other options, keep them multiples of 300 s).

The measure, over the measured days (not the warm-up): a lease starts
*late* when one of its hosts is not on at its start (``late_starts``;
``late_starts_made_ahead`` those made before their start, the others
made to start at once; ``lease_starts`` and ``lease_starts_made_now``
count every start); ``idle_host_hours`` are the reservable host-hours no
booking covers; ``host_hours_off`` those a host spent off (from its
power_off to its power_on); ``off_share_of_idle`` their ratio;
``cycles_per_host_day`` the boots (an off host switched on again) per
host and day. The power
model (stated in each line): an idle host draws ``idle_watts`` (200 W),
an off host ``off_watts`` (10 W, its BMC), a booting host
``boot_watts`` (300 W); ``kwh_idle`` is the energy of the idle host-hours
under the policy and ``kwh_saved`` what the policy saves over ``noop``'s
on the same trace (the booked host-hours draw alike under both).

One JSON line per policy. Nothing is asserted; the unit test
(``tests/unit/test_energy.py``) checks the behaviour on tiny traces.
"""

import argparse
import collections
import dataclasses
import datetime
import functools
import json
import multiprocessing
import os
import platform
import sys
import time

import sqlalchemy as sa

# Run as a script, Python puts bench/ on the path: the checkout too,
# for the packages ``bench`` and ``harness``.
sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(
    __file__))))

from bench import utilization  # noqa: E402
from db import api as db_api  # noqa: E402
from db import models  # noqa: E402
from reservation_ext.engine import power_manager  # noqa: E402
from reservation_ext.planning import planner  # noqa: E402
from reservation_ext.power import drivers  # noqa: E402
from reservation_ext.power import policy  # noqa: E402

POLICIES = ('noop', 'power')
HOSTS = models.ComputeHost.__table__
ALLOCATIONS = models.HostAllocation.__table__
LEASES = models.Lease.__table__
RESERVATIONS = models.Reservation.__table__
# The power model, in watts.
IDLE_WATTS = 200
OFF_WATTS = 10
BOOT_WATTS = 300
# A driver that switches hosts, by name: the planner then prefers hosts
# that are on near the start. The simulation switches them itself (the
# engine's power manager is given the noop driver).
SIM_DRIVER = 'simulated'


class PowerSimulation(utilization.Simulation):
    """utilization.Simulation (policy ``none``) with a power policy."""

    def __init__(self, power, trace, hosts, conf, begin, end, boot):
        super().__init__('none', trace, hosts, conf, begin, end)
        self.power = power
        self.boot = boot
        self.settings = policy.Settings.from_conf(conf)
        self.state = dict.fromkeys(self.hosts, policy.ON)
        self.up_at = {}
        # Per host: [(from, to)] spent off, booting.
        self.off = collections.defaultdict(list)
        self.booting = collections.defaultdict(list)
        self.off_since = {}
        self.late = []
        self.boots = collections.Counter()
        self.starts = collections.Counter()

    def power_manager(self, conf, clients):
        """The engine's own, idle: the simulation switches the hosts."""
        return power_manager.PowerManager(
            conf, self.clock, drivers.NoopDriver(conf), clients, None,
            'sim')

    def tick(self):
        """Boots that end, the lease events, the starts, the policy."""
        now = self.clock.now()
        for host, up in list(self.up_at.items()):
            if up <= now:
                del self.up_at[host]
                self.state[host] = policy.ON
        super().tick()
        self._check_starts(now)
        if self.power == 'power':
            self._poll_power(now)

    def _check_starts(self, now):
        """Record the leases that start now on a host that is not on.

        With whether the lease was made before its start (ahead) or to
        start at once.
        """
        late, starting = {}, {}
        with db_api.context_manager.reader.using(self.ctx) as session:
            for lease, made, host in session.execute(
                    sa.select(LEASES.c.id, LEASES.c.created_at,
                              ALLOCATIONS.c.host_id)
                    .join(RESERVATIONS, RESERVATIONS.c.id ==
                          ALLOCATIONS.c.reservation_id)
                    .join(LEASES, LEASES.c.id == RESERVATIONS.c.lease_id)
                    .where(ALLOCATIONS.c.start_date > now - utilization.TICK,
                           ALLOCATIONS.c.start_date <= now)):
                starting[lease] = made < now
                if self.state[host] != policy.ON:
                    late[lease] = made < now
        self.late += [(now, lease, ahead) for lease, ahead in late.items()]
        if now >= self.measured_from:
            self.starts.update('ahead' if ahead else 'now'
                               for ahead in starting.values())

    def _poll_power(self, now):
        """One power poll of the engine: plan, and make the due ones."""
        with db_api.context_manager.reader.using(self.ctx) as session:
            # As the engine reads them; the power state is the simulation's.
            hosts = [dataclasses.replace(reading.host,
                                         state=self.state[reading.row.id])
                     for reading in power_manager.read_hosts(
                         session, planner.Busy.from_conf(now, self.conf))]
        planned = policy.plan(hosts, now, self.settings)
        changed = {}
        for host, transition in planned.items():
            if transition is None or not transition.due(now):
                continue
            if transition.action == policy.POWER_OFF:
                self.state[host] = policy.OFF
                self.off_since[host] = now
            else:
                self.off[host].append((self.off_since.pop(host), now))
                self.booting[host].append((now, now + self.boot))
                if now >= self.measured_from:
                    self.boots[transition.reason] += 1
                self.state[host] = policy.POWERING_ON
                self.up_at[host] = now + self.boot
            changed[host] = self.state[host]
        if changed:
            with db_api.writer(self.ctx, self.clock) as session:
                for host, state in changed.items():
                    session.execute(sa.update(HOSTS).where(
                        HOSTS.c.id == host).values(power_state=state))

    def run(self):
        super().run()
        for host, since in self.off_since.items():
            self.off[host].append((since, self.end))

    def energy(self):
        """The power policy's line: off shares, late starts, energy."""
        days = utilization._hours(self.end - self.measured_from) / 24
        total = len(self.hosts) * days * 24
        booked = sum(self._covered(intervals)
                     for intervals in self._booked_by_host().values())
        idle = total - booked
        off = sum(self._covered(i) for i in self.off.values())
        boot = sum(self._covered(i) for i in self.booting.values())
        # A cycle: off, then on again (its boot).
        cycles = sum(1 for intervals in self.booting.values()
                     for start, _end in intervals
                     if start >= self.measured_from)
        late = [ahead for at, _lease, ahead in self.late
                if at >= self.measured_from]
        kwh = ((idle - off - boot) * IDLE_WATTS + off * OFF_WATTS +
               boot * BOOT_WATTS) / 1000
        return {
            'policy': self.power, 'idle_host_hours': round(idle, 1),
            'host_hours_off': round(off, 1),
            'off_share_of_idle': round(off / idle, 4) if idle else 0.0,
            'booting_host_hours': round(boot, 1),
            'late_starts': len(late), 'late_starts_made_ahead': sum(late),
            'lease_starts': sum(self.starts.values()),
            'lease_starts_made_now': self.starts['now'],
            'cycles_per_host_day': round(
                cycles / (len(self.hosts) * days), 4),
            'boots_by_reason': dict(self.boots),
            'kwh_idle': round(kwh, 1),
            'booked_share': round(booked / total, 4),
            'refused_leases': (self.counts['refused_host_leases'] +
                               self.counts['refused_instance_leases'])}

    def _covered(self, intervals):
        """Hours of the measured days in the union of ``intervals``."""
        hours, reach = 0.0, self.measured_from
        for start, end in sorted(intervals):
            start, end = max(start, reach), min(end, self.end)
            if end > start:
                hours += utilization._hours(end - start)
                reach = end
        return hours

    def _booked_by_host(self):
        """``{host: [(start, end)]}``: every booking, widened as planned."""
        booked = collections.defaultdict(list)
        with db_api.context_manager.reader.using(self.ctx) as session:
            for host, start, end in session.execute(sa.select(
                    ALLOCATIONS.c.host_id, ALLOCATIONS.c.start_date,
                    ALLOCATIONS.c.end_date).where(
                        ALLOCATIONS.c.reservation_id.is_not(None))):
                booked[host].append((start - self.margin, end + self.margin))
        return booked


def make_conf(power, **options):
    """utilization.make_conf with the ``[power]`` options of ``power``."""
    conf = utilization.make_conf()
    if power == 'power':
        conf.set_override('driver', SIM_DRIVER, group='power')
    for name, value in options.items():
        if value is not None:
            conf.set_override(name, value, group='power')
    return conf


def simulate(power, trace, hosts, days, warmup_days, conf, boot):
    """Run one power policy on the configured leases DB; its line."""
    utilization.empty_tables(db_api.get_engine())
    began = time.perf_counter()
    sim = PowerSimulation(power, trace, hosts, conf,
                          utilization.T0 - datetime.timedelta(
                              days=warmup_days),
                          utilization.T0 + datetime.timedelta(days=days),
                          boot)
    sim.run()
    line = sim.energy()
    line['runtime_s'] = round(time.perf_counter() - began, 1)
    return line, sim


def with_savings(lines):
    """Add ``kwh_saved`` (over ``noop``) to each line, when noop ran."""
    if 'noop' in lines:
        for line in lines.values():
            line['kwh_saved'] = round(lines['noop']['kwh_idle'] -
                                      line['kwh_idle'], 1)
    return lines


def parse_args(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split('\n')[0])
    parser.add_argument('--hosts', type=int, default=100)
    parser.add_argument('--days', type=int, default=30)
    parser.add_argument('--warmup-days', type=int, default=3)
    parser.add_argument('--seed', type=int, default=15)
    parser.add_argument('--policies', nargs='+', choices=POLICIES,
                        default=list(POLICIES))
    parser.add_argument('--boot-s', type=int, default=300,
                        help='seconds from power_on until a host is on')
    for option in ('min_off_time', 'power_on_lead_time', 'spare_hosts'):
        parser.add_argument('--' + option.replace('_', '-'), type=int,
                            help='[power] %s (default: its default)'
                                 % option)
    parser.add_argument('--spare-share', type=float,
                        help='[power] spare_share (default: its default)')
    parser.add_argument('--jobs', type=int, default=2)
    return parser.parse_args(argv)


def options(args):
    return {'min_off_time': args.min_off_time,
            'power_on_lead_time': args.power_on_lead_time,
            'spare_hosts': args.spare_hosts,
            'spare_share': args.spare_share}


def run_policy(args, power):
    """The line of ``power`` on the trace ``args`` describe."""
    trace = utilization.generate(args.seed, args.hosts, args.days,
                                 args.warmup_days)
    conf = make_conf(power, **options(args))
    line, _sim = simulate(power, trace, args.hosts, args.days,
                          args.warmup_days, conf,
                          datetime.timedelta(seconds=args.boot_s))
    line.update({'min_off_time_s': conf.power.min_off_time,
                 'power_on_lead_time_s': conf.power.power_on_lead_time,
                 'spare_hosts': conf.power.spare_hosts,
                 'spare_share': conf.power.spare_share})
    return line


def main(argv=None):
    args = parse_args(argv)
    fields = {'bench': 'energy', 'hosts': args.hosts, 'days': args.days,
              'warmup_days': args.warmup_days, 'seed': args.seed,
              'step_s': int(utilization.TICK.total_seconds()),
              'boot_s': args.boot_s, 'idle_watts': IDLE_WATTS,
              'off_watts': OFF_WATTS, 'boot_watts': BOOT_WATTS,
              'db': 'sqlite', 'python': platform.python_version()}
    if args.jobs == 1:
        utilization.init_process()
        lines = [run_policy(args, power) for power in args.policies]
    else:
        with multiprocessing.get_context('spawn').Pool(
                args.jobs, initializer=utilization.init_process) as pool:
            lines = pool.map(functools.partial(run_policy, args),
                             args.policies, chunksize=1)
    lines = with_savings(dict(zip(args.policies, lines)))
    for power in args.policies:
        print(json.dumps(dict(lines[power], **fields)), flush=True)
    return 0


if __name__ == '__main__':
    sys.exit(main())
