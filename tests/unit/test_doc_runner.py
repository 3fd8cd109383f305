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

"""How the docs' commands are read, and filled from earlier output."""

import re

from tests import base
from tests.e2e import doc_runner

A = '11111111-2222-4333-8444-555555555555'
B = 'aaaaaaaa-bbbb-4ccc-8ddd-eeeeeeeeeeee'
C = 'cccccccc-bbbb-4ccc-8ddd-eeeeeeeeeeee'
D = 'dddddddd-bbbb-4ccc-8ddd-eeeeeeeeeeee'

PAGE = '''Title
=====

.. doc-runner: --hosts 6 --config reservation.proposal_ttl=20

Text::

    $ . .sandbox/openrc
    $ openstack reservation lease propose --reservation \\
        'resource_type=physical:host,min=1,max=1' --duration 1h
    | %s | 2030-01-01T09:00:00.000000 |

    | %s | 2030-01-01T10:00:00.000000 |
    $ openstack bad
    ERROR: count: must be at most 20

More text, then ``$ not a command``.

    $ echo done
''' % (A, B)


class RstStepsTest(base.TestCase):

    def test_commands_their_continuations_and_shown_output(self):
        self.assertEqual([
            ('. .sandbox/openrc', ''),
            ("openstack reservation lease propose --reservation \\\n"
             "'resource_type=physical:host,min=1,max=1' --duration 1h",
             '| %s | 2030-01-01T09:00:00.000000 |\n\n'
             '| %s | 2030-01-01T10:00:00.000000 |' % (A, B)),
            ('openstack bad', 'ERROR: count: must be at most 20'),
            ('echo done', '')], doc_runner.rst_steps(PAGE))

    def test_the_page_options_come_from_its_comment(self):
        self.assertEqual(['--hosts', '6', '--config',
                          'reservation.proposal_ttl=20'],
                         doc_runner.page_options(PAGE))
        self.assertIsNone(doc_runner.page_options('Title\n=====\n'))


class ReadmeCommandsTest(base.TestCase):

    def test_every_indented_line_between_the_markers_is_a_command(self):
        text = ('# T\n\n    ./run-sandbox\n\nFirst part:\n\n'
                '    . .sandbox/openrc\n    nova boot \\\n      vm1\n\n'
                'Last part\n\n    not this\n')
        self.assertEqual(['. .sandbox/openrc', 'nova boot \\\n  vm1'],
                         doc_runner.readme_commands(text, 'First part',
                                                    'Last part'))


class FillTest(base.TestCase):

    def test_an_id_takes_the_same_place_in_this_runs_output(self):
        shown = '| %s | 09:00 |\n| %s | 10:00 |' % (A, B)
        actual = '| %s | 09:05 |\n| %s | 10:05 |' % (C, D)
        self.assertEqual('lease create-from-proposal %s run' % D,
                         doc_runner.literal_ids(
                             'lease create-from-proposal %s run' % B,
                             [(shown, actual)]))

    def test_an_id_is_found_by_its_key_in_a_shown_excerpt(self):
        shown = ('...\n|  "reservation": "%s" |\n...' % A)
        actual = ('|  "lease_id": "%s", |\n|  "reservation": "%s" |'
                  % (C, D))
        self.assertEqual('--hint reservation=%s' % D,
                         doc_runner.literal_ids(
                             '--hint reservation=%s' % A, [(shown, actual)]))

    def test_an_id_no_output_showed_stays_as_written(self):
        self.assertEqual('image %s' % A, doc_runner.literal_ids(
            'image %s' % A, [('| %s |' % B, '| %s |' % C)]))

    def test_an_id_missing_from_this_runs_output_fails_clearly(self):
        error = self.assertRaises(
            AssertionError, doc_runner.literal_ids, 'use %s' % B,
            [('| %s |\n| %s |' % (A, B), '| %s |' % C)])
        self.assertIn('no id at the place of %s' % B, str(error))

    def test_placeholders_are_filled_from_the_latest_output(self):
        outputs = ['"flavor_id": "f-1"',
                   '| reservations | {\n|   "id": "%s",' % A]
        self.assertEqual(
            'boot --flavor f-1 --hint reservation=%s' % A,
            doc_runner.filled('boot --flavor <flavor_id from the lease> '
                              '--hint reservation=<reservation id from '
                              'the lease>', outputs))

    def test_a_placeholder_without_a_rule_fails_clearly(self):
        error = self.assertRaises(AssertionError, doc_runner.filled,
                                  'show <host name>', [])
        self.assertIn('no rule fills <host name>', str(error))


class ExpectedErrorTest(base.TestCase):

    def test_numbers_and_ids_of_an_error_may_differ(self):
        pattern = doc_runner.expected_error(
            'ERROR: Proposal %s could not be found; 5 of 6' % A)
        self.assertTrue(re.search(
            pattern, 'x\nERROR: Proposal %s could not be found; 15 of 16'
            % C))
        self.assertFalse(re.search(pattern, 'ERROR: Lease %s could not be '
                                   'found; 5 of 6' % C))

    def test_a_shown_status_is_the_status_expected(self):
        self.assertEqual(1, doc_runner.expected_status(
            'Lease l1 is still PENDING\n[status 1]'))
        self.assertIsNone(doc_runner.expected_status('[status one]'))

    def test_output_without_an_error_line_expects_success(self):
        self.assertIsNone(doc_runner.expected_error('| status | ACTIVE |'))
