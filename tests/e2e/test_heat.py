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

"""Heat in the sandbox: stacks, Heat's Blazar types, stack reservations.

The templates are the user guide's (``doc/source/user/heat/``), run with
the unmodified ``openstack stack`` commands (python-heatclient): the demo
user's server with an attached volume and a floating IP, and, as the
admin (Heat's Blazar types list ``os-hosts``, an admin call),
``OS::Blazar::Host`` and ``OS::Blazar::Lease``, with a second stack
booting onto the lease's reservations once it is ACTIVE. The demo user
reserves a stack ahead (``openstack reservation stack create``): it is
made at the lease's start on the host and addresses booked for it, and
goes at its end.
"""

import datetime
import json
import os
import re

import fixtures
from keystoneauth1.identity import v3
from oslo_config import cfg
from oslo_config import fixture as config_fixture

from reservation_ext.clients import orchestration
from reservation_ext import conf as conf_mod
from reservation_ext.stacks import needs
from tests.e2e import base

TEMPLATES = os.path.join(os.path.dirname(__file__), os.pardir, os.pardir,
                         'doc', 'source', 'user', 'heat')
PREVIEWED = os.path.join(os.path.dirname(__file__), os.pardir, 'unit',
                         'heat_previews', 'mixed.yaml')
# Stacks here take seconds; the default of the client is an hour.
STACK_TIMEOUT = 120


def _template(name):
    return os.path.join(TEMPLATES, name)


def _auth(env):
    """keystoneauth1's plugin of an openrc's user."""
    return v3.Password(
        auth_url=env['OS_AUTH_URL'], username=env['OS_USERNAME'],
        password=env['OS_PASSWORD'], project_name=env['OS_PROJECT_NAME'],
        user_domain_name=env['OS_USER_DOMAIN_NAME'],
        project_domain_name=env['OS_PROJECT_DOMAIN_NAME'])


def _reservations(lease):
    """A lease's reservations, from a client's ``-f json`` of the lease.

    Our commands show the list as JSON text; python-blazarclient's
    ``lease show`` shows each reservation as JSON text, one per line.
    """
    found = lease['reservations']
    if not isinstance(found, str):
        return found
    try:
        found = json.loads(found)
    except ValueError:
        return [json.loads('[%s]' % found.replace('}\n{', '},{'))][0]
    return found if isinstance(found, list) else [found]


def _minute(delta):
    """Blazar's date format, ``delta`` from now (UTC)."""
    return (datetime.datetime.now(datetime.timezone.utc) + delta).strftime(
        '%Y-%m-%d %H:%M')


