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

"""The preemptible work at stake: the engine's survey and the planner's order.

On SQLite, PostgreSQL and MariaDB: the survey writes each host's
preemptible work from Nova's server views; a booking made to start
within the preemption lead time takes the hosts that run no preemptible
first, then those whose preemptibles did least work; later bookings,
and every booking without the survey, keep the order by id.
"""

import datetime

from oslo_config import cfg
import sqlalchemy as sa

from db import api as db_api
from db import tables
from reservation_ext import clock as clock_mod
from reservation_ext import conf as conf_mod
from reservation_ext.engine import preemptible_work
from reservation_ext.planning import planner
from reservation_ext.planning import preemptible_placement
from reservation_ext.planning import preference
from reservation_ext.planning import work_at_stake
from reservation_ext.store import hosts as store_hosts
from tests import base
from tests.functional import test_planner
from tests.functional import test_planner_preference

T0 = datetime.datetime(2030, 1, 1)
HOUR = datetime.timedelta(hours=1)
LEAD = datetime.timedelta(minutes=10)
WORK = tables.PREEMPTIBLE_WORK


def view(server_id, hostname, vcpus, created, preemptible=True,
         status='ACTIVE', task_state=None):
    """Nova's 2.100 admin view of a server, as the survey reads it."""
    extra_specs = ({preemptible_placement.EXTRA_SPEC: 'true'}
                   if preemptible else {})
    return {'id': server_id, work_at_stake.HYPERVISOR: hostname,
            'status': status, 'OS-EXT-STS:task_state': task_state,
            'created': created.strftime('%Y-%m-%dT%H:%M:%SZ'),
            'flavor': {'vcpus': vcpus, 'extra_specs': extra_specs},
            'scheduler_hints': {}}


class FakeNova:
    """The survey's Nova: every project's servers, counted calls."""

    def __init__(self, servers=()):
        self.servers = list(servers)
        self.calls = 0

    def servers_with_hints(self):
        self.calls += 1
        return list(self.servers)


class FakeClients:
    def __init__(self, nova):
        self.nova = nova


def config(**reservation):
    conf = cfg.ConfigOpts()
    conf_mod.register_opts(conf)
    conf([], project='reservation-ext', default_config_files=[])
    for name, value in reservation.items():
        conf.set_override(name, value, group='reservation')
    return conf


