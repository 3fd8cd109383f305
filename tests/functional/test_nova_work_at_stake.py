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

"""The preemptible work at stake, surveyed in Nova's harness and weighed.

Real nova-api, conductor, scheduler with ReservationFilter, Placement and
fake computes; one real engine per test whose clock the test moves, so
that its survey (``[reservation] preemptible_work_interval``, 300 s)
runs when the interval has passed and not before. compute-2 and then
compute-3 (10 vCPUs each) are the reservable hosts, so compute-2 has the
lower id; compute-1 is an ordinary host. The preemptible servers are put
on their host by the administrator (microversion 2.74's ``host``). A
lease made to start now (within the lead time, 600 s) takes first the
host that runs no preemptible server, then the one whose preemptibles
did the least work (vCPUs times seconds since Nova created them). Nova
stamps ``created`` with the real time: the tests order the servers in
real time, and move only the engine's clock.
"""

import datetime
import json

import fixtures as fixtures_lib
from oslo_messaging.notify import _impl_test as test_notifier
import sqlalchemy as sa

from db import api as db_api
from db import tables
from reservation_ext import clock as clock_mod
from reservation_ext import conf as conf_mod
from reservation_ext import context as context_mod
from reservation_ext.engine import reclaim
from reservation_ext.engine import runner
from reservation_ext.leases import notifications
from reservation_ext.planning import work_at_stake
from reservation_ext import plugins as plugins_mod
from tests import base as test_base
from tests.functional import nova_base

MINUTE = datetime.timedelta(minutes=1)
HOUR = datetime.timedelta(hours=1)
INTERVAL = 300
HOST_KEY = work_at_stake.HYPERVISOR
RESERVABLE = ('compute-2', 'compute-3')


def created_at(server):
    """Seconds since the epoch at which Nova created ``server``."""
    return work_at_stake.seconds(datetime.datetime.strptime(
        server['created'], '%Y-%m-%dT%H:%M:%SZ'))


def surveyed():
    """``{hypervisor hostname: (vcpus, vcpu_start_sum)}`` of the table."""
    work, hosts = tables.PREEMPTIBLE_WORK, tables.HOSTS
    with db_api.context_manager.reader.using(
            context_mod.get_admin_context()) as session:
        return {row.hypervisor_hostname: (row.vcpus, row.vcpu_start_sum)
                for row in session.execute(
                    sa.select(hosts.c.hypervisor_hostname, work.c.vcpus,
                              work.c.vcpu_start_sum)
                    .join(hosts, hosts.c.id == work.c.host_id))}


