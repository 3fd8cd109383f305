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

"""The planner's order of preference among free hosts ([power] weights).

On SQLite, PostgreSQL and MariaDB: every search that picks hosts (whole
hosts, slices, healing's, proposals' timelines) takes the hosts by
weight, hosts without it last, then by id; near the start, with a power
driver, the hosts that are on first.
"""

import datetime

from oslo_config import cfg
import sqlalchemy as sa

from db import api as db_api
from db import host_gaps
from db import models
from reservation_ext import clock as clock_mod
from reservation_ext import conf as conf_mod
from reservation_ext.engine import power_manager
from reservation_ext.hosts import inventory
from reservation_ext.planning import planner
from reservation_ext.planning import preference
from reservation_ext.planning import timelines
from reservation_ext.store import hosts as store_hosts
from tests import base
from tests.functional import test_planner

T0 = datetime.datetime(2030, 1, 1)
HOUR = datetime.timedelta(hours=1)
HOSTS = models.ComputeHost.__table__
# host0 .. host5: their watts; None: no such capability; 'n/a' is not a
# number, so it weighs as none.
WATTS = ('300', '100', '200', None, '150', 'n/a')
LEAD = datetime.timedelta(minutes=15)
# [reservation] preemption_lead_time by default: with the survey of
# preemptible work on (by default), the windows within it weigh the work.
STAKE_LEAD = datetime.timedelta(minutes=10)


def config(reservation=None, **power):
    """A ConfigOpts with the project's options, ``power`` in ``[power]``.

    And ``reservation`` (a dict) in ``[reservation]``.
    """
    conf = cfg.ConfigOpts()
    conf_mod.register_opts(conf)
    conf([], project='reservation-ext', default_config_files=[])
    for name, value in power.items():
        conf.set_override(name, value, group='power')
    for name, value in (reservation or {}).items():
        conf.set_override(name, value, group='reservation')
    return conf


class FreeHostsMixin:
    """Name the hosts ``self.hosts`` holds, and search the free ones."""

    def names(self, host_ids):
        index = {host_id: n for n, host_id in enumerate(self.hosts)}
        return ['host%d' % index[host_id] for host_id in host_ids]

    def free(self, prefer, start=T0, max_count=None):
        with db_api.context_manager.reader.using(self.ctx) as session:
            return self.names(host_id for host_id, _gen in
                              planner.find_free_hosts(
                                  session, start, start + HOUR,
                                  planner.Busy(T0, prefer=prefer),
                                  max_count=max_count))


