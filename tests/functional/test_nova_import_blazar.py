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

"""Leases imported from Blazar carry on, in Nova's functional harness.

Blazar 18 writes its database (``tests/blazar_peer_db.py``) with hosts
named as the harness's computes; Nova's aggregates are set as Blazar's
manager leaves them (the free pool, the running lease's aggregate); the
import brings the leases over, and the lease API, the scheduler filter
and the engine take them from there (also for a ``flavor:instance``
lease, whose flavor at the start copies the source flavor Blazar kept).
A floating IP lease that Blazar started ends with the engine against a
real Neutron (:mod:`tests.neutron_service`).
"""

import datetime

from nova.tests.functional.api import client

from reservation_ext.blazar_import import importer
from reservation_ext import clock as clock_mod
from reservation_ext import conf as conf_mod
from reservation_ext import context
from tests.functional import blazar_peer
from tests.functional import nova_base
from tests import neutron_service

HOUR = datetime.timedelta(hours=1)
DAY = datetime.timedelta(days=1)
# The project and user of the leases that tests/blazar_peer_db.py writes.
PROJECT = 'a0b1c2d3e4f5a6b7c8d9e0f1a2b3c4d5'


class _Imported(nova_base.NovaTestCase):
    """Blazar's database written around ``now`` + SHIFT, imported."""

    SHIFT = datetime.timedelta(0)
    # More options of tests/blazar_peer_db.py.
    OPTIONS = ()

    def setUp(self):
        super().setUp()
        self.now = clock_mod.SYSTEM.now().replace(microsecond=0) + self.SHIFT
        self.blazar = self.useFixture(blazar_peer.BlazarDatabase(
            self, self.now, 'head', *self.OPTIONS))
        pools = {'freepool': ['compute-2', 'compute-3']}
        if 'active-hosts' in self.blazar.made['leases']:
            pools[self.blazar.lease('active-hosts')['reservation']] = [
                'compute-1']
        for name, hosts in pools.items():
            aggregate = self.admin_api.post_aggregate(
                {'aggregate': {'name': name}})
            for host in hosts:
                self.admin_api.add_host_to_aggregate(aggregate['id'], host)
        importer.import_blazar(context.get_admin_context(), clock_mod.SYSTEM,
                               conf_mod.CONF, self.blazar.url)

    def blazar_flavor(self, reservation):
        """Make the private flavor as Blazar 18 does at a create.

        Its extra specs ask Placement for Blazar's own resource class;
        the lease's project may use it.
        """
        self.admin_api.post_flavor({'flavor': {
            'id': reservation, 'name': 'reservation:' + reservation,
            'vcpus': 1, 'ram': 512, 'disk': 1,
            'os-flavor-access:is_public': False}})
        self.admin_api.post_extra_spec(reservation, {'extra_specs': {
            'aggregate_instance_extra_specs:reservation': reservation,
            _resource_class(reservation): '1'}})
        self.admin_api.api_post('/flavors/%s/action' % reservation,
                                {'addTenantAccess': {'tenant': PROJECT}})

    def boot_twice_then_409(self, flavor_id, host='compute-2'):
        """Boot the amount (2) with the flavor, on its seats; then a 409."""
        request = {'server': self._build_server(flavor_id=flavor_id,
                                                networks='none')}
        api = self.user_api(PROJECT)
        for _ in range(2):
            server = self._wait_for_state_change(api.post_server(request),
                                                 'ACTIVE')
            self.assertEqual(host, self.admin_api.get_server(
                server['id'])['OS-EXT-SRV-ATTR:host'])
        error = self.assertRaises(client.OpenStackApiException,
                                  api.post_server, request)
        self.assertEqual(409, error.response.status_code)


def _resource_class(reservation):
    """Blazar's resource class of a reservation, as its flavor asks it."""
    return ('resources:CUSTOM_RESERVATION_' +
            reservation.upper().replace('-', '_'))


