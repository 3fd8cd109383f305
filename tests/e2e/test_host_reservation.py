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

"""Host reservation with the unmodified clients against the sandbox.

``openstack reservation host ...`` and ``openstack reservation lease ...``
(python-blazarclient) talk to the lease API inside nova-api; ``nova boot
--hint reservation=...`` goes through Nova's real scheduler with
ReservationFilter; the sandbox's engine starts the leases.
"""

import datetime

from tests.e2e import base

GPU_HOSTS = ['compute-3', 'compute-4']
# compute-2 is reservable without a gpu; compute-1 stays an ordinary host.
RESERVABLE = {'compute-2': 'false', 'compute-3': 'true', 'compute-4': 'true'}
HOST_REQUEST = ('resource_type=physical:host,min=2,max=2,'
                'hypervisor_properties=[">=", "$vcpus", "8"],'
                'resource_properties=["=", "$gpu", "true"]')
PLAIN_HOST = ('resource_type=physical:host,min=1,max=1,'
              'resource_properties=["=", "$gpu", "false"]')


def _date(moment):
    return moment.strftime('%Y-%m-%d %H:%M')


def _reservation_of(lease):
    """The one reservation of a lease as ``-f json`` prints it."""
    [reservation] = base.listed_objects(lease['reservations'])
    return reservation