class PreferenceMixin(FreeHostsMixin):

    def setUp(self):
        super().setUp()
        with self.writer() as session:
            self.hosts = [store_hosts.add_host(
                session, {'hypervisor_hostname': 'host%d' % n, 'vcpus': 8,
                          'memory_mb': 8192, 'local_gb': 100},
                {} if watts is None else {'watts': watts})
                for n, watts in enumerate(WATTS)]

    def writer(self):
        return db_api.writer(self.ctx, clock_mod.ManualClock(T0))

    def test_without_a_weight_the_lowest_id_comes_first(self):
        self.assertEqual(['host%d' % n for n in range(6)],
                         self.free(preference.Preference()))

    def test_ascending_weights_take_the_fewest_watts_first(self):
        self.assertEqual(['host1', 'host4', 'host2', 'host0', 'host3',
                          'host5'],
                         self.free(preference.Preference('watts')))

    def test_descending_weights_take_the_most_first(self):
        self.assertEqual(['host0', 'host2', 'host4', 'host1', 'host3',
                          'host5'],
                         self.free(preference.Preference('watts', True)))

    def test_a_limited_search_takes_the_first_in_the_same_order(self):
        for prefer in (preference.Preference('watts'),
                       preference.Preference('watts', True)):
            every = self.free(prefer)
            for count in range(1, 7):
                self.assertEqual(every[:count],
                                 self.free(prefer, max_count=count))

    def test_hosts_without_the_property_come_last_by_id(self):
        self.assertEqual(['host3', 'host5'], self.free(
            preference.Preference('watts'))[-2:])
        self.assertEqual(['host3', 'host5'], self.free(
            preference.Preference('watts', True))[-2:])

    def test_the_search_books_the_preferred_hosts(self):
        with self.writer() as session:
            booked = planner.allocate_hosts(
                session, planner.Owner(test_planner.add_reservation(session)),
                T0, T0 + HOUR, 2, 2,
                planner.Busy(T0, prefer=preference.Preference('watts')))
        self.assertEqual(['host1', 'host4'], self.names(booked))
        self.assertEqual(['host2', 'host0'], self.free(
            preference.Preference('watts'), max_count=2))

    def test_a_weight_set_through_os_hosts_takes_effect(self):
        hosts = inventory.HostInventory(
            config().reservation, clock_mod.ManualClock(T0), None)
        hosts.update(self.ctx, str(self.hosts[3]), {'watts': '50'})
        hosts.update(self.ctx, str(self.hosts[1]), {'watts': None})
        self.assertEqual(['host3', 'host4', 'host2', 'host0', 'host1',
                          'host5'],
                         self.free(preference.Preference('watts')))

    def set_power(self, state, *numbers):
        with self.writer() as session:
            session.execute(sa.update(HOSTS).where(HOSTS.c.id.in_(
                [self.hosts[n] for n in numbers])).values(power_state=state))

    def test_near_the_start_the_hosts_that_are_on_come_first(self):
        self.set_power('off', 1, 4)
        self.set_power('powering_on', 2)
        prefer = preference.Preference('watts', power_lead=LEAD)
        soon = T0 + LEAD - datetime.timedelta(minutes=1)
        self.assertEqual(['host0', 'host3', 'host5', 'host2', 'host1',
                          'host4'], self.free(prefer, start=soon))
        # Limited: the search's branches (see preference.first).
        for count in range(1, 7):
            self.assertEqual(['host0', 'host3', 'host5', 'host2', 'host1',
                              'host4'][:count],
                             self.free(prefer, start=soon, max_count=count))
        # Later, the policy switches a host on in time: weights only.
        self.assertEqual(['host1', 'host4', 'host2', 'host0', 'host3',
                          'host5'], self.free(prefer, start=T0 + LEAD))

    def test_without_a_power_driver_the_power_state_plays_no_part(self):
        self.set_power('off', 1, 4)
        self.assertEqual(['host1', 'host4', 'host2', 'host0', 'host3',
                          'host5'],
                         self.free(preference.Preference('watts')))

    def test_a_slice_goes_to_the_preferred_host(self):
        with self.writer() as session:
            hosts = [planner.allocate_slice(
                session, planner.Owner(test_planner.add_reservation(session)),
                T0, T0 + HOUR,
                (4, 1024, 10), planner.Busy(
                    T0, prefer=preference.Preference('watts')))
                for n in range(3)]
        self.assertEqual(['host1', 'host1', 'host4'], self.names(hosts))

    def test_the_tightest_gap_still_comes_before_the_weight(self):
        prefer = preference.Preference('watts')
        with self.writer() as session:
            planner.allocate_hosts(session, planner.Owner(
                test_planner.add_reservation(session)),
                                   T0 + 2 * HOUR, T0 + 3 * HOUR, 1, 1,
                                   planner.Busy(T0), host_ids=[self.hosts[0]])
            rooms = planner.slice_rooms(session, T0, T0 + HOUR, (1, 1, 1),
                                        planner.Busy(T0, prefer=prefer),
                                        tightest=True)
        self.assertEqual(['host0', 'host1', 'host4', 'host2', 'host3',
                          'host5'], self.names(rooms))

    def test_proposals_hold_the_preferred_hosts(self):
        prefer = preference.Preference('watts', True)
        span = timelines.Span(T0, T0, HOUR)
        with db_api.context_manager.reader.using(self.ctx) as session:
            hosts, allocations = planner.read_schedules(
                session, *span.reach, planner.Busy(T0, prefer=prefer),
                sizes=True)
        whole = timelines.WholeHosts(span, allocations, 2, 2)
        self.assertEqual(['host0', 'host2'], self.names(whole.take(T0)))
        slices = timelines.Slices(span, {host: row[1:] for host, row in
                                         hosts.items()}, allocations,
                                  (8, 1, 1))
        self.assertEqual(['host0', 'host2'], self.names(
            slices.take(T0) + slices.take(T0)))

    def test_the_engine_orders_every_host_as_the_planner_does(self):
        with db_api.context_manager.reader.using(self.ctx) as session:
            ordered = [reading.row.id for reading in power_manager.read_hosts(
                session, planner.Busy(T0, prefer=preference.Preference(
                    'watts')))]
        self.assertEqual(['host1', 'host4', 'host2', 'host0', 'host3',
                          'host5'], self.names(ordered))

    def test_a_weighted_search_is_one_statement(self):
        statements = []
        listener = lambda *args: statements.append(args[2])  # noqa: E731
        sa.event.listen(self.engine, 'before_cursor_execute', listener)
        try:
            self.free(preference.Preference('watts', power_lead=LEAD))
        finally:
            sa.event.remove(self.engine, 'before_cursor_execute', listener)
        # The reader's transaction aside (SQLite's own statement), and the
        # lookup of the gap index before it on SQLite.
        self.assertEqual(1, len([statement for statement in statements
                                 if statement.lstrip().startswith('SELECT')
                                 and host_gaps.TABLE not in statement]))


class TestPreference(PreferenceMixin, base.DBTestCase):
    pass


class TestPreferencePostgreSQL(PreferenceMixin, base.PostgreSQLTestCase):
    pass


class TestPreferenceMySQL(PreferenceMixin, base.MySQLTestCase):
    pass


class TestPreferenceOptions(base.TestCase):

    def test_unset_options_prefer_by_id_after_the_work_at_stake(self):
        self.assertEqual(preference.Preference(stake_lead=STAKE_LEAD),
                         preference.Preference.from_conf(config()))

    def test_no_survey_of_preemptible_work_puts_no_work_at_stake(self):
        self.assertEqual(preference.Preference(),
                         preference.Preference.from_conf(config(
                             {'preemptible_work_interval': 0})))

    def test_the_stake_lead_is_the_preemption_lead_time(self):
        self.assertEqual(
            datetime.timedelta(seconds=90),
            preference.Preference.from_conf(config(
                {'preemption_lead_time': 90})).stake_lead)

    def test_the_options_say_the_weight_and_the_power_lead(self):
        self.assertEqual(
            preference.Preference('watts', True, LEAD, STAKE_LEAD),
            preference.Preference.from_conf(config(
                host_weight_property='watts',
                host_weight_order='descending', driver='redfish',
                power_on_lead_time=900)))

    def test_the_busy_test_of_a_conf_carries_its_preference(self):
        busy = planner.Busy.from_conf(T0, config(
            host_weight_property='watts'), ignore_proposal='p')
        self.assertEqual(preference.Preference('watts',
                                               stake_lead=STAKE_LEAD),
                         busy.prefer)
        self.assertEqual('p', busy.ignore_proposal)
