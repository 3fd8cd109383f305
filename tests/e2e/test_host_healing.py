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

"""Failed leased hosts healed, with the unmodified clients.

The sandbox's engine runs the host monitor (``[reservation] host_monitor``,
every few seconds). The admin disables a leased host's nova-compute with
``openstack compute service set --disable``, as an operator takes a host
away; the lease gets a replacement host (its aggregate too, once started),
or, with no free matching host, is ``degraded`` until the service is
enabled again. Each test enables its host again and waits until it is
reservable, so that the next test finds every host.
"""

import datetime

from tests.e2e import base

# Two gpu hosts replace each other; compute-4 has no gpu, compute-1 is
# not reservable.
RESERVABLE = {'compute-2': 'true', 'compute-3': 'true', 'compute-4': 'false'}
GPU_HOSTS = ['compute-2', 'compute-3']
GPU_HOST = ('resource_type=physical:host,min=1,max=1,'
            'resource_properties=["=", "$gpu", "true"]')
ONLY_COMPUTE_4 = ('resource_type=physical:host,min=1,max=1,'
                  'hypervisor_properties=["==", "$hypervisor_hostname", '
                  '"compute-4"]')
# Within [reservation] healing_interval (60 minutes): healed at once.
SOON = datetime.timedelta(minutes=30)


def _date(moment):
    return moment.strftime('%Y-%m-%d %H:%M')


class TestHostHealing(base.SandboxTestCase):

    def setUp(self):
        super().setUp()
        self.add_reservable_hosts(RESERVABLE)

    def create_lease(self, name, reservation, start):
        """A lease of the demo user until tomorrow, deleted at cleanup."""
        now = datetime.datetime.now(datetime.timezone.utc)
        out = self.run_cli(['openstack', 'reservation', 'lease', 'create',
                            '--reservation', reservation,
                            '--start-date', start, '--end-date',
                            _date(now + datetime.timedelta(days=1)), name],
                           user='demo')
        self.assertIn('Created a new lease', out)
        self.addCleanup(self.run_cli, ['openstack', 'reservation', 'lease',
                                       'delete', name], user='demo')
        return self.lease(name)

    def lease(self, name):
        return self.run_json(['openstack', 'reservation', 'lease', 'show',
                              name], user='demo')

    def reservation(self, name):
        [reservation] = base.listed_objects(self.lease(name)['reservations'])
        return reservation

    def booked(self, reservation_id):
        """The hypervisor hostnames that hold the reservation's bookings."""
        names = {host['id']: host['hypervisor_hostname'] for host in
                 self.run_json(['openstack', 'reservation', 'host', 'list'])}
        return sorted(
            names[allocation['resource_id']] for allocation in self.run_json(
                ['openstack', 'reservation', 'allocation', 'list', 'host'])
            if any(booking['id'] == reservation_id
                   for booking in allocation['reservations']))

    def host(self, name):
        return self.run_json(['openstack', 'reservation', 'host', 'show',
                              name])

    def disable(self, name):
        """Disable the host's nova-compute; enabled again at cleanup."""
        self.run_cli(['openstack', 'compute', 'service', 'set', '--disable',
                      '--disable-reason', 'test', name, 'nova-compute'])
        self.addCleanup(self.enable, name)

    def enable(self, name):
        """Enable the host's nova-compute; wait until it is reservable."""
        self.run_cli(['openstack', 'compute', 'service', 'set', '--enable',
                      name, 'nova-compute'])
        self.wait_for(lambda: self.host(name)['reservable'])

    def test_a_pending_lease_gets_a_replacement_for_its_disabled_host(self):
        now = datetime.datetime.now(datetime.timezone.utc)
        lease = self.create_lease('soon', GPU_HOST, _date(now + SOON))
        self.assertEqual('PENDING', lease['status'])
        reservation_id = self.reservation('soon')['id']
        [failed] = self.booked(reservation_id)
        [replacement] = set(GPU_HOSTS) - {failed}

        self.disable(failed)
        self.assertEqual([replacement], self.wait_for(
            lambda: self.booked(reservation_id) == [replacement] and
            [replacement]))
        host = self.host(failed)
        self.assertFalse(host['reservable'])
        self.assertEqual('disabled', host['failure'])
        self.assertIsNotNone(host['failed_at'])
        self.assertFalse(self.lease('soon')['degraded'])

    def test_an_active_lease_aggregate_gets_the_replacement_host(self):
        self.create_lease('now', GPU_HOST, 'now')
        self.wait_for(lambda: self.lease('now')['status'] == 'ACTIVE')
        reservation_id = self.reservation('now')['id']
        [failed] = self.run_json(['openstack', 'aggregate', 'show',
                                  reservation_id])['hosts']
        [replacement] = set(GPU_HOSTS) - {failed}

        self.disable(failed)
        self.wait_for(lambda: self.run_json(
            ['openstack', 'aggregate', 'show', reservation_id])['hosts'] ==
            [replacement])
        self.assertIn(failed, self.run_json(['openstack', 'aggregate',
                                             'show', 'freepool'])['hosts'])
        self.assertEqual([replacement], self.booked(reservation_id))
        reservation = self.reservation('now')
        self.assertTrue(reservation['resources_changed'])
        self.assertFalse(reservation['missing_resources'])
        self.assertFalse(self.lease('now')['degraded'])

        # Back: reservable again, and the lease keeps its replacement.
        self.enable(failed)
        self.assertEqual([replacement], self.run_json(
            ['openstack', 'aggregate', 'show', reservation_id])['hosts'])

    def test_a_lease_without_a_free_matching_host_is_degraded_until_back(
            self):
        self.create_lease('pinned', ONLY_COMPUTE_4, 'now')
        self.wait_for(lambda: self.lease('pinned')['status'] == 'ACTIVE')

        self.disable('compute-4')
        self.wait_for(lambda: self.lease('pinned')['degraded'])
        reservation = self.reservation('pinned')
        self.assertTrue(reservation['missing_resources'])
        self.assertEqual(['compute-4'], reservation['failed_hosts'])
        self.assertEqual(['compute-4'], self.booked(reservation['id']))

        self.enable('compute-4')
        self.wait_for(lambda: not self.lease('pinned')['degraded'])
        reservation = self.reservation('pinned')
        self.assertFalse(reservation['missing_resources'])
        self.assertEqual([], reservation['failed_hosts'])
        self.assertEqual(['compute-4'], self.run_json(
            ['openstack', 'aggregate', 'show', reservation['id']])['hosts'])