class TestHostReservation(base.SandboxTestCase):

    def setUp(self):
        super().setUp()
        self.add_reservable_hosts(RESERVABLE)
        self.image = self.sandbox.env['admin']['SANDBOX_IMAGE']

    def create_lease(self, name, start, end, user='demo'):
        out = self.run_cli(['openstack', 'reservation', 'lease', 'create',
                            '--reservation', HOST_REQUEST,
                            '--start-date', start, '--end-date', end, name],
                           user=user)
        self.assertIn('Created a new lease', out)
        return self.run_json(['openstack', 'reservation', 'lease', 'show',
                              name], user=user)

    def boot(self, name, user, *options):
        self.run_cli(['nova', 'boot', '--flavor', '1', '--image', self.image,
                      '--nic', 'none'] + list(options) + [name], user=user)
        return self.wait_for(lambda: self._settled(name, user))

    def _settled(self, name, user):
        server = self.run_json(['openstack', 'server', 'show', name],
                               user=user)
        return server if server['status'] in ('ACTIVE', 'ERROR') else None

    def host_of(self, server_id):
        return self.run_json(['openstack', 'server', 'show', server_id])[
            'OS-EXT-SRV-ATTR:hypervisor_hostname']

    def test_hosts_show_their_nova_properties(self):
        hosts = {host['hypervisor_hostname']: host for host in self.run_json(
            ['openstack', 'reservation', 'host', 'list'])}
        self.assertEqual(sorted(RESERVABLE), sorted(hosts))
        host = self.run_json(['openstack', 'reservation', 'host', 'show',
                              'compute-3'])
        self.assertEqual(12, host['vcpus'])
        self.assertEqual('true', host['gpu'])
        freepool = self.run_json(['openstack', 'aggregate', 'show',
                                  'freepool'])
        self.assertEqual(sorted(RESERVABLE), sorted(freepool['hosts']))

    def test_lease_of_two_gpu_hosts_and_boot_with_the_hint(self):
        now = datetime.datetime.now(datetime.timezone.utc)
        lease = self.create_lease('hpc-run', 'now',
                                  _date(now + datetime.timedelta(days=1)))
        self.assertIn(lease['status'], ('PENDING', 'STARTING', 'ACTIVE'))
        reservation_id = _reservation_of(lease)['id']
        self.wait_for(lambda: self.run_json(
            ['openstack', 'reservation', 'lease', 'show', 'hpc-run'],
            user='demo')['status'] == 'ACTIVE')

        job = self.boot('job1', 'demo', '--hint',
                        'reservation=' + reservation_id)
        self.assertEqual('ACTIVE', job['status'])
        self.assertIn(self.host_of(job['id']), GPU_HOSTS)
        plain = self.boot('plain1', 'demo')
        self.assertEqual('compute-1', self.host_of(plain['id']))
        # The admin project is not the lease's: no host for it.
        intruder = self.boot('intruder', 'admin', '--hint',
                             'reservation=' + reservation_id)
        self.assertEqual('ERROR', intruder['status'])
        aggregate = self.run_json(['openstack', 'aggregate', 'show',
                                   reservation_id])
        self.assertEqual(GPU_HOSTS, sorted(aggregate['hosts']))

        out = self.run_cli(['openstack', 'reservation', 'lease', 'set',
                            '--prolong-for', '1d', 'hpc-run'], user='demo')
        self.assertIn('Updated lease: hpc-run', out)
        allocations = self.run_json(['openstack', 'reservation',
                                     'allocation', 'list', 'host'])
        self.assertEqual(2, len(allocations))

        out = self.run_cli(['openstack', 'reservation', 'lease', 'delete',
                            'hpc-run'], user='demo')
        self.assertIn('Deleted lease: hpc-run', out)
        freepool = self.run_json(['openstack', 'aggregate', 'show',
                                  'freepool'])
        self.assertEqual(sorted(RESERVABLE), sorted(freepool['hosts']))
        # on_end "release": the instance stays.
        self.assertEqual('ACTIVE', self.run_json(
            ['openstack', 'server', 'show', 'job1'], user='demo')['status'])
        for name, user in (('job1', 'demo'), ('plain1', 'demo'),
                           ('intruder', 'admin')):
            self.run_cli(['nova', 'delete', name], user=user)

    def test_before_end_snapshot_from_the_unmodified_client(self):
        now = datetime.datetime.now(datetime.timezone.utc)
        before_end = _date(now + datetime.timedelta(minutes=2))
        out = self.run_cli([
            'openstack', 'reservation', 'lease', 'create', '--reservation',
            HOST_REQUEST + ',before_end=snapshot', '--start-date', 'now',
            '--end-date', _date(now + datetime.timedelta(minutes=4)),
            '--before-end-date', before_end, 'snap-run'], user='demo')
        self.assertIn('Created a new lease', out)
        lease = self.run_json(['openstack', 'reservation', 'lease', 'show',
                               'snap-run'], user='demo')
        reservation = _reservation_of(lease)
        self.assertEqual('snapshot', reservation['before_end'])
        self.assertEqual('release', reservation['on_end'])
        self.wait_for(lambda: self.run_json(
            ['openstack', 'reservation', 'lease', 'show', 'snap-run'],
            user='demo')['status'] == 'ACTIVE')
        job = self.boot('snap-job', 'demo', '--hint',
                        'reservation=' + reservation['id'])
        self.assertEqual('ACTIVE', job['status'])

        # At the before-end date (two minutes at most from now).
        image = self.wait_for(lambda: [
            image for image in self.run_json(
                ['openstack', 'image', 'list', '--long'], user='demo')
            if image['Name'] == 'snap-job-snapshot' and
            image['Status'] == 'active'], timeout=200, interval=5)
        self.assertEqual(1, len(image))
        self.assertEqual('ACTIVE', self.run_json(
            ['openstack', 'server', 'show', 'snap-job'],
            user='demo')['status'])
        self.run_cli(['openstack', 'reservation', 'lease', 'delete',
                      'snap-run'], user='demo')
        self.run_cli(['nova', 'delete', 'snap-job'], user='demo')

    def test_a_preemptible_server_lands_where_it_is_reclaimed_last(self):
        """And shows when: its host's booking less the lead time."""
        now = datetime.datetime.now(datetime.timezone.utc)
        self.book_later('gpu-soon', HOST_REQUEST, now, hours=2)
        later = self.book_later('plain-later', PLAIN_HOST, now, hours=5)
        # Off with the shared host, which no booking would ever reclaim.
        self.run_cli(['openstack', 'compute', 'service', 'set', '--disable',
                      'compute-1', 'nova-compute'])
        self.addCleanup(self.run_cli, ['openstack', 'compute', 'service',
                                       'set', '--enable', 'compute-1',
                                       'nova-compute'])
        spot = self.run_json(['openstack', 'server', 'create', '--flavor',
                              '1', '--image', self.image, '--nic', 'none',
                              '--hint', 'preemptible=true', '--wait',
                              'spot-late'], user='demo')
        self.addCleanup(self.run_cli, ['openstack', 'server', 'delete',
                                       '--wait', spot['id']], user='demo')
        self.assertEqual('compute-2', self.host_of(spot['id']))
        # What the demo user sees: the sandbox's lead time is 600 s.
        self.assertEqual(
            (later - datetime.timedelta(seconds=600)).strftime(
                '%Y-%m-%dT%H:%M:%SZ'),
            self.run_json(['openstack', 'server', 'show', spot['id']],
                          user='demo')['properties'][
                              'reservation:reclaim_after'])

    def book_later(self, name, reservation, now, hours):
        """A one-hour lease ``hours`` from ``now``, deleted at cleanup.

        Returns its start.
        """
        start = now.replace(second=0, microsecond=0) + datetime.timedelta(
            hours=hours)
        self.run_cli(['openstack', 'reservation', 'lease', 'create',
                      '--reservation', reservation,
                      '--start-date', _date(start),
                      '--end-date', _date(start + datetime.timedelta(
                          hours=1)), name], user='demo')
        self.addCleanup(self.run_cli, ['openstack', 'reservation', 'lease',
                                       'delete', name], user='demo')
        return start

    def test_second_overlapping_lease_is_refused(self):
        start, end = '2031-01-10 09:00', '2031-01-12 09:00'
        self.create_lease('first', start, end)
        error = self.run_cli(['openstack', 'reservation', 'lease', 'create',
                              '--reservation', HOST_REQUEST,
                              '--start-date', start, '--end-date', end,
                              'second'], user='demo', expect_failure=True)
        self.assertIn('Not enough hosts available', error)
        names = [lease['name'] for lease in self.run_json(
            ['openstack', 'reservation', 'lease', 'list'], user='demo')]
        self.assertNotIn('second', names)
        self.run_cli(['openstack', 'reservation', 'lease', 'delete',
                      'first'], user='demo')

    def test_bad_input_names_the_field(self):
        error = self.run_cli(['openstack', 'reservation', 'lease', 'create',
                              '--reservation',
                              'resource_type=physical:host,min=0,max=1',
                              '--end-date', '2031-02-01 09:00', 'bad'],
                             user='demo', expect_failure=True)
        self.assertIn('reservations[0].min', error)

    def create_later(self, name, reservation, user='demo'):
        """A lease far after the others' windows, deleted at cleanup."""
        out = self.run_cli(['openstack', 'reservation', 'lease', 'create',
                            '--reservation', reservation,
                            '--start-date', '2032-01-10 09:00',
                            '--end-date', '2032-01-11 09:00', name],
                           user=user)
        self.assertIn('Created a new lease', out)
        lease = self.run_json(['openstack', 'reservation', 'lease', 'show',
                               name], user=user)
        self.addCleanup(self.run_cli, ['openstack', 'reservation', 'lease',
                                       'delete', lease['id']], user=user)
        return lease

    def test_an_admins_lease_list_shows_every_projects_leases(self):
        one_host = 'resource_type=physical:host,min=1,max=1'
        theirs = self.create_later('demo-listed', one_host)
        mine = self.create_later('admin-listed', one_host, user='admin')
        listed = {lease['id'] for lease in self.run_json(
            ['openstack', 'reservation', 'lease', 'list'])}
        self.assertLessEqual({theirs['id'], mine['id']}, listed)
        listed = {lease['id'] for lease in self.run_json(
            ['openstack', 'reservation', 'lease', 'list'], user='demo')}
        self.assertIn(theirs['id'], listed)
        self.assertNotIn(mine['id'], listed)

    def test_json_equality_works_on_a_hostname(self):
        lease = self.create_later(
            'on-compute-2', 'resource_type=physical:host,min=1,max=1,'
            'hypervisor_properties=["==", "$hypervisor_hostname", '
            '"compute-2"]')
        reservation_id = _reservation_of(lease)['id']
        booked = [allocation['resource_id'] for allocation in self.run_json(
            ['openstack', 'reservation', 'allocation', 'list', 'host'])
            if any(r['id'] == reservation_id
                   for r in allocation['reservations'])]
        self.assertEqual(['compute-2'], [self.run_json(
            ['openstack', 'reservation', 'host', 'show', str(host)])[
                'hypervisor_hostname'] for host in booked])

    def test_blazars_refusals_in_blazars_words(self):
        for reservation, start, end, message in [
                ('resource_type=physical:host,min=1', '2032-01-10 09:00',
                 '2032-01-11 09:00',
                 'reservations[0].max: Malformed parameter max'),
                # (The client itself refuses an end before the start.)
                ('resource_type=physical:host,min=1,max=1',
                 '2032-01-10 09:00', '2032-01-10 09:00',
                 'end_date: End date must be later than start date.'),
                ('resource_type=physical:host,min=1,max=1',
                 '2020-01-10 09:00', '2032-01-10 08:00',
                 'start_date: Start date must be later than current date'),
        ]:
            error = self.run_cli(['openstack', 'reservation', 'lease',
                                  'create', '--reservation', reservation,
                                  '--start-date', start, '--end-date', end,
                                  'refused'], user='demo',
                                 expect_failure=True)
            self.assertIn(message, error)
        names = [lease['name'] for lease in self.run_json(
            ['openstack', 'reservation', 'lease', 'list'], user='demo')]
        self.assertNotIn('refused', names)

    def test_long_extra_capability_keys_are_refused(self):
        error = self.run_cli(['openstack', 'reservation', 'host', 'set',
                              '--extra', 'k' * 65 + '=1', 'compute-2'],
                             expect_failure=True)
        self.assertIn('Extra capability key too long', error)

    def test_members_cannot_add_hosts(self):
        error = self.run_cli(['openstack', 'reservation', 'host', 'create',
                              'compute-1'], user='demo', expect_failure=True)
        self.assertIn('reservation:hosts:create', error)
