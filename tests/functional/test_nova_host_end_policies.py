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

"""The end of host leases inside Nova's functional harness.

Real Nova API, conductor, scheduler (with ReservationFilter), fake
computes and fake Glance; the lease API mounted in nova-api; a real engine
run at chosen times. Each end policy (``release``, ``delete_instances``,
``recycle``), the grace period, the ``before_end`` snapshot and the
``[reservation] host_on_end`` default. The engine's notifications go to
oslo.messaging's ``test`` driver.
"""

import datetime

from oslo_messaging.notify import _impl_test

from reservation_ext import clock as clock_mod
from reservation_ext import conf as conf_mod
from reservation_ext import context
from reservation_ext.plugins import physical_host
from tests.functional import nova_base

OWNER = nova_base.OWNER
OTHER = nova_base.OTHER
ALL_RESERVABLE = ['compute-1', 'compute-2', 'compute-3']
MINUTE = datetime.timedelta(minutes=1)


class HostEndPoliciesTest(nova_base.NovaTestCase):

    def setUp(self):
        super().setUp()
        self.flags(driver=['test'], group='oslo_messaging_notifications')
        _impl_test.reset()
        self.addCleanup(_impl_test.reset)
        # Whole minutes, as lease requests write their dates.
        now = clock_mod.SYSTEM.now().replace(second=0, microsecond=0)
        self.start = now + datetime.timedelta(hours=1)
        self.end = now + datetime.timedelta(days=1)
        for name in ALL_RESERVABLE:
            self.add_reservable_host(name)

    # Helpers.

    def create_lease(self, name='run', start=None, end=None, expect=None,
                     lease=None, **reservation):
        """A lease of compute-2 and compute-3 (the two 10-vcpu hosts)."""
        body = dict({
            'name': name,
            'start_date': nova_base.lease_date(start or self.start),
            'end_date': nova_base.lease_date(end or self.end),
            'reservations': [dict({
                'resource_type': 'physical:host', 'min': 2, 'max': 2,
                'hypervisor_properties': '[">=", "$vcpus", "8"]'},
                **reservation)]}, **(lease or {}))
        answer = self.lease_api('POST', '/leases', body, expect=expect)
        return answer['lease'] if expect is None else answer

    def show(self, lease):
        return self.lease_api('GET', '/leases/' + lease['id'])['lease']

    def start_and_boot(self, lease):
        """Start ``lease``; boot one server on its hosts; return it."""
        self.run_engine(self.start + MINUTE)
        self.assertEqual('ACTIVE', self.show(lease)['status'])
        return self.boot(hints=self.hint(lease))

    @staticmethod
    def hint(lease):
        return {'reservation': lease['reservations'][0]['id']}

    @staticmethod
    def host_of(server):
        return server['OS-EXT-SRV-ATTR:hypervisor_hostname']

    def server_status(self, server):
        servers = self.admin_api.get_servers(
            search_opts={'all_tenants': 1, 'uuid': server['id']})
        return servers[0]['status'] if servers else None

    def pool(self, name):
        aggregate = self.aggregate(name)
        return None if aggregate is None else sorted(aggregate['hosts'])

    @staticmethod
    def notified():
        """The event types of the lease notifications sent so far."""
        return [message['event_type']
                for _ctx, message, _priority, _retry
                in _impl_test.NOTIFICATIONS
                if message['publisher_id'] == 'reservation']

    # The end policies.

    def test_release_leaves_the_instances_and_frees_the_hosts(self):
        lease = self.create_lease(on_end='release')
        server = self.start_and_boot(lease)
        self.run_engine(self.end + MINUTE)
        self.assertEqual('TERMINATED', self.show(lease)['status'])
        self.assertEqual('ACTIVE', self.server_status(server))
        self.assertEqual(ALL_RESERVABLE, self.pool('freepool'))
        self.assertIsNone(self.aggregate(lease['reservations'][0]['id']))
        # The hosts are free for the next lease at once.
        self.create_lease(name='next', start=self.end + MINUTE,
                          end=self.end + datetime.timedelta(days=1))

    def test_delete_instances_deletes_them_then_frees_the_hosts(self):
        lease = self.create_lease(on_end='delete_instances')
        server = self.start_and_boot(lease)
        self.run_engine(self.end + MINUTE)
        self._wait_until_deleted(server)
        self.assertEqual('TERMINATED', self.show(lease)['status'])
        self.assertEqual(ALL_RESERVABLE, self.pool('freepool'))

    def test_recycled_hosts_return_only_once_their_instances_are_gone(self):
        lease = self.create_lease(on_end='recycle')
        self.assertEqual('recycle', lease['reservations'][0]['on_end'])
        server = self.start_and_boot(lease)
        busy = self.host_of(server)
        empty = ({'compute-2', 'compute-3'} - {busy}).pop()

        self.run_engine(self.end + MINUTE)
        self.assertEqual('TERMINATED', self.show(lease)['status'])
        self.assertEqual('ACTIVE', self.server_status(server))
        # The host without instances was recycled at once; the other one
        # waits in the recycling pool and takes no new instance.
        self.assertEqual(sorted(['compute-1', empty]), self.pool('freepool'))
        self.assertEqual([busy], self.pool('recyclepool'))
        self.boot(hints=self.hint(lease), expect_state='ERROR')
        self.assertNotEqual(busy, self.host_of(self.boot(project=OTHER)))

        # Checked again a poll later: still there, still recycling.
        self.run_engine(self.end + 2 * MINUTE)
        self.assertEqual([busy], self.pool('recyclepool'))

        self.admin_api.delete_server(server['id'])
        self._wait_until_deleted(server)
        self.run_engine(self.end + 3 * MINUTE)
        self.assertEqual(ALL_RESERVABLE, self.pool('freepool'))
        self.assertEqual([], self.pool('recyclepool'))

    def test_a_recycling_host_serves_not_even_the_lease_that_holds_it(self):
        first = self.create_lease(on_end='recycle')
        second = self.create_lease(name='second', start=self.end,
                                   end=self.end + datetime.timedelta(days=1))
        server = self.start_and_boot(first)
        busy = self.host_of(server)
        empty = ({'compute-2', 'compute-3'} - {busy}).pop()

        # The first lease ends as the second starts.
        self.run_engine(self.end + MINUTE)
        self.assertEqual('ACTIVE', self.show(second)['status'])
        for _ in range(3):
            self.assertEqual(empty, self.host_of(
                self.boot(hints=self.hint(second))))
        self.assertEqual(['compute-1'], self.pool('freepool'))

        self.admin_api.delete_server(server['id'])
        self._wait_until_deleted(server)
        self.run_engine(self.end + 2 * MINUTE)
        # Recycled into the second lease's pool, not the free pool.
        self.assertEqual([], self.pool('recyclepool'))
        self.assertEqual(['compute-1'], self.pool('freepool'))
        self.assertEqual(['compute-2', 'compute-3'],
                         self.pool(second['reservations'][0]['id']))

    # The grace period.

    def test_instances_run_through_the_grace_period_then_are_deleted(self):
        lease = self.create_lease(on_end='delete_instances',
                                  grace_period='2h')
        self.assertEqual(7200, lease['reservations'][0]['grace_period'])
        server = self.start_and_boot(lease)

        self.run_engine(self.end + MINUTE)
        self.assertEqual('TERMINATED', self.show(lease)['status'])
        self.assertEqual(['lease.create', 'lease.event.start_lease',
                          'lease.event.before_end_lease',
                          'lease.event.end_lease',
                          'lease.event.grace_period_start'],
                         self.notified())
        # During the grace period the instances run, the hosts stay the
        # lease's, and nobody may boot there any more.
        self.assertEqual('ACTIVE', self.server_status(server))
        self.assertEqual(['compute-2', 'compute-3'],
                         self.pool(lease['reservations'][0]['id']))
        self.assertEqual(['compute-1'], self.pool('freepool'))
        self.boot(hints=self.hint(lease), expect_state='ERROR')
        self.run_engine(self.end + datetime.timedelta(minutes=119))
        self.assertEqual('ACTIVE', self.server_status(server))

        self.run_engine(self.end + datetime.timedelta(hours=2, minutes=1))
        self._wait_until_deleted(server)
        self.assertEqual(ALL_RESERVABLE, self.pool('freepool'))
        self.assertIsNone(self.aggregate(lease['reservations'][0]['id']))

    def test_no_other_lease_gets_the_hosts_during_the_grace_period(self):
        self.create_lease(grace_period='2h')
        answer = self.create_lease(
            name='next', start=self.end + MINUTE,
            end=self.end + datetime.timedelta(days=1), expect=409)
        self.assertIn('Not enough hosts', answer['error_message'])
        self.create_lease(name='later',
                          start=self.end + datetime.timedelta(hours=2),
                          end=self.end + datetime.timedelta(days=1))

    def test_deleting_a_lease_ends_its_grace_period_at_once(self):
        lease = self.create_lease(on_end='delete_instances',
                                  grace_period='1d')
        server = self.start_and_boot(lease)
        self.run_engine(self.end + MINUTE)
        self.assertEqual('ACTIVE', self.server_status(server))
        self.lease_api('DELETE', '/leases/' + lease['id'])
        self._wait_until_deleted(server)
        self.assertEqual(ALL_RESERVABLE, self.pool('freepool'))
        self.run_engine(self.end + datetime.timedelta(days=1, minutes=1))
        self.assertEqual(ALL_RESERVABLE, self.pool('freepool'))

    def test_an_engine_that_died_in_a_grace_period_end_loses_nothing(self):
        lease = self.create_lease(on_end='delete_instances',
                                  grace_period='1h')
        server = self.start_and_boot(lease)
        self.run_engine(self.end + MINUTE)
        over = self.end + datetime.timedelta(hours=1, minutes=1)
        # An engine claims the end of the grace period, then dies.
        dead = physical_host.PhysicalHostPlugin(
            conf_mod.CONF, clock_mod.ManualClock(over))
        self.assertEqual(1, len(dead.end_policies._claim_graces(
            context.get_admin_context())))
        # Its claim holds: the other engines leave the work to it.
        self.run_engine(over)
        self.assertEqual('ACTIVE', self.server_status(server))
        # Until the claim runs out.
        self.run_engine(over + datetime.timedelta(
            seconds=conf_mod.CONF.reservation.event_claim_timeout + 1))
        self._wait_until_deleted(server)
        self.assertEqual(ALL_RESERVABLE, self.pool('freepool'))

    # Before the end.

    def test_before_end_snapshots_every_server_on_the_hosts(self):
        before_end = self.end - datetime.timedelta(hours=2)
        lease = self.create_lease(
            before_end='snapshot',
            lease={'before_end_date': nova_base.lease_date(before_end)})
        self.assertEqual('snapshot', lease['reservations'][0]['before_end'])
        servers = [self.start_and_boot(lease),
                   self.boot(hints=self.hint(lease))]
        self.run_engine(before_end + MINUTE)
        self.assertEqual('ACTIVE', self.show(lease)['status'])
        self.assertIn('lease.event.before_end_lease', self.notified())
        images = {image['name']: image for image in self.glance.detail(None)}
        for server in servers:
            image = images[server['name'] + '-snapshot']
            self.assertEqual(server['id'],
                             image['properties'].get('instance_uuid'))
            self.assertEqual('ACTIVE', self.server_status(server))

    def test_default_before_end_only_notifies(self):
        lease = self.create_lease()
        self.assertEqual('default', lease['reservations'][0]['before_end'])
        self.start_and_boot(lease)
        images = len(self.glance.detail(None))
        self.run_engine(self.end - datetime.timedelta(minutes=59))
        self.assertIn('lease.event.before_end_lease', self.notified())
        self.assertEqual(images, len(self.glance.detail(None)))

    # The default end and bad input.

    def test_host_on_end_is_the_default_on_end(self):
        self.flags(host_on_end='delete_instances', group='reservation')
        lease = self.create_lease()
        self.assertEqual('delete_instances',
                         lease['reservations'][0]['on_end'])
        server = self.start_and_boot(lease)
        self.run_engine(self.end + MINUTE)
        self._wait_until_deleted(server)

    def test_release_is_the_default_of_host_on_end(self):
        lease = self.create_lease()
        self.assertEqual('release', lease['reservations'][0]['on_end'])
        self.assertNotIn('grace_period', lease['reservations'][0])

    def test_bad_end_fields_are_400_and_create_nothing(self):
        for bad, field in (({'on_end': 'explode'}, 'on_end'),
                           ({'before_end': 'backup'}, 'before_end'),
                           ({'grace_period': 'soon'}, 'grace_period'),
                           ({'grace_period': 0}, 'grace_period')):
            answer = self.create_lease(expect=400, **bad)
            self.assertIn('reservations[0].' + field,
                          answer['error_message'])
        self.assertEqual([], self.lease_api('GET', '/leases')['leases'])