class TestHeat(base.SandboxTestCase):

    # compute-1 and compute-2 are the Blazar types' hosts, compute-3 the
    # stack reservation's.
    HOSTS = 3

    def create_stack(self, name, template, user='admin', **parameters):
        """Create a stack and wait for it; its outputs ``{key: value}``."""
        argv = ['openstack', 'stack', 'create', '-t', _template(template),
                '--wait', '--timeout', str(STACK_TIMEOUT // 60), name]
        for key, value in sorted(parameters.items()):
            argv += ['--parameter', '%s=%s' % (key, value)]
        self.run_cli(argv, user=user)
        self.addCleanup(self.delete_stack, name, user)
        stack = self.run_json(['openstack', 'stack', 'show', name],
                              user=user)
        self.assertEqual('CREATE_COMPLETE', stack['stack_status'])
        return {output['output_key']: output['output_value']
                for output in stack['outputs']}

    def image(self):
        return self.sandbox.env['admin']['SANDBOX_IMAGE']

    def delete_stack(self, name, user='admin'):
        """Delete a stack, if there, and wait until it is gone."""
        names = [stack['Stack Name'] for stack in self.run_json(
            ['openstack', 'stack', 'list'], user=user)]
        if name in names:
            self.run_cli(['openstack', 'stack', 'delete', '--yes', '--wait',
                          name], user=user)

    def test_a_stack_of_a_server_its_volume_and_floating_ip_comes_and_goes(
            self):
        outputs = self.create_stack('web', 'server-stack.yaml', user='demo',
                                    image=self.image())
        server = self.run_json(['openstack', 'server', 'show',
                                outputs['server']], user='demo')
        self.assertEqual('ACTIVE', server['status'])
        volume = self.run_json(['openstack', 'volume', 'show',
                                outputs['volume']], user='demo')
        self.assertEqual(('in-use', [outputs['server']]), (
            volume['status'],
            [attachment['server_id'] for attachment in
             volume['attachments']]))
        # Neutron's view: the address is the port's, the port the server's.
        [address] = self.run_json(
            ['openstack', 'floating', 'ip', 'list', '--floating-ip-address',
             outputs['address']], user='demo')
        self.assertEqual(outputs['port'], address['Port'])
        port = self.run_json(['openstack', 'port', 'show', outputs['port']],
                             user='demo')
        self.assertEqual(outputs['server'], port['device_id'])

        self.delete_stack('web', user='demo')
        self.assertEqual([], self.run_json(['openstack', 'server', 'list'],
                                           user='demo'))
        self.assertEqual([], self.run_json(['openstack', 'volume', 'list'],
                                           user='demo'))
        self.assertEqual([], self.run_json(
            ['openstack', 'floating', 'ip', 'list'], user='demo'))

    def test_blazar_types_make_hosts_and_a_lease_a_second_stack_boots_onto(
            self):
        hosts = self.create_stack('hosts', 'blazar-hosts.yaml')
        self.assertEqual(['compute-1', 'compute-2'], hosts['hosts'])
        gpu = {host['hypervisor_hostname']: self.run_json(
            ['openstack', 'reservation', 'host', 'show', str(host['id'])]
        ).get('gpu') for host in self.run_json(
            ['openstack', 'reservation', 'host', 'list'])}
        self.assertEqual({'compute-1': 'false', 'compute-2': 'true'}, gpu)

        minute = datetime.timedelta(minutes=1)
        lease = self.create_stack('lease', 'blazar-lease.yaml',
                                  start=_minute(minute),
                                  end=_minute(30 * minute))
        by_type = {reservation['resource_type']: reservation
                   for reservation in lease['reservations']}
        seats = by_type['virtual:instance']
        # Blazar's: the flavor and the group exist from the lease's create.
        self.assertTrue(seats['flavor_id'] and seats['server_group_id'])
        self.run_json(['openstack', 'flavor', 'show', seats['flavor_id']])
        self.wait_for(lambda: self.run_json(
            ['openstack', 'reservation', 'lease', 'show', lease['lease']]
        )['status'] == 'ACTIVE', timeout=150)

        network = self.run_json(['openstack', 'network', 'list', '--project',
                                 'admin', '--name', 'private'])[0]['ID']
        servers = self.create_stack(
            'on-lease', 'on-lease.yaml', image=self.image(),
            network=network, flavor=seats['flavor_id'],
            group=seats['server_group_id'],
            host_reservation=by_type['physical:host']['id'])
        self.assertEqual({'seat_host': 'compute-1',
                          'on_host_host': 'compute-2'}, servers)

        # The lease goes with its stack, and its seats' servers with it.
        self.delete_stack('lease')
        self.run_cli(['openstack', 'reservation', 'lease', 'show',
                      lease['lease']], expect_failure=True)
        self.wait_for(lambda: [server['Name'] for server in self.run_json(
            ['openstack', 'server', 'list'])
            if 'seat' in server['Name']] == [])

    def heat_client(self):
        """Our Heat client, with the sandbox's admin as the service user."""
        conf = self.useFixture(config_fixture.Config(cfg.ConfigOpts())).conf
        conf_mod.register_opts(conf)
        admin = self.sandbox.env['admin']
        path = self.useFixture(fixtures.TempDir()).join('reservation.conf')
        with open(path, 'w') as out:
            out.write('[%s]\nauth_type = password\nauth_url = %s\n'
                      'username = %s\npassword = %s\nproject_name = %s\n'
                      'user_domain_name = Default\n'
                      'project_domain_name = Default\n' % (
                          conf_mod.CLIENT_GROUP, admin['OS_AUTH_URL'],
                          admin['OS_USERNAME'], admin['OS_PASSWORD'],
                          admin['OS_PROJECT_NAME']))
        conf(['--config-file', path])
        return orchestration.HeatClient(conf)

    def test_heats_preview_as_the_user_gives_what_a_stack_needs(self):
        with open(PREVIEWED) as template:
            text = template.read()
        client, demo = self.heat_client(), _auth(self.sandbox.env['demo'])
        preview = client.preview(demo, 'needs', text,
                                 {'image': self.image()})
        self.assertEqual(needs.Needs({'m1.small': 1, 'm1.tiny': 3}, 3,
                                     {'public': ['address']}, volumes=2),
                         needs.from_preview(preview))
        preview = client.preview(demo, 'needs', text, {
            'image': self.image(), 'worker_count': 1},
            environment='parameter_defaults: {worker_count: 5}')
        self.assertEqual({'m1.small': 1, 'm1.tiny': 1},
                         needs.from_preview(preview).servers)
        # Heat validates as the user: a parameter missing, an image that
        # is not theirs.
        error = self.assertRaises(orchestration.TemplateRefused,
                                  client.preview, demo, 'needs', text, {})
        self.assertIn('image', str(error))
        self.assertRaises(orchestration.TemplateRefused, client.preview,
                          demo, 'needs', text, {'image': 'not-an-image'})

    def test_a_reserved_stack_is_made_on_what_was_booked_and_goes_at_end(
            self):
        self.reservable_for_stacks('172.24.4.20', '172.24.4.21')
        minute = datetime.timedelta(minutes=1)
        lease = self.run_json([
            'openstack', 'reservation', 'stack', 'create', '--template',
            _template('reserved-pair.yaml'), '--parameter',
            'image=%s' % self.image(), '--on-end', 'snapshot_delete',
            '--start-date', _minute(minute), '--end-date',
            _minute(30 * minute), 'pair'], user='demo')
        self.addCleanup(self.run_cli, ['openstack', 'reservation', 'lease',
                                       'delete', lease['id']], user='demo')
        [booked] = _reservations(lease)
        self.assertEqual(
            ('PENDING', {'m1.small': 1, 'm1.medium': 1}, 3, {'public': 2},
             None),
            (lease['status'], booked['servers'], booked['volume_gb'],
             booked['floating_ips'], booked['stack_id']))

        # What the pair holds then is not booked twice.
        refused = self.run_cli([
            'openstack', 'reservation', 'stack', 'create', '--template',
            _template('reserved-cluster.yaml'), '--parameter',
            'image=%s' % self.image(), '--parameter', 'size=50',
            '--start-date', _minute(minute), '--end-date',
            _minute(30 * minute), 'cluster'], user='demo',
            expect_failure=True)
        self.assertRegex(refused, r'ERROR: \d+ of 50 server\(s\) of flavor '
                                  r'm1.large do not fit between ')

        self.wait_for(lambda: self.lease(lease['id'])['status'] == 'ACTIVE',
                      timeout=150)
        [started] = _reservations(self.lease(lease['id']))
        self.assertEqual('CREATE_COMPLETE', started['stack_status'])
        self.check_made_as_booked(started['stack_id'])

        # Ended within a minute: the stack's servers and volumes are
        # imaged, then the stack, its servers, volumes and addresses go.
        self.run_cli(['openstack', 'reservation', 'lease', 'set',
                      '--end-date', _minute(minute),
                      lease['id']], user='demo')
        self.wait_for(lambda: self.lease(lease['id'])['status'] ==
                      'TERMINATED', timeout=150)
        for kind in ('stack', 'server', 'volume', 'floating ip'):
            self.assertEqual([], self.run_json(
                ['openstack'] + kind.split() + ['list'], user='demo'), kind)
        [ended] = _reservations(self.lease(lease['id']))
        images = {image['ID']: image for image in self.run_json(
            ['openstack', 'image', 'list'], user='demo')}
        self.assertEqual(4, len(ended['images']))
        self.assertEqual(['active'] * 4, [images[image_id]['Status']
                                          for image_id in ended['images']])
        # Named after what they image, whose names Heat gave (the
        # resource's name before a random suffix).
        self.assertEqual({'db', 'db_data', 'web', 'web_data'}, {
            re.search(r'-([a-z_]+)-[a-z0-9]+-snapshot$',
                      images[image_id]['Name']).group(1)
            for image_id in ended['images']})

    def test_a_stacks_proposal_holds_it_and_becomes_its_lease(self):
        self.reservable_for_stacks('172.24.4.22', '172.24.4.23')
        pair = ['--template', _template('reserved-pair.yaml'),
                '--parameter', 'image=%s' % self.image()]
        tomorrow = _minute(datetime.timedelta(days=1))
        first, second = self.run_json(
            ['openstack', 'reservation', 'stack', 'propose'] + pair +
            ['--duration', '2h', '--not-before', tomorrow, '--count', '2'],
            user='demo')
        # Two addresses: the second window starts when the first ends.
        self.assertEqual(first['end_date'], second['start_date'])
        # What the first holds is not booked by a lease of its window.
        refused = self.run_cli(
            ['openstack', 'reservation', 'stack', 'create'] + pair +
            ['--start-date', tomorrow, '--end-date', _minute(
                datetime.timedelta(days=1, hours=1)), 'other'],
            user='demo', expect_failure=True)
        self.assertIn('floating IP(s) of network public are not free',
                      refused)
        lease = self.run_json(
            ['openstack', 'reservation', 'lease', 'create-from-proposal',
             first['id'], 'proposed-pair'], user='demo')
        self.addCleanup(self.run_cli, ['openstack', 'reservation', 'lease',
                                       'delete', lease['id']], user='demo')
        [booked] = _reservations(self.lease(lease['id']))
        self.assertEqual(
            ('PENDING', first['start_date'][:16], {'m1.small': 1,
                                                   'm1.medium': 1}),
            (self.lease(lease['id'])['status'],
             self.lease(lease['id'])['start_date'][:16], booked['servers']))
        # Availability counts the pairs that fit: none while the lease
        # holds both addresses, one after (its other proposals are gone).
        steps = self.run_json(
            ['openstack', 'reservation', 'availability', 'show',
             '--resource-type', 'heat:stack',
             '--start', first['start_date'][:16].replace('T', ' '),
             '--end', second['end_date'][:16].replace('T', ' '),
             '--field', 'servers=m1.medium:1,m1.small:1',
             '--field', 'volume_gb=3', '--field', 'floating_ips=public:2'],
            user='demo')
        self.assertEqual([(first['end_date'][:16], 0), (second['end_date'][
            :16], 1)], [(step['end'][:16], step['free (stacks)'])
                        for step in steps])

    def test_a_stack_heat_fails_to_make_puts_its_lease_in_error(self):
        lease = self.run_json([
            'openstack', 'reservation', 'stack', 'create', '--template',
            _template('failing.yaml'), '--start-date',
            _minute(datetime.timedelta(minutes=1)), '--end-date',
            _minute(datetime.timedelta(minutes=30)), 'doomed'], user='demo')
        self.addCleanup(self.run_cli, ['openstack', 'reservation', 'lease',
                                       'delete', lease['id']], user='demo')
        self.wait_for(lambda: self.lease(lease['id'])['status'] == 'ERROR',
                      timeout=150)
        reason = self.lease(lease['id'])['status_reason']
        self.assertIn('Heat could not create stack reservation-', reason)
        self.assertIn('CREATE_FAILED', reason)
        self.assertIn('Test Resource failed', reason)
        # Nothing is left behind.
        self.assertEqual([], self.run_json(['openstack', 'stack', 'list'],
                                           user='demo'))

    def reservable_for_stacks(self, *addresses):
        """Make compute-3 and ``addresses`` reservable, for the test."""
        self.add_reservable_hosts({'compute-3': 'false'})
        self.addCleanup(self.run_cli, ['openstack', 'reservation', 'host',
                                       'delete', 'compute-3'])
        public = self.run_json(['openstack', 'network', 'show', 'public'])
        for address in addresses:
            fip = base.created(self.run_cli([
                'openstack', 'reservation', 'floatingip', 'create',
                public['id'], address, '-f', 'json']))
            self.addCleanup(self.run_cli, ['openstack', 'reservation',
                                           'floatingip', 'delete', fip['id']])

    def lease(self, lease_id):
        return self.run_json(['openstack', 'reservation', 'lease', 'show',
                              lease_id], user='demo')

    def check_made_as_booked(self, stack_id):
        """The stack's servers on the booked host, its addresses booked."""
        stack = self.run_json(['openstack', 'stack', 'show', stack_id],
                              user='demo')
        outputs = {output['output_key']: output['output_value']
                   for output in stack['outputs']}
        self.assertEqual({'compute-3'}, {
            server['Host'] for server in self.run_json(
                ['openstack', 'server', 'list', '--all-projects', '--long'])})
        # Neutron's view: each booked address on its server's port.
        for name in ('web', 'db'):
            [address] = self.run_json(
                ['openstack', 'floating', 'ip', 'list',
                 '--floating-ip-address', outputs[name + '_address']],
                user='demo')
            self.assertEqual(outputs[name + '_port'], address['Port'])
        self.assertEqual(['172.24.4.20', '172.24.4.21'], sorted(
            outputs[name + '_address'] for name in ('web', 'db')))
        self.assertEqual(['in-use', 'in-use'], [
            volume['Status'] for volume in self.run_json(
                ['openstack', 'volume', 'list'], user='demo')])
