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

"""The sandbox with its leases DB on MariaDB and on PostgreSQL.

``reservation-sandbox --db-url`` puts the leases DB on a database server,
as an operator's ``[reservation_database] connection`` does: the sandbox
migrates it, and the lease API in nova-api, ReservationFilter, the Cinder
extension and the engine all use it. One sandbox per database (each costs
about a minute) runs a host lease with a server booted onto it and a
reserved volume through the unmodified clients.

Each class gets a database of its own from oslo.db's provisioning (user
``openstack_citest`` on localhost, as the DB tests); without a server the
class is skipped, unless ``RESERVATION_REQUIRE_MYSQL=1`` or
``RESERVATION_REQUIRE_POSTGRESQL=1`` says that it must run.
"""

import datetime

from tests.e2e import base
from tests.e2e import test_host_reservation as host_tests
from tests.e2e import test_volume_reservation as volume_tests

# compute-1 stays an ordinary host.
RESERVABLE = {'compute-2': 'true', 'compute-3': 'true'}
HOST_REQUEST = ('resource_type=physical:host,min=1,max=1,'
                'resource_properties=["=", "$gpu", "true"]')


class _DatabaseTests:
    """The tests, and a sandbox whose leases DB is on ``DATABASE``."""

    HOSTS = 3

    def setUp(self):
        super().setUp()
        self.add_reservable_hosts(RESERVABLE)

    def lease_status(self, name):
        return self.run_json(['openstack', 'reservation', 'lease', 'show',
                              name], user='demo')['status']

    def test_a_server_boots_on_the_host_its_lease_reserved(self):
        now = datetime.datetime.now(datetime.timezone.utc)
        out = self.run_cli([
            'openstack', 'reservation', 'lease', 'create', '--reservation',
            HOST_REQUEST, '--start-date', 'now', '--end-date',
            host_tests._date(now + datetime.timedelta(days=1)), 'db-run'],
            user='demo')
        self.assertIn('Created a new lease', out)
        self.wait_for(lambda: self.lease_status('db-run') == 'ACTIVE')
        lease = self.run_json(['openstack', 'reservation', 'lease', 'show',
                               'db-run'], user='demo')
        reservation_id = host_tests._reservation_of(lease)['id']
        [host] = self.run_json(['openstack', 'aggregate', 'show',
                                reservation_id])['hosts']
        self.assertIn(host, RESERVABLE)

        self.run_cli(['nova', 'boot', '--flavor', '1', '--image',
                      self.sandbox.env['admin']['SANDBOX_IMAGE'], '--nic',
                      'none', '--hint', 'reservation=' + reservation_id,
                      'db-job'], user='demo')
        server = self.wait_for(lambda: self._settled('db-job'))
        self.assertEqual('ACTIVE', server['status'])
        self.assertEqual(host, self.run_json(
            ['openstack', 'server', 'show', server['id']])[
                'OS-EXT-SRV-ATTR:hypervisor_hostname'])

        out = self.run_cli(['openstack', 'reservation', 'lease', 'delete',
                            'db-run'], user='demo')
        self.assertIn('Deleted lease: db-run', out)
        self.assertEqual(sorted(RESERVABLE), sorted(self.run_json(
            ['openstack', 'aggregate', 'show', 'freepool'])['hosts']))
        self.run_cli(['nova', 'delete', 'db-job'], user='demo')

    def _settled(self, name):
        server = self.run_json(['openstack', 'server', 'show', name],
                               user='demo')
        return server if server['status'] in ('ACTIVE', 'ERROR') else None

    def test_a_reserved_volume_lives_in_its_lease_window(self):
        now = datetime.datetime.utcnow()
        out = self.run_cli([
            'cinder', 'create', '--hint', 'reserved=True', '--hint',
            # The window is long enough to be seen by a loaded machine's
            # clients, which take seconds to list.
            volume_tests._lease_params(now + datetime.timedelta(seconds=8),
                                       now + datetime.timedelta(seconds=40)),
            '--name', 'db-scratch', '1'], user='demo')
        self.assertRegex(out, r'\| status +\| reserved +\|')
        self.wait_for(lambda: self.volumes() == {'db-scratch': 'available'},
                      timeout=90, interval=0.5)
        self.wait_for(lambda: self.volumes() == {}, timeout=90,
                      interval=0.5)

    def volumes(self):
        """``{name: status}`` of the demo project's volumes."""
        return volume_tests.TestVolumeReservation.volumes(self)

    def cinder(self, *argv, **kwargs):
        return self.run_cli(['cinder'] + list(argv), **kwargs)


class TestSandboxOnMariaDB(_DatabaseTests, base.MariaDB,
                           base.SandboxTestCase):
    pass


class TestSandboxOnPostgreSQL(_DatabaseTests, base.PostgreSQL,
                              base.SandboxTestCase):
    pass