class ImportedLeases(_Imported):

    def test_an_imported_lease_shows_as_blazar_showed_it(self):
        ids = self.blazar.lease('pending-hosts')
        lease = self.lease_api('GET', '/leases/' + ids['lease'],
                               project=PROJECT)['lease']
        self.assertEqual(
            ('pending-hosts', 'PENDING', PROJECT,
             nova_base.lease_date(self.now + HOUR),
             nova_base.lease_date(self.now + DAY)),
            (lease['name'], lease['status'], lease['project_id'],
             lease['start_date'][:16].replace('T', ' '),
             lease['end_date'][:16].replace('T', ' ')))
        reservation, = lease['reservations']
        self.assertEqual(
            (ids['reservation'], 'physical:host', 2, 2, 'default',
             '["=", "$gpu", "true"]'),
            tuple(reservation[key] for key in (
                'id', 'resource_type', 'min', 'max', 'before_end',
                'resource_properties')))
        hosts = self.admin_lease_api('GET', '/os-hosts')['hosts']
        self.assertEqual(['compute-1', 'compute-2', 'compute-3'],
                         sorted(host['hypervisor_hostname']
                                for host in hosts))
        names = {host['id']: host['hypervisor_hostname'] for host in hosts}
        allocations = self.admin_lease_api(
            'GET', '/os-hosts/allocations?lease_id=' + ids['lease'])
        self.assertEqual(['compute-2', 'compute-3'], sorted(
            names[allocation['resource_id']]
            for allocation in allocations['allocations']))

    def test_the_engine_starts_and_ends_an_imported_lease(self):
        ids = self.blazar.lease('pending-hosts')
        hint = {'reservation': ids['reservation']}
        self.run_engine(self.now + HOUR + datetime.timedelta(minutes=1))
        lease = self.lease_api('GET', '/leases/' + ids['lease'],
                               project=PROJECT)['lease']
        self.assertEqual('ACTIVE', lease['status'])
        self.assertEqual(['compute-2', 'compute-3'], sorted(
            self.aggregate(ids['reservation'])['hosts']))
        server = self.boot(project=PROJECT, hints=hint)
        self.assertIn(server['OS-EXT-SRV-ATTR:hypervisor_hostname'],
                      ('compute-2', 'compute-3'))

        self.run_engine(self.now + DAY + datetime.timedelta(minutes=1))
        lease = self.lease_api('GET', '/leases/' + ids['lease'],
                               project=PROJECT)['lease']
        self.assertEqual('TERMINATED', lease['status'])
        self.assertEqual(['compute-2', 'compute-3'],
                         sorted(self.aggregate('freepool')['hosts']))

    def test_a_running_imported_lease_keeps_its_host(self):
        ids = self.blazar.lease('active-hosts')
        server = self.boot(project=PROJECT,
                           hints={'reservation': ids['reservation']})
        self.assertEqual('compute-1',
                         server['OS-EXT-SRV-ATTR:hypervisor_hostname'])
        # Another project's boot stays off the leased and free hosts.
        server = self.boot(project=nova_base.OTHER)
        self.assertEqual('compute-4',
                         server['OS-EXT-SRV-ATTR:hypervisor_hostname'])


class ImportedInstanceReservation(_Imported):
    """The instance reservation's lease began a minute ago, not started."""

    SHIFT = -3 * DAY - datetime.timedelta(minutes=1)

    def test_an_imported_instance_reservation_boots_on_its_seats(self):
        reservation = self.blazar.lease('instances')['reservation']
        self.blazar_flavor(reservation)
        self.run_engine(clock_mod.SYSTEM.now())

        self.boot_twice_then_409(reservation)
        # Ours replaced Blazar's at the start, under the same id.
        self.assertEqual(
            {'reservation:id': reservation},
            self.admin_api.api_get('/flavors/%s/os-extra_specs' %
                                   reservation).body['extra_specs'])


