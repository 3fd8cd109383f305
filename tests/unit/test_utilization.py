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

"""The utilization simulation (bench/utilization.py) on tiny traces.

What it must show whatever the timings: no lease starts late under any
policy; the engine's reclaim stops preemptible servers only for a booking
that starts on their host, within the lead time (``ours``,
``ours-unweighted``) or at the start (``blazar``), and the stopped
servers' requests wait again; each policy uses at least what the one
before it does; ``ours`` places through Nova's weighing with the real
ReservationWeigher, times the configured multiplier; under
``ours-declared`` the real ReservationFilter passes a preemptible only
where its work ends before a reclaim, and it waits until there is one;
under ``ours-declared`` the engine's survey of the preemptible work
(the real one, listing every server of the in-memory Nova) runs at
every tick, so that a booking made to start at once takes a host that
runs no preemptible work first, where ``ours-declared-unsurveyed`` (the
survey off) takes the lowest id; under the oracle experiment
``ours-declared-oracle`` such a booking takes the host where it loses
the least preemptible work (the planner's own host weight), and the lost
work is told apart by the booking that reclaimed it.
"""

import datetime

import sqlalchemy as sa

from bench import utilization
from db import api as db_api
from db import models
from reservation_ext import clock as clock_mod
from reservation_ext.engine import preemptible_work
from reservation_ext.planning import preemptible_placement
from reservation_ext.planning import work_at_stake
from tests import base

T0 = utilization.T0
HOUR = datetime.timedelta(hours=1)
LARGE = (8, 16384, 160)
WHOLE = utilization.HOST_SIZE
MEDIUM = (4, 8192, 80)


def request(kind, at, start, hours, size=LARGE, hosts=0, n=0):
    """A request of the trace, times in hours after T0."""
    start = T0 + start * HOUR
    return utilization.Request(T0 + at * HOUR, kind, start,
                               start + hours * HOUR, hosts, size,
                               '%s-%d' % (kind, n))


def tiny_trace():
    """Three hosts, one day; the hours after T0 are in the comments.

    An instance lease's slice runs on the first host from 1 to 13; ten
    preemptible servers of 8 vCPUs arrive at 2, when only that slice
    runs; a host lease takes another host from 6 to 10; a time-bounded
    server of 4 vCPUs asks for 12 to 16.
    """
    return sorted([
        request(utilization.INSTANCE_LEASE, 0, 1, 12),
        request(utilization.HOST_LEASE, 0, 6, 4, hosts=1),
        request(utilization.BOUNDED, 12, 12, 4, size=MEDIUM),
    ] + [request(utilization.PREEMPTIBLE, 2, 2, 20, n=n)
         for n in range(10)])


