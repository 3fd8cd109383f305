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

"""The test bases keep each reported detail within subunit's limit."""

import logging

import fixtures
import testtools
from testtools import content

from tests import base


class BoundDetailsTest(testtools.TestCase):

    def run_one(self, text, logged=False):
        """Run a test of the base that reports ``text``; what it reports.

        :param logged: the test logs it, and the base's log capture (set
            up before the test begins) reports it.
        """

        class Logging(base.TestCase):

            def test_logs(self):
                if logged:
                    logging.getLogger(__name__).warning(text)
                else:
                    self.addDetail('log', content.text_content(text))

        self.useFixture(fixtures.EnvironmentVariable('OS_LOG_CAPTURE', '1'))
        test = Logging('test_logs')
        result = testtools.TestResult()
        test.run(result)
        self.assertTrue(result.wasSuccessful(), result.errors)
        name = "pythonlogging:''" if logged else 'log'
        return b''.join(test.getDetails()[name].iter_bytes())

    def test_a_big_detail_keeps_its_end_and_says_what_was_cut(self):
        text = 'x' * base.DETAIL_LIMIT + 'the end'
        reported = self.run_one(text)
        self.assertEqual(b'[the first 7 bytes are cut]\n', reported[:28])
        self.assertTrue(reported.endswith(b'the end'))
        self.assertEqual(base.DETAIL_LIMIT, len(reported) - 28)

    def test_a_big_captured_log_is_cut_too(self):
        text = 'x' * base.DETAIL_LIMIT + 'the end'
        said, kept = self.run_one(text, logged=True).split(b'\n', 1)
        self.assertRegex(said, rb'^\[the first \d+ bytes are cut\]$')
        self.assertEqual(base.DETAIL_LIMIT, len(kept))
        self.assertTrue(kept.endswith(b'the end\n'))

    def test_a_small_detail_is_reported_whole(self):
        self.assertEqual(b'a few lines\n', self.run_one('a few lines\n'))
