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

"""How the docs' commands are read, filled from earlier output, and run."""

import os
import re
import stat

import fixtures

from tests import base
from tests.e2e import doc_runner
from tests.e2e import test_user_guide

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

    def test_an_address_and_a_sandbox_url_take_their_places_too(self):
        shown = ('dashboard      http://127.0.0.1:46059/ (log in)\n'
                 '| floating_ip_address | 172.24.4.190 |')
        actual = ('dashboard      http://127.0.0.1:41000/ (log in)\n'
                  '| floating_ip_address | 172.24.4.133 |')
        self.assertEqual(
            'curl http://127.0.0.1:41000/; add floating ip vm1 172.24.4.133',
            doc_runner.literal_ids('curl http://127.0.0.1:46059/; add '
                                   'floating ip vm1 172.24.4.190',
                                   [(shown, actual)]))

    def test_ids_and_addresses_are_ranked_apart(self):
        # A row's address does not shift the rank of the ids of the same
        # shape, nor the other way round.
        shown = '| %s |\n| 10.0.0.5 |\n| %s |' % (A, B)
        actual = '| %s |\n| %s |\n| 10.0.0.7 |' % (C, D)
        self.assertEqual('%s 10.0.0.7' % D, doc_runner.literal_ids(
            '%s 10.0.0.5' % B, [(shown, actual)]))

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


class SandboxCommandTest(base.TestCase):

    def test_the_commands_that_start_a_sandbox_are_known_by_their_name(self):
        self.assertTrue(doc_runner.starts_sandbox(
            './run-sandbox --config reservation.host_on_end=release'))
        self.assertTrue(doc_runner.starts_sandbox(
            'reservation-sandbox --state-dir /tmp/sb'))
        self.assertFalse(doc_runner.starts_sandbox(
            '. /tmp/sb/openrc && reservation-sandbox'))
        self.assertFalse(doc_runner.starts_sandbox(''))

    def test_a_shown_output_ending_in_an_argument_error_expects_it(self):
        pattern = doc_runner.sandbox_error(
            'usage: reservation-sandbox [-h]\n...\nreservation-sandbox: '
            'error: --hosts 0: must be at least 1\n[status 2]\n')
        self.assertTrue(re.search(pattern, 'usage: x\nreservation-sandbox: '
                                  'error: --hosts 10: must be at least 11'))
        self.assertFalse(re.search(pattern, 'reservation-sandbox: error: '
                                   '--engines 0: must be at least 1'))

    def test_a_shown_output_ending_otherwise_expects_a_sandbox(self):
        self.assertIsNone(doc_runner.sandbox_error(
            'reservation-sandbox: error: x\n...\nsandbox ready'))
        self.assertIsNone(doc_runner.sandbox_error(''))

    def test_tmp_paths_go_to_the_tests_directory_and_no_other_path(self):
        self.assertEqual(
            'reservation-sandbox --state-dir /t/d/sb; . /t/d/sb/openrc; '
            'ls /var/tmp/sb ~/tmp/x /tmp',
            doc_runner.tmp_mapped(
                'reservation-sandbox --state-dir /tmp/sb; . /tmp/sb/openrc; '
                'ls /var/tmp/sb ~/tmp/x /tmp', '/t/d/'))


# A stand-in for reservation-sandbox: refuses --bad as argparse would,
# else says it is ready and runs until SIGINT, which it notes in
# ./stopped before it exits 0, as the sandbox does.
FAKE_SANDBOX = """#!/bin/bash
if [ "$1" = --bad ]; then
    echo "usage: reservation-sandbox [-h]"
    echo "reservation-sandbox: error: --bad: no option 3" >&2
    exit 2
fi
trap 'echo "$*" >> stopped; exit 0' INT
echo "starting the sandbox in $PWD/.sandbox"
echo "sandbox ready"
while :; do sleep 0.1; done
"""


