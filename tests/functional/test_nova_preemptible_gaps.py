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

"""A server booked into a gap where preemptible servers run, in Nova's harness.

The planner books compute-2's gap for a ``nova boot --hint reserved=True``
lease that starts now as if the preemptible servers there were not; the
server is built at once only when Placement has room for it on compute-2,
otherwise when the lease's start (due at once) has stopped them. Only
compute-2 (8192 MB, 512 MB of which Placement keeps for the host) is
reservable, so a gap can only be booked there; preemptibles are put there
on purpose (a requested host still passes the filter).
"""

import datetime
import json
import threading

import fixtures
from nova.scheduler import manager as scheduler_manager
from oslo_messaging.notify import _impl_test as test_notifier

from reservation_ext.clients import compute as compute_client
from reservation_ext import clock as clock_mod
from reservation_ext import dates
from reservation_ext.engine import reclaim
from tests.functional import nova_base

HOUR = datetime.timedelta(hours=1)
HOST_KEY = 'OS-EXT-SRV-ATTR:hypervisor_hostname'
LEASE_KEY = 'reservation:lease_id'


class PreemptibleGapTest(nova_base.NovaTestCase):

    def setUp(self):
        super().setUp()
        self.flags(driver=['test'], group='oslo_messaging_notifications')
        test_notifier.reset()
        self.addCleanup(test_notifier.reset)
        self.add_reservable_host('compute-2')
        self.end = clock_mod.SYSTEM.now().replace(microsecond=0) + 2 * HOUR
        self.reserved_flavor = self._create_flavor(
            memory_mb=2048, vcpu=1, disk=1, ephemeral=0)

    def preemptible_on_compute_2(self, memory_mb):
        """An ACTIVE preemptible server of another project on compute-2."""
        flavor = self._create_flavor(
            memory_mb=memory_mb, vcpu=1, disk=1, ephemeral=0,
            extra_spec={'reservation:preemptible': 'true'})
        self.admin_api.microversion = '2.74'
        server = self.admin_api.post_server({'server': dict(
            self._build_server(name='spot', flavor_id=flavor,
                               networks='none'), host='compute-2')})
        server = self._wait_for_state_change(server, 'ACTIVE')
        self.assertEqual('compute-2', server[HOST_KEY])
        return server

    def boot_reserved_now(self, start='now'):
        """The answer to a reserved boot whose lease starts now.

        Or at ``start`` (a date as the hint gives it).
        """
        return self.user_api(nova_base.OWNER).post_server({
            'server': self._build_server(
                name='mine', flavor_id=self.reserved_flavor,
                networks='none'),
            'os:scheduler_hints': {
                'reserved': 'True', 'lease_params': json.dumps({
                    'start': start,
                    'end': dates.format_date(self.end)})}})

    def lease_of(self, server):
        return self.lease_api('GET', '/leases/' + self.lease_id_of(server))[
            'lease']

    def preempted(self):
        return [message['payload'] for _ctx, message, _priority, _retry
                in test_notifier.NOTIFICATIONS
                if message['event_type'] == reclaim.PREEMPTED]

    def test_a_server_booked_where_preemptibles_fill_the_host_waits_for_them(
            self):
        # 7168 MB of 7680 in Placement: no room for 2048 MB more, while
        # the planner sees 8192 MB free.
        spot = self.preemptible_on_compute_2(7168)
        answer = self.boot_reserved_now()
        mine = self.user_api(nova_base.OWNER).get_server(answer['id'])
        lease_id = self.lease_id_of(answer)
        self.assertEqual(('RESERVED', lease_id),
                         (mine['status'], mine['metadata'][LEASE_KEY]))
        # No password is set on a server built later.
        self.assertNotIn('adminPass', answer)
        [reservation] = self.lease_of(answer)['reservations']
        self.assertEqual('compute-2', reservation['host'])
        self.assertEqual('ACTIVE',
                         self.admin_api.get_server(spot['id'])['status'])

        # The lease's start is due at once: the preemptible gives way,
        # then the server is built on its booked host.
        self.run_engine(at=clock_mod.SYSTEM.now())
        self._wait_until_deleted(spot)
        self.assertEqual([(spot['id'], 'compute-2', lease_id)], [
            (payload['server_id'], payload['host'], payload['lease_id'])
            for payload in self.preempted()])
        mine = self._wait_for_state_change(answer, 'ACTIVE')
        self.assertEqual('compute-2',
                         self.admin_api.get_server(mine['id'])[HOST_KEY])
        self.assertEqual('ACTIVE', self.lease_of(answer)['status'])

    def test_a_server_booked_where_preemptibles_leave_room_is_built_at_once(
            self):
        spot = self.preemptible_on_compute_2(2048)
        answer = self.boot_reserved_now()
        self.assertIn('adminPass', answer)
        # No engine runs: the build was cast in the request.
        mine = self._wait_for_state_change(answer, 'ACTIVE')
        self.assertEqual('compute-2',
                         self.admin_api.get_server(mine['id'])[HOST_KEY])
        self.assertEqual('compute-2',
                         self.lease_of(answer)['reservations'][0]['host'])
        self.assertEqual('ACTIVE',
                         self.admin_api.get_server(spot['id'])['status'])
        self.assertEqual([], self.preempted())

    def set_memory_reserved_on_compute_2(self, reserved):
        """Set what Placement keeps of compute-2's memory; the old value."""
        provider = self._get_provider_uuid_by_host('compute-2')
        body = self.placement.get('/resource_providers/%s/inventories'
                                  % provider).body
        memory = body['inventories']['MEMORY_MB']
        old, memory['reserved'] = memory['reserved'], reserved
        self._update_inventory(provider, body)
        return old

    def test_a_server_whose_host_has_no_room_at_its_start_waits_for_it(
            self):
        start = clock_mod.SYSTEM.now().replace(microsecond=0) + HOUR
        answer = self.boot_reserved_now(dates.format_date(start))
        # Room taken at the start, as by the server of a lease whose end
        # is slow: 1024 MB left in Placement for a 2048 MB server.
        kept = self.set_memory_reserved_on_compute_2(8192 - 1024)

        # Tried again and again past event_max_attempts: a wait for an
        # end to free the host spends no attempt (for 600 s, a build's
        # timeout).
        self.flags(event_max_attempts=2, event_retry_backoff=1,
                   group='reservation')
        for seconds in range(0, 5, 2):
            self.run_engine(at=start + datetime.timedelta(seconds=seconds))
        self.assertEqual('STARTING', self.lease_of(answer)['status'])
        self.assertEqual('RESERVED', self.user_api(
            nova_base.OWNER).get_server(answer['id'])['status'])

        self.set_memory_reserved_on_compute_2(kept)
        # The start's retry, after its backoff, builds the server there.
        self.run_engine(at=start + datetime.timedelta(minutes=1))
        mine = self._wait_for_state_change(answer, 'ACTIVE')
        self.assertEqual('compute-2',
                         self.admin_api.get_server(mine['id'])[HOST_KEY])
        self.assertEqual('ACTIVE', self.lease_of(answer)['status'])

    def hold_the_scheduler(self):
        """Stop Nova's scheduler at its next request; return the release.

        A build cast meanwhile is not in Placement yet, as in the moment
        between a cast and the scheduler's claim.
        """
        gate = threading.Event()
        self.addCleanup(gate.set)
        select = scheduler_manager.SchedulerManager.select_destinations

        def select_destinations(*args, **kwargs):
            self.assertTrue(gate.wait(nova_base.ENGINE_WAIT))
            return select(*args, **kwargs)
        self.useFixture(fixtures.MonkeyPatch(
            'nova.scheduler.manager.SchedulerManager.select_destinations',
            select_destinations))
        return gate.set

    def start_build(self, server, expect):
        """Ask nova-api to build a held server, as the lease's start does.

        :param expect: the status code, or the list of those, it may
            answer.
        """
        return self.admin_api.api_post(
            '/servers/%s/action' % server['id'],
            {compute_client.START_ACTION: {
                'lease_id': self.lease_id_of(server)}},
            check_response_status=(expect if isinstance(expect, list)
                                   else [expect]))

    def test_two_starts_on_a_host_with_room_for_one_build_only_one(self):
        start = clock_mod.SYSTEM.now().replace(microsecond=0) + HOUR
        first = self.boot_reserved_now(dates.format_date(start))
        second = self.boot_reserved_now(dates.format_date(start))
        self.assertEqual(['compute-2'] * 2, [
            self.lease_of(server)['reservations'][0]['host']
            for server in (first, second)])
        # Room for one 2048 MB server: 3072 MB left in Placement.
        kept = self.set_memory_reserved_on_compute_2(8192 - 3072)
        release = self.hold_the_scheduler()

        self.start_build(first, 202)
        # The first build is cast but not claimed in Placement yet.
        answer = self.start_build(second, 409)
        self.assertIn('waits for room on compute-2', str(answer.body))
        release()
        self._wait_for_state_change(first, 'ACTIVE')
        self.assertEqual('RESERVED', self.user_api(
            nova_base.OWNER).get_server(second['id'])['status'])

        # Once there is room, the second lease's start builds it.
        self.set_memory_reserved_on_compute_2(kept)
        self.run_engine(at=start)
        for server in (first, second):
            built = self._wait_for_state_change(server, 'ACTIVE')
            self.assertEqual('compute-2', self.admin_api.get_server(
                built['id'])[HOST_KEY])
            self.assertEqual('ACTIVE', self.lease_of(server)['status'])

    def test_two_starts_at_once_on_a_host_with_room_for_one_fail_no_build(
            self):
        start = clock_mod.SYSTEM.now().replace(microsecond=0) + HOUR
        servers = [self.boot_reserved_now(dates.format_date(start))
                   for _ in range(2)]
        kept = self.set_memory_reserved_on_compute_2(8192 - 3072)
        release = self.hold_the_scheduler()
        answers = []

        def start_build(server):
            answers.append(self.start_build(server, [202, 409]).status)
        threads = [threading.Thread(target=start_build, args=(server,))
                   for server in servers]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join(nova_base.ENGINE_WAIT)
        release()
        # At most one was cast: both may have counted the other.
        self.assertEqual(2, len(answers))
        self.assertLessEqual(answers.count(202), 1)

        self.set_memory_reserved_on_compute_2(kept)
        self.run_engine(at=start)
        for server in servers:
            built = self._wait_for_state_change(server, 'ACTIVE')
            self.assertEqual('compute-2', self.admin_api.get_server(
                built['id'])[HOST_KEY])
