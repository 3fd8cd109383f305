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

"""The sandbox's ``--config SECTION.OPTION=VALUE``: the files it writes.

An option goes into the config file of every service that knows it, as
the services' own option lists say; an unknown option or a bad value
stops the sandbox before anything starts, naming it.
"""

import io

import fixtures

from reservation_ext.sandbox import main
from tests import base
from tests import sandbox_files

FILES = ('keystone', 'nova', 'placement', 'cinder', 'neutron', 'heat')


class SandboxConfigOverridesTest(base.TestCase):

    def write(self, *argv):
        args = main.parse_args(list(argv))
        return sandbox_files.write(self, FILES, overrides=args.overrides)

    def refusal(self, *argv):
        stderr = self.useFixture(fixtures.MonkeyPatch(
            'sys.stderr', io.StringIO())).new_value
        exit = self.assertRaises(SystemExit, main.parse_args, list(argv))
        self.assertEqual(2, exit.code)
        return stderr.getvalue()

    def test_an_option_goes_to_every_file_whose_service_reads_it(self):
        files = self.write(
            '--config', 'reservation.host_on_end=delete_instances',
            '--config', 'DEFAULT.debug=true',
            '--config', 'filter_scheduler.enabled_filters=ComputeFilter')
        self.assertEqual(
            ['delete_instances', 'delete_instances', None, None],
            [files[name].get('reservation', 'host_on_end', fallback=None)
             for name in ('nova', 'cinder', 'keystone', 'placement')])
        self.assertEqual(['true'] * len(FILES), [
            files[name].get('DEFAULT', 'debug') for name in FILES])
        self.assertEqual('ComputeFilter', files['nova'].get(
            'filter_scheduler', 'enabled_filters'))
        self.assertFalse(files['cinder'].has_section('filter_scheduler'))

    def test_a_neutron_option_goes_to_neutron_conf_alone(self):
        files = self.write('--config', 'ml2.mechanism_drivers=x,y',
                           '--config', 'quotas.quota_floatingip=3')
        self.assertEqual(('x,y', '3'), (
            files['neutron'].get('ml2', 'mechanism_drivers'),
            files['neutron'].get('quotas', 'quota_floatingip')))
        # The sandbox's other ML2 options stay.
        self.assertEqual('local', files['neutron'].get(
            'ml2', 'project_network_types'))
        self.assertEqual([], [name for name in FILES if name != 'neutron'
                              and files[name].has_section('ml2')])

    def test_a_heat_option_goes_to_heat_conf_alone(self):
        files = self.write('--config', 'DEFAULT.convergence_engine=false',
                           '--config', 'DEFAULT.max_stacks_per_tenant=7')
        self.assertEqual(('false', '7'), (
            files['heat'].get('DEFAULT', 'convergence_engine'),
            files['heat'].get('DEFAULT', 'max_stacks_per_tenant')))
        # The sandbox's own Heat options stay.
        self.assertEqual('heat', files['heat'].get('DEFAULT',
                                                   'stack_user_domain_name'))
        self.assertEqual([], [name for name in FILES if name != 'heat' and
                              files[name].has_option('DEFAULT',
                                                     'convergence_engine')])

    def test_an_option_replaces_the_sandboxs_own_value(self):
        files = self.write('--config', 'reservation.event_poll_interval=5')
        self.assertEqual('5', files['nova'].get('reservation',
                                                'event_poll_interval'))
        # The sandbox's other options of the section stay.
        self.assertEqual('freepool', files['nova'].get('reservation',
                                                       'freepool_name'))

    def test_the_last_of_two_values_wins(self):
        files = self.write('--config', 'reservation.host_on_end=recycle',
                           '--config', 'reservation.host_on_end=release')
        self.assertEqual('release', files['nova'].get('reservation',
                                                      'host_on_end'))

    def test_without_config_the_files_are_the_sandboxs(self):
        files = self.write()
        self.assertFalse(files['nova'].has_option('reservation',
                                                  'host_on_end'))

    def test_an_unknown_option_is_refused_naming_it(self):
        self.assertIn('--config reservation.host_on_ed=x: no service of the '
                      'sandbox has an option host_on_ed in [reservation]',
                      self.refusal('--config', 'reservation.host_on_ed=x'))

    def test_a_bad_value_is_refused_naming_the_option(self):
        self.assertIn("--config reservation.host_on_end=maybe: invalid "
                      "value: Valid values are [release, delete_instances, "
                      "recycle], but found 'maybe'",
                      self.refusal('--config',
                                   'reservation.host_on_end=maybe'))

    def test_a_text_without_section_or_value_is_refused(self):
        for text in ('debug=true', 'DEFAULT.debug', '.debug=true'):
            self.assertIn('--config %s: not SECTION.OPTION=VALUE' % text,
                          self.refusal('--config', text))