class UtilizationTest(base.DBTestCase):

    def setUp(self):
        super().setUp()
        self.conf = utilization.make_conf()

    def _run(self, trace, hosts=3, days=1, warmup_days=0):
        results = {}
        for policy in utilization.POLICIES:
            line, sim = utilization.simulate(policy, trace, hosts, days,
                                             warmup_days, self.conf)
            results[policy] = line, sim, self._bookings()
        return results

    def _bookings(self):
        """``{host name: [(start, end)]}`` of the run's bookings."""
        allocations = models.HostAllocation.__table__
        hosts = models.ComputeHost.__table__
        with db_api.context_manager.reader.using(self.ctx) as session:
            rows = session.execute(sa.select(
                hosts.c.service_name, allocations.c.start_date,
                allocations.c.end_date).join(
                    hosts, hosts.c.id == allocations.c.host_id)).all()
        booked = {}
        for host, start, end in rows:
            booked.setdefault(host, []).append((start, end))
        return booked

    def test_no_lease_starts_late_under_any_policy(self):
        results = self._run(tiny_trace())
        for policy, (line, _sim, _booked) in results.items():
            self.assertEqual(0, line['late_starts'], policy)
        # The host and instance leases; the ours policies also book the
        # time-bounded server, which starts as a lease too.
        self.assertEqual([2, 2, 3, 3, 3, 3], [
            results[policy][0]['lease_starts']
            for policy in utilization.POLICIES])

    def test_preemptibles_stop_only_for_a_booking_starting_on_their_host(
            self):
        results = self._run(tiny_trace())
        self.assertEqual(0, results['none'][0]['preemptions'])
        lead = datetime.timedelta(seconds=600)
        for policy, ahead in (('blazar', datetime.timedelta(0)),
                              ('ours-unweighted', lead), ('ours', lead)):
            _line, sim, booked = results[policy]
            self.assertTrue(sim.preemptions, policy)
            for stopped in sim.preemptions:
                self.assertIn(stopped.needed_at,
                              [start for start, _end in booked[stopped.host]],
                              policy)
                self.assertLessEqual(stopped.at, stopped.needed_at)
                self.assertLessEqual(stopped.needed_at - stopped.at, ahead)
        # Declared, their 20 hours of work go where no booking comes.
        for policy in (utilization.UNSURVEYED, utilization.DECLARED):
            self.assertEqual(0, results[policy][0]['preemptions'])

    def test_ours_engine_reclaims_ahead_of_the_start_and_blazars_at_it(self):
        results = self._run(tiny_trace())
        for policy in ('ours-unweighted', 'ours'):
            ahead = [stopped.needed_at - stopped.at
                     for stopped in results[policy][1].preemptions]
            # The host lease at 6: its host is reclaimed by a poll at 5:50.
            self.assertIn(datetime.timedelta(seconds=600), ahead, policy)
        self.assertEqual({datetime.timedelta(0)}, {
            stopped.needed_at - stopped.at
            for stopped in results['blazar'][1].preemptions})

    def test_a_preempted_servers_request_waits_for_a_host_again(self):
        results = self._run(tiny_trace())
        for policy in ('blazar', 'ours-unweighted', 'ours'):
            line = results[policy][0]
            self.assertGreater(line['preemptions'], 0, policy)
            # The host lease's host is back at 10: they boot again.
            self.assertEqual(
                line['preemptible_requests'] + line['preemptions'],
                line['preemptible_boots'], policy)
            self.assertGreater(line['lost_share'], 0, policy)

    def test_sim_nova_shows_preemptibles_by_their_flavor_as_nova_does(self):
        stopped = []
        nova = utilization.SimNova(clock_mod.ManualClock(T0), ['h1'],
                                   stopped.append)
        nova.boot('spot', 'h1', MEDIUM)
        nova.expect_server('booked', 'h1', LARGE, utilization.INSTANCE_LEASE,
                           {'id': 'lease', 'start_date': T0,
                            'end_date': T0 + HOUR})
        nova.start_server('booked', 'lease')
        views = {view['id']: view for view in nova.servers_with_hints_on('h1')}
        self.assertEqual({'spot': True, 'booked': False}, {
            server_id: preemptible_placement.is_preemptible(
                view['flavor']['extra_specs'], view['scheduler_hints'])
            for server_id, view in views.items()})
        self.assertEqual((4, 8192, 80), tuple(
            views['spot']['flavor'][key] for key in ('vcpus', 'ram', 'disk')))
        nova.delete_servers(['spot', 'booked'])
        self.assertEqual(['spot'], [server.id for server in stopped])
        self.assertEqual([], nova.servers_with_hints_on('h1'))
        self.assertEqual([True, False], [lost for _s, _t, lost in nova.runs])

    def test_ours_uses_at_least_what_blazar_uses_and_blazar_what_none_does(
            self):
        results = self._run(tiny_trace())
        none, blazar, unweighted, ours, _unsurveyed, _declared = (
            results[policy][0]['used_share']
            for policy in utilization.POLICIES)
        self.assertGreater(blazar, none)
        self.assertGreater(unweighted, blazar)
        self.assertGreaterEqual(ours, unweighted)

    def test_only_ours_books_time_bounded_servers_into_gaps(self):
        results = self._run(tiny_trace())
        self.assertEqual([0, 0, 1, 1, 1, 1], [
            results[policy][0]['bounded_in_gaps']
            for policy in utilization.POLICIES])
        for policy in results.keys() & utilization.OURS:
            self.assertGreater(results[policy][0]['bounded_share'], 0)

    def _weighing_trace(self):
        """Two hosts: a host lease from 6 on one; two long preemptibles.

        Spread by free memory, one preemptible goes to the lease's host
        and is stopped at 5:50; weighed by the ReservationWeigher, both
        go to the other host, whose next booking is beyond the horizon.
        """
        return sorted([
            request(utilization.HOST_LEASE, 0, 6, 4, hosts=1),
        ] + [request(utilization.PREEMPTIBLE, 1, 1, 10, n=n)
             for n in range(2)])

    def _preemptions(self, policy, conf):
        line, _sim = utilization.simulate(policy, self._weighing_trace(), 2,
                                          1, 0, conf)
        self.assertEqual(0, line['late_starts'])
        self.assertEqual(2, line['preemptibles_done'])
        return line['preemptions']

    def test_ours_weighs_the_hosts_by_their_next_reclaim(self):
        self.assertEqual(1, self._preemptions('ours-unweighted', self.conf))
        self.assertEqual(0, self._preemptions('ours', self.conf))

    def test_ours_reads_the_weight_multiplier_from_the_conf(self):
        # Without weight, Nova's RAMWeigher spreads, as ours-unweighted.
        self.assertEqual(1, self._preemptions(
            'ours', utilization.make_conf(weight_multiplier=0.0)))
        self.assertEqual(0.0, utilization.cfg.CONF.reservation
                         .preemptible_weight_multiplier)

    def test_declared_work_waits_for_a_host_where_it_ends_before_a_reclaim(
            self):
        # Two hosts, leased from 6 and from 8 for four hours; two
        # preemptibles of ten hours' work at 1.
        trace = sorted([
            request(utilization.HOST_LEASE, 0, 6, 4, hosts=1),
            request(utilization.HOST_LEASE, 0, 8, 4, hosts=1, n=1),
        ] + [request(utilization.PREEMPTIBLE, 1, 1, 10, n=n)
             for n in range(2)])
        # Weighed alone, they go where the reclaim comes last, 7:50.
        ours, _sim = utilization.simulate('ours', trace, 2, 1, 0, self.conf)
        self.assertEqual(2, ours['preemptions'])
        # Declared, no host passes until the first lease ends at 10.
        declared, sim = utilization.simulate('ours-declared', trace, 2, 1, 0,
                                             self.conf)
        self.assertEqual(0, declared['preemptions'])
        self.assertEqual(0.0, declared['lost_share'])
        self.assertEqual(2, declared['preemptibles_done'])
        self.assertEqual({T0 + 10 * HOUR}, {
            server.started for server, _stopped, _lost in sim.nova.runs
            if server.kind == utilization.PREEMPTIBLE})

    def test_a_generated_day_starts_every_lease_on_time(self):
        trace = utilization.generate(7, hosts=4, days=1, warmup_days=1)
        for policy, (line, _sim, _booked) in self._run(
                trace, hosts=4, days=1, warmup_days=1).items():
            self.assertEqual(0, line['late_starts'], policy)
            self.assertGreater(line['lease_starts'], 0, policy)

    def test_the_same_seed_generates_the_same_trace(self):
        self.assertEqual(utilization.generate(3, 10, 2, 1),
                         utilization.generate(3, 10, 2, 1))
        self.assertNotEqual(utilization.generate(3, 10, 2, 1),
                            utilization.generate(4, 10, 2, 1))

    def _oracle_run(self, policy, kind):
        """Two hosts; a preemptible fills one from 0 for 20 hours' work.

        At 2 a booking of ``kind`` is made to start at once for 4 hours:
        a host lease of one host, or a time-bounded server of 4 vCPUs.
        """
        trace = [request(utilization.PREEMPTIBLE, 0, 0, 20, size=WHOLE),
                 request(kind, 2, 2, 4, size=MEDIUM, hosts=1)]
        line, sim = utilization.simulate(policy, trace, 2, 1, 0, self.conf)
        self.assertEqual(0, line['late_starts'], policy)
        self.assertEqual(1, line['lease_starts'], policy)
        return line, sim

    def test_the_oracle_books_at_once_where_no_preemptible_work_is_lost(
            self):
        for kind, lost_by in (
                (utilization.HOST_LEASE, 'lost_by_host_lease_share'),
                (utilization.BOUNDED, 'lost_by_bounded_share')):
            # By host id, the booking takes the preemptible's host.
            line, sim = self._oracle_run(utilization.UNSURVEYED, kind)
            self.assertEqual(1, line['preemptions'], kind)
            self.assertGreater(line['lost_share'], 0, kind)
            self.assertEqual(line['lost_share'], line['lost_at_once_share'])
            self.assertEqual(line['lost_share'], line[lost_by])
            self.assertEqual(0, line['lost_known_at_boot_share'])
            self.assertNotIn('experiment', line)
            # Told what runs where, the planner takes the other host.
            line, sim = self._oracle_run(utilization.ORACLE, kind)
            self.assertEqual(0, line['preemptions'], kind)
            self.assertEqual(0.0, line['lost_share'], kind)
            self.assertTrue(line['experiment'].startswith('oracle: '))
            told = 'host_lease' if kind == utilization.HOST_LEASE else kind
            self.assertEqual((0.0, 0.0), (line['told_booked_%s_share' % told],
                                          line['told_least_%s_share' % told]))
            self.assertEqual({0, 2 * 3600 * WHOLE[0]},
                             set(sim.told.values()), kind)
            # The option names the weight for that request only.
            self.assertIsNone(self.conf.power.host_weight_property)

    def test_the_oracle_counts_the_work_a_booking_would_stop(self):
        _line, sim = self._oracle_run(utilization.ORACLE,
                                      utilization.BOUNDED)
        # The run is over: its hosts are empty.
        host = sim.hosts[min(sim.hosts)]
        sim.nova.boot('old', host, MEDIUM)
        sim.clock.advance(seconds=3600)
        sim.nova.boot('new', host, LARGE)
        sim.clock.advance(seconds=3600)
        now = sim.clock.now()
        # 20 of 32 vCPUs free: a slice of 16 stops none, one of 24 the
        # newest (8 vCPUs for an hour), one of 32 both, a whole host both.
        self.assertEqual([0, 8 * 3600, 8 * 3600 + 4 * 7200,
                          8 * 3600 + 4 * 7200], [
            sim.work_lost(host, size, now) for size in (
                (16, 0, 0), (24, 0, 0), (32, 0, 0), None)])

    def test_sim_nova_lists_every_server_with_its_hypervisor(self):
        nova = utilization.SimNova(clock_mod.ManualClock(T0), ['h1', 'h2'],
                                   lambda server: None)
        nova.boot('spot-1', 'h1', MEDIUM)
        nova.boot('spot-2', 'h2', LARGE)
        nova.expect_server('booked', 'h2', MEDIUM, utilization.INSTANCE_LEASE,
                           {'id': 'lease', 'start_date': T0,
                            'end_date': T0 + HOUR})
        nova.start_server('booked', 'lease')
        views = nova.servers_with_hints()
        self.assertEqual({'spot-1': 'h1', 'spot-2': 'h2', 'booked': 'h2'}, {
            view['id']: view[work_at_stake.HYPERVISOR] for view in views})
        self.assertEqual(nova.servers_with_hints_on('h2'), [
            view for view in views if view['id'] != 'spot-1'])
        # The survey counts the preemptibles only, on the hosts it knows.
        started = work_at_stake.seconds(T0)
        self.assertEqual({1: work_at_stake.Work(4, 4 * started),
                          2: work_at_stake.Work(8, 8 * started)},
                         work_at_stake.of_servers(views, {'h1': 1, 'h2': 2}))

    def test_only_the_surveying_policies_run_the_survey(self):
        conf = utilization.make_conf(work_interval=600)
        for policy, interval in ((utilization.DECLARED, 600),
                                 (utilization.UNSURVEYED, 0),
                                 (utilization.ORACLE, 0), ('blazar', 0)):
            with utilization.surveying(policy, conf):
                self.assertEqual(interval,
                                 conf.reservation.preemptible_work_interval)
            self.assertEqual(600, conf.reservation.preemptible_work_interval)
        self.assertEqual(300, self.conf.reservation.preemptible_work_interval)

    def test_the_survey_runs_at_every_tick_under_ours_declared(self):
        surveys = []
        run = preemptible_work.WorkSurvey.run

        def counted(survey, ctx):
            surveys.append(survey.conf.preemptible_work_interval)
            return run(survey, ctx)

        self.patch(preemptible_work.WorkSurvey, 'run', counted)
        line, sim = self._oracle_run(utilization.DECLARED,
                                     utilization.HOST_LEASE)
        self.assertEqual(300, line['work_interval_s'])
        # One day of ticks, the survey each time.
        self.assertEqual([300] * 288, surveys)
        line, _sim = self._oracle_run(utilization.UNSURVEYED,
                                      utilization.HOST_LEASE)
        self.assertEqual(0, line['work_interval_s'])
        self.assertEqual({0}, set(surveys[288:]))

    def test_surveyed_a_booking_at_once_takes_a_host_without_preemptibles(
            self):
        for kind in (utilization.HOST_LEASE, utilization.BOUNDED):
            line, sim = self._oracle_run(utilization.DECLARED, kind)
            self.assertEqual(0, line['preemptions'], kind)
            self.assertEqual(0.0, line['lost_share'], kind)
            self.assertNotIn('experiment', line)