class SandboxStepTest(base.TestCase):
    """A page's sandbox commands, with a stand-in for the sandbox."""

    def setUp(self):
        super().setUp()
        bin_dir = self.useFixture(fixtures.TempDir()).path
        fake = os.path.join(bin_dir, 'reservation-sandbox')
        with open(fake, 'w') as script:
            script.write(FAKE_SANDBOX)
        os.chmod(fake, stat.S_IRWXU)
        self.useFixture(fixtures.MonkeyPatch(
            'tests.e2e.doc_runner.sandbox_mod.BIN_DIR', bin_dir))
        self.workdir = self.useFixture(fixtures.TempDir()).path
        self.tmp_dir = self.useFixture(fixtures.TempDir()).path
        self.shell = doc_runner.DocShell(None, self.workdir,
                                         tmp_dir=self.tmp_dir)
        self.addCleanup(self.shell.close)

    def stopped(self):
        path = os.path.join(self.workdir, 'stopped')
        if not os.path.exists(path):
            return []
        with open(path) as stopped:
            return stopped.read().splitlines()

    def test_a_sandbox_runs_in_the_background_until_the_next_one(self):
        output = self.shell.run_step('reservation-sandbox --hosts 1',
                                     '...\nsandbox ready')
        self.assertIn('sandbox ready', output)
        self.assertEqual('hi', self.shell.run_step('echo hi', 'hi').strip())
        self.assertEqual([], self.stopped())
        self.shell.run_step('reservation-sandbox --hosts 2', '')
        self.assertEqual(['--hosts 1'], self.stopped())
        self.shell.close()
        self.assertEqual(['--hosts 1', '--hosts 2'], self.stopped())

    def test_a_sandbox_shown_failing_must_fail_with_its_error(self):
        self.shell.run_step('reservation-sandbox --bad', (
            'usage: reservation-sandbox [-h]\n...\n'
            'reservation-sandbox: error: --bad: no option 1\n[status 2]'))
        error = self.assertRaises(
            AssertionError, self.shell.run_step, 'reservation-sandbox --bad',
            'reservation-sandbox: error: --bad: no option 1\n[status 1]')
        self.assertIn('exited with 2, not 1', str(error))
        error = self.assertRaises(
            AssertionError, self.shell.run_step, 'reservation-sandbox --bad',
            'sandbox ready')
        self.assertIn('failed with status 2', str(error))

    def test_a_sandbox_shown_failing_that_starts_fails_and_is_stopped(self):
        error = self.assertRaises(
            AssertionError, self.shell.run_step, 'reservation-sandbox',
            'reservation-sandbox: error: --bad: no option 1')
        self.assertIn('expected to fail with', str(error))
        self.shell.close()
        self.assertEqual([''], self.stopped())

    def test_the_pages_tmp_paths_are_the_tests(self):
        ran, status, output = self.shell.run('echo /tmp/sb/openrc')
        self.assertEqual('echo /tmp/sb/openrc', ran)
        self.assertEqual(os.path.join(self.tmp_dir, 'sb/openrc'),
                         output.strip())


class PageClassTest(base.TestCase):

    def test_a_page_that_starts_its_sandboxes_gets_no_sandbox_of_a_class(
            self):
        page = test_user_guide._page_class('TestX', 'x.rst',
                                           ['starts-sandboxes'])
        self.assertFalse(issubclass(page,
                                    test_user_guide.base.SandboxTestCase))
        self.assertTrue(issubclass(page,
                                   test_user_guide._PageStartingSandboxes))

    def test_a_page_with_sandbox_options_gets_a_sandbox_with_them(self):
        page = test_user_guide._page_class('TestX', 'x.rst', ['--hosts', '2'])
        self.assertTrue(issubclass(page, test_user_guide.base.SandboxTestCase))
        self.assertEqual(('--hosts', '2'), page.OPTIONS)

    def test_the_marker_takes_no_sandbox_options(self):
        self.assertRaises(ValueError, test_user_guide._page_class, 'TestX',
                          'x.rst', ['starts-sandboxes', '--hosts', '2'])
