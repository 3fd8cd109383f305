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

"""Concurrent proposals and lease creates never double-book a host.

Writers (threads on an SQLite file, processes with their own engines on
PostgreSQL) ask at once for proposals of one host, make leases from them,
and create plain leases, in windows that overlap, on a pool of a few
hosts. Afterwards no two allocations of a host overlap (bookings and holds
alike, none has expired), every lease made from a proposal has exactly
the proposal's window, and every request ended with a result or a 409.
"""

from concurrent import futures
import datetime

from oslo_config import cfg

from reservation_ext import clock as clock_mod
from reservation_ext import conf as conf_mod
from reservation_ext import context
from reservation_ext import exceptions
from reservation_ext.leases import notifications
from reservation_ext.leases import proposals as proposals_mod
from reservation_ext.leases import service as lease_service
from reservation_ext import plugins as plugins_mod
from tests import base
from tests.functional import concurrency
from tests.functional import test_allocation_concurrency
from tests.functional import test_planner

NOW = datetime.datetime(2030, 1, 1)
MEMBER = ['member', 'reader']


def services():
    conf = cfg.ConfigOpts()
    conf_mod.register_opts(conf)
    conf([], project='reservation')
    clock = clock_mod.ManualClock(NOW)
    loaded = plugins_mod.load_plugins(conf, clock)
    return (proposals_mod.ProposalService(conf, clock, loaded),
            lease_service.LeaseService(conf, clock, loaded,
                                       notifications.get_notifier(conf)))


def user(index):
    return context.RequestContext(user_id='u%d' % index,
                                  project_id='p%d' % index, roles=MEMBER)


def hours(start, length):
    return {'name': 'plain', 'start_date': str(NOW + datetime.timedelta(
        hours=start)), 'end_date': str(NOW + datetime.timedelta(
            hours=start + length)), 'reservations': [
        {'resource_type': 'physical:host', 'min': 1, 'max': 1}]}


def act(index):
    """Propose and take, or lease plainly; what happened."""
    proposer, leases = services()
    ctx = user(index)
    try:
        if index % 3 == 2:
            leases.create(ctx, hours(index % 4, 3))
            return 'leased'
        found = proposer.propose(ctx, {
            'reservations': [{'resource_type': 'physical:host', 'min': 1,
                              'max': 1}],
            'duration': '3h', 'count': 2,
            'not_before': str(NOW + datetime.timedelta(hours=index % 4))})
        if not found:
            return 'nothing'
        lease = leases.create(ctx, {'name': 'taken',
                                    'proposal_id': found[-1]['id']})
        if (lease['start_date'], lease['end_date']) != (
                found[-1]['start_date'], found[-1]['end_date']):
            return 'moved'
        return 'taken'
    except exceptions.Conflict:
        return 'conflict'
    except Exception as error:
        return repr(error)


class _ConcurrencyTests(test_allocation_concurrency.ConcurrencyMixin):

    POOL = 3

    def assert_never_double_booked(self, outcomes):
        with self.engine.connect() as conn:
            self.assertEqual([], test_planner.overlapping_allocations(conn))
        self.assertEqual(set(), set(outcomes) - {
            'leased', 'taken', 'nothing', 'conflict'})
        self.assertIn('taken', outcomes)


class ThreadsTest(_ConcurrencyTests, concurrency.SQLiteFileTestCase):

    def test_threads_never_double_book(self):
        with futures.ThreadPoolExecutor(12) as executor:
            outcomes = list(executor.map(act, range(36)))
        self.assert_never_double_booked(outcomes)


class _ProcessesMixin(_ConcurrencyTests):
    """Processes, each with its own engine, on the class's server."""

    def test_processes_never_double_book(self):
        self.assert_never_double_booked(self.in_processes(
            act, [list(range(first, 48, 6)) for first in range(6)]))


class ProcessesPostgreSQLTest(_ProcessesMixin, base.PostgreSQLTestCase):
    pass


class ProcessesMySQLTest(_ProcessesMixin, base.MySQLTestCase):
    pass
