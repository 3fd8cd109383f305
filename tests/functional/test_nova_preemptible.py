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

"""Preemptible servers on idle reservable capacity, in Nova's harness.

Real nova-api, conductor, scheduler with ReservationFilter, Placement and
fake computes; a real engine (:meth:`NovaTestCase.run_engine`) whose
clock is moved to just before and to a lease's start, acting on Nova
through the API. compute-1 is an ordinary host; compute-2, compute-3
(10 vCPUs, 8 GB) and compute-4 (the largest, where Nova's RAM weigher
puts a server that may go anywhere) are reservable.
"""

import datetime
import json

from nova.tests.functional.api import client
from oslo_messaging.notify import _impl_test as test_notifier

from reservation_ext import clock as clock_mod
from reservation_ext import dates
from reservation_ext.engine import reclaim
from tests.functional import nova_base

MINUTE = datetime.timedelta(minutes=1)
HOUR = datetime.timedelta(hours=1)
HOST_KEY = 'OS-EXT-SRV-ATTR:hypervisor_hostname'
RESERVABLE = ('compute-2', 'compute-3', 'compute-4')


class PreemptibleTest(nova_base.NovaTestCase):

    def setUp(self):
        super().setUp()
        self.flags(driver=['test'], group='oslo_messaging_notifications')
        test_notifier.reset()
        self.addCleanup(test_notifier.reset)
        for name in RESERVABLE:
            self.add_reservable_host(name)
        self.now = clock_mod.SYSTEM.now().replace(second=0, microsecond=0)
        self.start = self.now + HOUR
        self.preemptible = self._create_flavor(
            memory_mb=1024, vcpu=1, disk=1, ephemeral=0,
            extra_spec={'reservation:preemptible': 'true'})
        self.ordinary = self._create_flavor(memory_mb=1024, vcpu=1, disk=1,
                                            ephemeral=0)

    def boot_with(self, flavor, hints=None, project=nova_base.OTHER):
        """An ACTIVE server of ``project`` with ``flavor``."""
        request = {'server': self._build_server(flavor_id=flavor,
                                                networks='none')}
        if hints:
            request['os:scheduler_hints'] = hints
        server = self.user_api(project).post_server(request)
        return self._wait_for_state_change(server, 'ACTIVE')

    def lease_host(self, host, start, name='hpc'):
        """A lease of ``host`` from ``start`` (a date or 'now')."""
        return self.lease_one_host(
            name, host, start, nova_base.lease_date(self.start + HOUR))

    def preempted(self):
        return [message['payload'] for _ctx, message, _priority, _retry
                in test_notifier.NOTIFICATIONS
                if message['event_type'] == reclaim.PREEMPTED]

    def test_a_preemptible_server_is_reclaimed_before_a_lease_starts(self):
        server = self.boot_with(self.preemptible)
        host = server[HOST_KEY]
        self.assertIn(host, RESERVABLE)
        lease = self.lease_host(host, nova_base.lease_date(self.start))
        [reservation] = lease['reservations']

        # Before the lead time (600 s) the server keeps running.
        self.run_engine(at=self.start - 20 * MINUTE)
        self.assertEqual('ACTIVE',
                         self.admin_api.get_server(server['id'])['status'])
        self.run_engine(at=self.start - 5 * MINUTE)
        self._wait_until_deleted(server)
        [payload] = self.preempted()
        self.assertEqual(
            {'server_id': server['id'], 'project_id': nova_base.OTHER,
             'host': host, 'lease_id': lease['id'],
             'reservation_id': reservation['id'], 'action': 'delete',
             'reason': 'booking',
             'booking_start': dates.format_date(self.start)},
            {key: payload[key] for key in (
                'server_id', 'project_id', 'host', 'lease_id',
                'reservation_id', 'action', 'reason', 'booking_start')})

        # The lease starts on time and its server comes up on the host.
        self.run_engine(at=self.start)
        self.assertEqual('ACTIVE', self.lease_api(
            'GET', '/leases/' + lease['id'])['lease']['status'])
        mine = self.boot_with(self.ordinary, project=nova_base.OWNER,
                              hints={'reservation': reservation['id']})
        self.assertEqual(host, mine[HOST_KEY])
        # Reclaimed once: a later poll stops nothing more.
        self.run_engine(at=self.start + MINUTE)
        self.assertEqual(1, len(self.preempted()))

    def test_a_lease_made_to_start_now_reclaims_in_its_start(self):
        server = self.boot_with(self.ordinary, hints={'preemptible': 'true'})
        host = server[HOST_KEY]
        self.assertIn(host, RESERVABLE)
        lease = self.lease_host(host, 'now')
        self.run_engine(at=clock_mod.SYSTEM.now())
        self._wait_until_deleted(server)
        self.assertEqual('ACTIVE', self.lease_api(
            'GET', '/leases/' + lease['id'])['lease']['status'])
        self.assertEqual([lease['id']],
                         [payload['lease_id'] for payload in self.preempted()])

    def test_shelve_policy_offloads_the_preempted_server(self):
        self.flags(preemptible_on_reclaim='shelve', group='reservation')
        server = self.boot_with(self.preemptible)
        self.lease_host(server[HOST_KEY], nova_base.lease_date(self.start))
        self.run_engine(at=self.start - 5 * MINUTE)
        server = self._wait_for_state_change(server, 'SHELVED_OFFLOADED')
        self.assertIsNone(server[HOST_KEY])
        self.assertEqual(['shelve'],
                         [payload['action'] for payload in self.preempted()])

    def test_a_reserved_servers_slice_stops_only_the_preemptibles_it_needs(
            self):
        # compute-2 (8192 MB) is the first reservable host: the slice of
        # 4096 MB goes there, beside two preemptibles of 3072 MB placed
        # there on purpose (a requested host still passes the filter).
        reserved = self.user_api(nova_base.OWNER).post_server({
            'server': self._build_server(
                name='reserved', flavor_id=self._create_flavor(
                    memory_mb=4096, vcpu=1, disk=1, ephemeral=0),
                networks='none'),
            'os:scheduler_hints': {'reserved': 'True', 'lease_params':
                                   json.dumps({
                                       'start': dates.format_date(
                                           self.start),
                                       'end': dates.format_date(
                                           self.start + HOUR)})}})
        reserved = self._wait_for_state_change(reserved, 'RESERVED')
        flavor = self._create_flavor(
            memory_mb=3072, vcpu=1, disk=1, ephemeral=0,
            extra_spec={'reservation:preemptible': 'true'})
        self.admin_api.microversion = '2.74'
        spot = [self._wait_for_state_change(
            self.admin_api.post_server({'server': dict(self._build_server(
                name=name, flavor_id=flavor, networks='none'),
                host='compute-2')}), 'ACTIVE') for name in ('a', 'b')]
        self.assertEqual(['compute-2'] * 2, [s[HOST_KEY] for s in spot])

        self.run_engine(at=self.start - 5 * MINUTE)
        [payload] = self.preempted()
        self.assertEqual('compute-2', payload['host'])
        [stopped] = [s for s in spot if s['id'] == payload['server_id']]
        self._wait_until_deleted(stopped)
        [kept] = [s for s in spot if s is not stopped]
        self.assertEqual('ACTIVE',
                         self.admin_api.get_server(kept['id'])['status'])
        self.run_engine(at=self.start)
        reserved = self._wait_for_state_change(reserved, 'ACTIVE')
        self.assertEqual('compute-2', self.admin_api.get_server(
            reserved['id'])['OS-EXT-SRV-ATTR:host'])

    def test_preemptibles_never_land_where_a_booking_starts_soon(self):
        self.lease_host('compute-4', nova_base.lease_date(
            self.now + 5 * MINUTE))
        for _ in range(3):
            server = self.boot_with(self.preemptible)
            self.assertIn(server[HOST_KEY], ('compute-2', 'compute-3',
                                             'compute-1'))

    def test_preemptibles_fall_back_to_the_shared_pool(self):
        soon = nova_base.lease_date(self.now + 5 * MINUTE)
        for name in RESERVABLE:
            self.lease_host(name, soon, name=name)
        server = self.boot_with(self.preemptible)
        self.assertEqual('compute-1', server[HOST_KEY])

    def test_ordinary_servers_still_avoid_reservable_hosts(self):
        for _ in range(3):
            server = self.boot_with(self.ordinary)
            self.assertEqual('compute-1', server[HOST_KEY])

    def test_a_bad_preemptible_hint_is_400_and_creates_nothing(self):
        api = self.user_api(nova_base.OTHER)
        for hints, message in (
                ({'preemptible': 'maybe'},
                 'preemptible: must be true or false'),
                ({'preemptible': 'true', 'reserved': 'True'},
                 'preemptible: a reserved server cannot be preemptible')):
            error = self.assertRaises(
                client.OpenStackApiException, api.post_server, {
                    'server': self._build_server(flavor_id=self.ordinary,
                                                 networks='none'),
                    'os:scheduler_hints': hints})
            self.assertEqual(400, error.response.status_code)
            self.assertIn(message, error.response.text)
        self.assertEqual([], api.get_servers())
        self.assertEqual([], self.lease_api('GET', '/leases',
                                            project=nova_base.OTHER)['leases'])