class ImportedFlavorInstanceReservation(_Imported):
    """The flavor:instance lease began a minute ago, not started (alone)."""

    SHIFT = -14 * DAY - datetime.timedelta(minutes=1)
    OPTIONS = ('--only', 'flavor-instances')

    def test_an_imported_flavor_reservation_boots_on_its_seats(self):
        reservation = self.blazar.lease('flavor-instances')['reservation']
        self.blazar_flavor(reservation)
        self.run_engine(clock_mod.SYSTEM.now())

        # Ours replaced Blazar's at the start: the source flavor's copy
        # (Blazar kept the source as the request's resource_properties).
        flavor = self.admin_api.api_get(
            '/flavors/%s' % reservation).body['flavor']
        self.assertEqual(
            (2, 1024, 10, 5, 512,
             {'hw:cpu_policy': 'shared', 'reservation:id': reservation}),
            (flavor['vcpus'], flavor['ram'], flavor['disk'],
             flavor['OS-FLV-EXT-DATA:ephemeral'], flavor['swap'],
             flavor['extra_specs']))
        self.boot_twice_then_409(reservation, host='compute-3')


class StartedImportedInstanceReservation(_Imported):
    """Blazar started the instance reservation a minute ago.

    Blazar's flavor stays; Blazar's manager made its resource class in
    Placement, under the seats' host (compute-2, two of them).
    """

    SHIFT = -3 * DAY - datetime.timedelta(minutes=1)
    OPTIONS = ('--started-instances',)

    def test_boots_with_blazars_flavor_take_the_seats(self):
        reservation = self.blazar.lease('instances')['reservation']
        self.blazar_flavor(reservation)
        resource_class = _resource_class(reservation).split(':')[1]
        self._create_resource_class(resource_class)
        child = self.placement.post('/resource_providers', {
            'name': 'blazar_compute-2',
            'parent_provider_uuid': self._get_provider_uuid_by_name(
                'compute-2')}, version='1.20').body['uuid']
        self.placement.put(
            '/resource_providers/%s/inventories' % child,
            {'resource_provider_generation': 0,
             'inventories': {resource_class: {'total': 2}}}, version='1.26')

        self.boot_twice_then_409(reservation)


class ImportedFloatingIPLease(nova_base.NovaTestCase):
    """A floating IP lease that Blazar started, on a real Neutron's address.

    Blazar's manager made the address in Neutron at the start, in the
    lease's project, tagged as it tags them.
    """

    ADDRESS = '172.24.4.12'

    def setUp(self):
        super().setUp()
        # After Nova's setUp, which resets the endpoints of our clients.
        self.neutron = self.useFixture(neutron_service.NeutronFixture())
        self.now = clock_mod.SYSTEM.now().replace(microsecond=0)
        self.blazar = self.useFixture(blazar_peer.BlazarDatabase(
            self, self.now, 'head',
            '--floating-network', self.neutron.public_network_id,
            '--floating-subnet', self.neutron.public_subnet_id,
            '--only', 'active-floating'))
        self.admin_net = self.neutron.connection().network

    def test_the_engine_ends_an_imported_floating_ip_lease(self):
        ids = self.blazar.lease('active-floating')
        address = self.admin_net.create_ip(
            floating_network_id=self.neutron.public_network_id,
            subnet_id=self.neutron.public_subnet_id,
            floating_ip_address=self.ADDRESS, project_id=PROJECT)
        self.admin_net.set_tags(address, [
            'blazar', 'reservation:' + ids['reservation']])
        importer.import_blazar(context.get_admin_context(), clock_mod.SYSTEM,
                               conf_mod.CONF, self.blazar.url)
        lease = self.lease_api('GET', '/leases/' + ids['lease'],
                               project=PROJECT)['lease']
        reservation, = lease['reservations']
        self.assertEqual(
            ('ACTIVE', self.neutron.public_network_id, 1),
            (lease['status'], reservation['network_id'],
             reservation['amount']))
        self.assertEqual([address.id], [ip.id for ip in self.admin_net.ips()])

        self.run_engine(self.now + 20 * DAY + datetime.timedelta(minutes=1))
        lease = self.lease_api('GET', '/leases/' + ids['lease'],
                               project=PROJECT)['lease']
        self.assertEqual('TERMINATED', lease['status'])
        self.assertEqual([], list(self.admin_net.ips()))
