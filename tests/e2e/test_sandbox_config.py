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

"""A sandbox configured as an operator moving from Blazar would have it.

``./run-sandbox --config reservation.host_on_end=delete_instances``: the
end of a host lease deletes the servers on its hosts, as Blazar's does,
with the unmodified clients.
"""

import datetime

from tests.e2e import base


class TestSandboxConfig(base.SandboxTestCase):

    HOSTS = 2
    OPTIONS = ('--config', 'reservation.host_on_end=delete_instances')

    def test_the_end_of_a_host_lease_deletes_its_servers_as_blazars(self):
        self.add_reservable_hosts({'compute-2': 'false'})
        end = datetime.datetime.now(datetime.timezone.utc) + (
            datetime.timedelta(days=1))
        self.run_cli(['openstack', 'reservation', 'lease', 'create',
                      '--reservation', 'resource_type=physical:host,min=1,'
                      'max=1', '--start-date', 'now', '--end-date',
                      end.strftime('%Y-%m-%d %H:%M'), 'blazar-end'],
                     user='demo')
        lease = self.wait_for(lambda: (lambda lease: lease['status'] ==
                                       'ACTIVE' and lease)(self.run_json(
                                           ['openstack', 'reservation',
                                            'lease', 'show', 'blazar-end'],
                                           user='demo')))
        [reservation] = base.listed_objects(lease['reservations'])
        self.assertEqual('delete_instances', reservation['on_end'])
        self.run_cli(['nova', 'boot', '--flavor', '1', '--image',
                      self.sandbox.env['demo']['SANDBOX_IMAGE'], '--nic',
                      'none', '--hint', 'reservation=' + reservation['id'],
                      '--poll', 'job'], user='demo')
        job = self.run_json(['openstack', 'server', 'show', 'job'],
                            user='demo')
        # The host is shown to an administrator only.
        self.assertEqual('compute-2', self.run_json(
            ['openstack', 'server', 'show', job['id']])[
                'OS-EXT-SRV-ATTR:hypervisor_hostname'])

        self.run_cli(['openstack', 'reservation', 'lease', 'delete',
                      'blazar-end'], user='demo')
        self.assertEqual([], self.run_json(['openstack', 'server', 'list'],
                                           user='demo'))
