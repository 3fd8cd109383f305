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

"""Instance-capacity reservations with the unmodified clients.

python-blazarclient's ``openstack reservation lease create`` sends Blazar
18's ``virtual:instance`` body; the sandbox's engine starts the lease,
and ``openstack server create --flavor <flavor_id>`` boots into it, with
or without Blazar's ``--hint group=<server_group_id>``.
"""

import json

from tests.e2e import base

RESERVABLE = {'compute-3': 'false', 'compute-4': 'false'}


class TestInstanceCapacity(base.SandboxTestCase):

    def lease(self, name):
        return self.run_json(['openstack', 'reservation', 'lease', 'show',
                              name], user='demo')

    def server_create(self, flavor_id, name, *options, **kwargs):
        return self.run_cli(
            ['openstack', 'server', 'create', '--flavor', flavor_id,
             '--image', self.sandbox.env['demo']['SANDBOX_IMAGE'],
             '--nic', 'none', '--wait', name, *options], user='demo',
            **kwargs)

    def test_a_blazar_capacity_lease_boots_servers_with_its_flavor(self):
        self.add_reservable_hosts(RESERVABLE)
        out = self.run_cli([
            'openstack', 'reservation', 'lease', 'create', '--reservation',
            'resource_type=virtual:instance,vcpus=1,memory_mb=512,disk_gb=1,'
            'amount=2,affinity=False', '--end-date', '2030-01-01 00:00',
            'capacity1'], user='demo')
        self.assertIn('Created a new lease', out)
        lease = self.wait_for(lambda: (lambda lease: lease['status'] ==
                                       'ACTIVE' and lease)(
                                           self.lease('capacity1')))
        [reservation] = base.listed_objects(lease['reservations'])
        self.assertEqual((2, False, reservation['id']),
                         (reservation['amount'], reservation['affinity'],
                          reservation['flavor_id']))
        # The group is the lease owner's, as in Blazar: the demo user sees
        # it, and Blazar's group hint boots into it.
        group = self.run_json(['openstack', 'server', 'group', 'show',
                               reservation['server_group_id']], user='demo')
        self.assertEqual('anti-affinity', group['policy'])
        hosts = set()
        for name, hint in (('cap-vm1', ()), ('cap-vm2', (
                '--hint', 'group=' + reservation['server_group_id']))):
            server = json.loads(self.server_create(
                reservation['flavor_id'], name, *hint, '-f', 'json'))
            self.assertEqual('ACTIVE', server['status'])
            hosts.add(self.run_json(['openstack', 'server', 'show',
                                     server['id']])['OS-EXT-SRV-ATTR:host'])
        self.assertEqual(set(RESERVABLE), hosts)
        error = self.server_create(reservation['flavor_id'], 'cap-vm3',
                                   expect_failure=True)
        self.assertIn('All 2 instances of reservation %s are in use'
                      % reservation['id'], error)