class WorkAtStakeTest(nova_base.NovaTestCase):

    def setUp(self):
        super().setUp()
        self.flags(preemptible_work_interval=INTERVAL,
                   preemption_lead_time=600, group='reservation')
        self.flags(driver=['test'], group='oslo_messaging_notifications')
        test_notifier.reset()
        self.addCleanup(test_notifier.reset)
        self.ids = {name: self.add_reservable_host(name)['id']
                    for name in RESERVABLE}
        # The order by id alone takes compute-2 first.
        self.assertLess(int(self.ids['compute-2']),
                        int(self.ids['compute-3']))
        self.small = self._create_flavor(
            memory_mb=512, vcpu=1, disk=1, ephemeral=0,
            extra_spec={'reservation:preemptible': 'true'})
        self.admin_api.microversion = '2.74'
        self.clock = clock_mod.ManualClock(clock_mod.SYSTEM.now())
        self.engine = runner.Engine(
            conf_mod.CONF, self.clock,
            plugins_mod.load_plugins(conf_mod.CONF, self.clock),
            notifications.get_notifier(conf_mod.CONF))

    def boot_on(self, host, flavor=None, hints=None, name='spot'):
        """An ACTIVE server put on ``host`` by the administrator."""
        request = {'server': dict(self._build_server(
            name=name, flavor_id=flavor or self.small, networks='none'),
            host=host)}
        if hints:
            request['os:scheduler_hints'] = hints
        server = self._wait_for_state_change(
            self.admin_api.post_server(request), 'ACTIVE')
        self.assertEqual(host, server[HOST_KEY])
        return server

    def poll(self, after=None):
        """Run the engine, its clock moved on by ``after`` first."""
        if after:
            self.clock.advance(seconds=after.total_seconds())
        test_base.wait_until(
            lambda: not self.engine.run_once(defer_waits=True) and
            not nova_base.any_event_waits(), 'the events that wait',
            nova_base.ENGINE_WAIT)

    def lease_one(self, hosts=(), start='now'):
        """A lease of one host (of ``hosts`` if given) from ``start``."""
        reservation = {'resource_type': 'physical:host', 'min': 1,
                       'max': 1, 'hypervisor_properties': '',
                       'resource_properties': ''}
        if hosts:
            reservation['hosts'] = list(hosts)
        return self.lease_api('POST', '/leases', {
            'name': 'hpc', 'start_date': start,
            'end_date': nova_base.lease_date(
                clock_mod.SYSTEM.now() + 2 * HOUR),
            'reservations': [reservation]})['lease']

    def booked(self, lease):
        """The hypervisor hostname the lease booked."""
        names = {str(host_id): name for name, host_id in self.ids.items()}
        [allocation] = self.admin_lease_api(
            'GET', '/os-hosts/allocations?lease_id=' +
            lease['id'])['allocations']
        return names[str(allocation['resource_id'])]

    def status(self, server):
        return self.admin_api.get_server(server['id'])['status']

    def preempted(self):
        return [message['payload']['server_id'] for _ctx, message, _p, _r
                in test_notifier.NOTIFICATIONS
                if message['event_type'] == reclaim.PREEMPTED]

    def start_lease(self, lease):
        """Run the engine through the lease's start; it is ACTIVE."""
        self.clock.set(clock_mod.SYSTEM.now())
        self.poll(after=MINUTE)
        self.assertEqual('ACTIVE', self.lease_api(
            'GET', '/leases/' + lease['id'])['lease']['status'])

    def test_the_survey_writes_each_host_s_preemptible_vcpus_and_starts(
            self):
        # A page a server: the survey follows Nova's links.
        self.flags(max_limit=1, group='api')
        one = self.boot_on('compute-2')
        two = self.boot_on('compute-2', flavor=self._create_flavor(
            memory_mb=512, vcpu=2, disk=1, ephemeral=0), name='hinted',
            hints={'preemptible': 'true'})
        # Not a reservable host: not surveyed.
        self.boot_on('compute-1', name='shared')
        self.assertEqual({}, surveyed())
        self.poll()
        self.assertEqual(
            {'compute-2': (3, created_at(one) + 2 * created_at(two))},
            surveyed())

        self.admin_api.delete_server(two['id'])
        self._wait_until_deleted(two)
        # Within the interval the figure stands.
        self.poll(after=datetime.timedelta(seconds=INTERVAL - 1))
        self.assertEqual(
            {'compute-2': (3, created_at(one) + 2 * created_at(two))},
            surveyed())
        self.poll(after=datetime.timedelta(seconds=1))
        self.assertEqual({'compute-2': (1, created_at(one))}, surveyed())

        self.admin_api.delete_server(one['id'])
        self._wait_until_deleted(one)
        self.poll(after=datetime.timedelta(seconds=INTERVAL))
        self.assertEqual({}, surveyed())

    def test_a_lease_for_now_takes_the_idle_host_and_spares_the_preemptible(
            self):
        server = self.boot_on('compute-2')
        self.poll()
        lease = self.lease_one()
        self.assertEqual('compute-3', self.booked(lease))
        self.start_lease(lease)
        self.assertEqual(('ACTIVE', []), (self.status(server),
                                          self.preempted()))

    def test_without_the_survey_a_lease_for_now_preempts_on_the_lowest_id(
            self):
        self.flags(preemptible_work_interval=0, group='reservation')
        server = self.boot_on('compute-2')
        self.poll()
        self.poll(after=datetime.timedelta(seconds=INTERVAL))
        self.assertEqual({}, surveyed())
        lease = self.lease_one()
        self.assertEqual('compute-2', self.booked(lease))
        self.start_lease(lease)
        self._wait_until_deleted(server)
        self.assertEqual([server['id']], self.preempted())

    def test_of_two_working_hosts_a_lease_for_now_takes_the_one_with_less_work(
            self):
        older = self.boot_on('compute-2', name='older')
        # Nova stamps ``created`` with the real time, to the second.
        test_base.wait_until(
            lambda: clock_mod.SYSTEM.now().strftime('%Y-%m-%dT%H:%M:%SZ') >
            older['created'], 'a second since the first server', 5)
        newer = self.boot_on('compute-3', name='newer')
        self.assertLess(created_at(older), created_at(newer))
        self.poll()
        self.assertEqual({'compute-2', 'compute-3'}, set(surveyed()))
        lease = self.lease_one()
        self.assertEqual('compute-3', self.booked(lease))
        self.start_lease(lease)
        self._wait_until_deleted(newer)
        self.assertEqual(('ACTIVE', [newer['id']]),
                         (self.status(older), self.preempted()))

    def boot_reserved_now(self):
        """A reserved server of OWNER whose lease starts now; ACTIVE."""
        reserved = self.boot(hints={
            'reserved': 'True', 'lease_params': json.dumps({
                'start': 'now',
                'end': nova_base.lease_date(clock_mod.SYSTEM.now() + HOUR)})})
        return self.admin_api.get_server(reserved['id'])

    def test_a_reserved_server_for_now_gets_a_slice_where_no_preemptible_runs(
            self):
        # The lease API's clock 30 s behind Nova's: by the planner's now
        # the preemptible has done no work yet (a negative figure), and
        # its host still comes after the one that runs none.
        real = clock_mod.Clock()
        self.useFixture(fixtures_lib.MonkeyPatch(
            'reservation_ext.clock.SYSTEM.now',
            lambda: real.now() - datetime.timedelta(seconds=30)))
        spot = self.boot_on('compute-2')
        self.poll()
        self.assertEqual({'compute-2'}, set(surveyed()))
        self.assertEqual('compute-3', self.boot_reserved_now()[HOST_KEY])
        self.poll(after=MINUTE)
        self.assertEqual(('ACTIVE', []), (self.status(spot),
                                          self.preempted()))

    def test_a_lease_after_the_lead_time_takes_the_lowest_id_whatever_the_work(
            self):
        self.boot_on('compute-2')
        self.poll()
        self.assertEqual({'compute-2'}, set(surveyed()))
        lease = self.lease_one(start=nova_base.lease_date(
            clock_mod.SYSTEM.now() + 20 * MINUTE))
        self.assertEqual('compute-2', self.booked(lease))

    def test_the_reclaim_removes_the_work_of_the_host_it_emptied(self):
        server = self.boot_on('compute-2')
        self.boot_on('compute-3', name='kept')
        self.poll()
        self.assertEqual({'compute-2', 'compute-3'}, set(surveyed()))
        lease = self.lease_one(hosts=['compute-2'])
        # Within the interval: no survey, the reclaim alone writes.
        self.poll(after=MINUTE)
        self.assertEqual('ACTIVE', self.lease_api(
            'GET', '/leases/' + lease['id'])['lease']['status'])
        self._wait_until_deleted(server)
        self.assertEqual({'compute-3'}, set(surveyed()))