class WorkAtStakeMixin(test_planner_preference.FreeHostsMixin):

    def setUp(self):
        super().setUp()
        self.clock = clock_mod.ManualClock(T0)
        with self.writer() as session:
            self.hosts = [store_hosts.add_host(session, {
                'hypervisor_hostname': 'host%d' % n, 'vcpus': 8,
                'memory_mb': 8192, 'local_gb': 100}, {}) for n in range(5)]

    def writer(self):
        return db_api.writer(self.ctx, self.clock)

    def survey(self, servers, **options):
        nova = FakeNova(servers)
        preemptible_work.WorkSurvey(config(**options), self.clock,
                                    FakeClients(nova)).run(self.ctx)
        return nova

    def work(self):
        with db_api.context_manager.reader.using(self.ctx) as session:
            rows = session.execute(sa.select(WORK)).all()
        return {self.names([row.host_id])[0]: (row.vcpus, row.vcpu_start_sum)
                for row in rows}

    def run_preemptibles(self):
        """host1: 2 vCPUs for 3 h; host3: 4 for 1 h; host4: 1 for 2 h."""
        self.survey([view('a', 'host1', 2, T0 - 3 * HOUR),
                     view('b', 'host3', 4, T0 - HOUR),
                     view('c', 'host4', 1, T0 - 2 * HOUR),
                     view('d', 'host0', 8, T0 - HOUR, preemptible=False),
                     view('e', 'elsewhere', 8, T0 - HOUR)])

    def test_the_survey_writes_each_hosts_preemptible_work(self):
        self.run_preemptibles()
        start = work_at_stake.seconds(T0)
        self.assertEqual({'host1': (2, 2 * (start - 3 * 3600)),
                          'host3': (4, 4 * (start - 3600)),
                          'host4': (1, start - 2 * 3600)}, self.work())

    def test_the_work_done_grows_with_time(self):
        self.run_preemptibles()

        def done_on_host3(now):
            with db_api.context_manager.reader.using(self.ctx) as session:
                return session.scalar(sa.select(work_at_stake.lost(now))
                                      .where(WORK.c.host_id == self.hosts[3]))
        self.assertEqual(4 * 3600, done_on_host3(T0))
        self.assertEqual(4 * 7200, done_on_host3(T0 + HOUR))

    def test_servers_in_error_or_being_deleted_do_no_work(self):
        self.survey([view('a', 'host1', 2, T0, status='ERROR'),
                     view('b', 'host2', 2, T0, task_state='deleting'),
                     view('c', 'host3', 2, T0, status='SOFT_DELETED'),
                     view('d', 'host4', 2, T0, status='SHUTOFF')])
        self.assertEqual(['host4'], sorted(self.work()))

    def test_work_of_no_time_yet_still_comes_after_idle_hosts(self):
        # Created this second, or by a clock ahead of the planner's.
        self.survey([view('a', 'host0', 2, T0),
                     view('b', 'host1', 2, T0 + HOUR)])
        prefer = preference.Preference(stake_lead=LEAD)
        expected = ['host2', 'host3', 'host4', 'host1', 'host0']
        self.assertEqual(expected, self.free(prefer))
        self.assertEqual(expected, self.free(prefer, max_count=5))
        with db_api.context_manager.reader.using(self.ctx) as session:
            hosts, _allocations = planner.read_schedules(
                session, T0, T0 + HOUR, planner.Busy(T0, prefer=prefer))
        self.assertEqual(expected, self.names(hosts))

    def test_a_later_survey_replaces_the_figures(self):
        self.run_preemptibles()
        self.clock.advance(seconds=300)
        self.survey([view('a', 'host1', 2, T0 - 3 * HOUR),
                     view('f', 'host2', 1, T0)])
        self.assertEqual(['host1', 'host2'], sorted(self.work()))
        self.assertEqual(work_at_stake.seconds(T0), self.work()['host2'][1])

    def test_a_survey_waits_for_its_interval(self):
        survey = preemptible_work.WorkSurvey(
            config(preemptible_work_interval=300), self.clock,
            FakeClients(FakeNova([view('a', 'host1', 2, T0)])))
        survey.run(self.ctx)
        survey.clients.nova.servers = []
        self.clock.advance(seconds=299)
        survey.run(self.ctx)
        self.assertEqual((1, ['host1']),
                         (survey.clients.nova.calls, sorted(self.work())))
        self.clock.advance(seconds=1)
        survey.run(self.ctx)
        self.assertEqual((2, {}), (survey.clients.nova.calls, self.work()))

    def test_no_survey_without_an_interval(self):
        nova = self.survey([view('a', 'host1', 2, T0)],
                           preemptible_work_interval=0)
        self.assertEqual((0, {}), (nova.calls, self.work()))

    def test_recording_one_host_leaves_the_others(self):
        self.run_preemptibles()
        with self.writer() as session:
            preemptible_work.record(session, {}, T0,
                                    host_ids=[self.hosts[1]])
        self.assertEqual(['host3', 'host4'], sorted(self.work()))

    def test_a_booking_for_now_takes_idle_hosts_then_the_least_work(self):
        self.run_preemptibles()
        prefer = preference.Preference(stake_lead=LEAD)
        expected = ['host0', 'host2', 'host4', 'host3', 'host1']
        self.assertEqual(expected, self.free(prefer))
        # Limited: the search's branches (see preference.first).
        for count in range(1, 6):
            self.assertEqual(expected[:count],
                             self.free(prefer, max_count=count))

    def test_a_booking_made_with_notice_keeps_the_order_by_id(self):
        self.run_preemptibles()
        prefer = preference.Preference(stake_lead=LEAD)
        later = T0 + LEAD + datetime.timedelta(minutes=1)
        self.assertEqual(['host%d' % n for n in range(5)],
                         self.free(prefer, start=later, max_count=5))
        self.assertEqual(['host0', 'host2', 'host4', 'host3', 'host1'],
                         self.free(prefer, start=T0 + LEAD, max_count=5))

    def test_without_the_survey_the_work_plays_no_part(self):
        self.run_preemptibles()
        self.assertEqual(['host%d' % n for n in range(5)],
                         self.free(preference.Preference(), max_count=5))

    def test_the_work_comes_before_the_weight(self):
        self.run_preemptibles()
        with self.writer() as session:
            for n, watts in ((0, '300'), (1, '50'), (2, '100'), (3, '10')):
                store_hosts.set_capabilities(session, self.hosts[n],
                                             {'watts': watts})
        prefer = preference.Preference('watts', stake_lead=LEAD)
        expected = ['host2', 'host0', 'host4', 'host3', 'host1']
        self.assertEqual(expected, self.free(prefer))
        for count in range(1, 6):
            self.assertEqual(expected[:count],
                             self.free(prefer, max_count=count))

    def test_a_slice_for_now_goes_to_a_host_without_preemptibles(self):
        self.run_preemptibles()
        busy = planner.Busy(T0, prefer=preference.Preference(
            stake_lead=LEAD))
        with self.writer() as session:
            hosts = [planner.allocate_slice(
                session, planner.Owner(test_planner.add_reservation(session)),
                T0, T0 + HOUR, (8, 1024, 10), busy) for n in range(3)]
        self.assertEqual(['host0', 'host2', 'host4'], self.names(hosts))

    def test_a_deleted_host_takes_its_figure_with_it(self):
        self.run_preemptibles()
        with self.writer() as session:
            store_hosts.remove_host(session, self.hosts[3])
        self.assertEqual(['host1', 'host4'], sorted(self.work()))


class TestWorkAtStake(WorkAtStakeMixin, base.DBTestCase):
    pass


class TestWorkAtStakePostgreSQL(WorkAtStakeMixin, base.PostgreSQLTestCase):
    pass


class TestWorkAtStakeMySQL(WorkAtStakeMixin, base.MySQLTestCase):
    pass
