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

"""The notifications doc prints the schema and the consumer as they are.

doc/source/admin/notifications.rst shows the payload schema and
tools/billing_consumer.py as literal blocks, and documents every field of
the schema; these tests fail when either changes without the doc.
"""

import os
import re

from reservation_ext.leases import notification_schema
from tests import base

TOP = os.path.dirname(os.path.dirname(os.path.dirname(
    os.path.abspath(__file__))))
DOC = os.path.join(TOP, 'doc', 'source', 'admin', 'notifications.rst')
CONSUMER = os.path.join(TOP, 'tools', 'billing_consumer.py')


def literal_block(text):
    """``text`` as an rst literal block: indented, blank lines empty."""
    return ''.join('    ' + line if line.strip() else '\n'
                   for line in text.splitlines(True))


def _read(path):
    with open(path) as f:
        return f.read()


class NotificationDocsTest(base.TestCase):

    def setUp(self):
        super().setUp()
        self.doc = _read(DOC)

    def test_the_doc_prints_the_current_schema(self):
        self.assertIn(literal_block(notification_schema.dumps()), self.doc,
                      'the schema changed: print it again in %s ("python '
                      '-m reservation_ext.leases.notification_schema")'
                      % DOC)

    def test_the_doc_prints_the_current_example_consumer(self):
        self.assertIn(literal_block(_read(CONSUMER)), self.doc,
                      'tools/billing_consumer.py changed: print it again '
                      'in %s' % DOC)

    def test_the_doc_describes_every_field_of_the_payload(self):
        named = set(re.findall(r'``([a-z_]+)``', self.doc))
        fields = set(notification_schema.SCHEMA['properties'])
        fields |= set(notification_schema.RESERVATION['properties'])
        fields |= set(notification_schema.EVENT['properties'])
        for resource in notification_schema.RESOURCES.values():
            fields |= set(resource['properties'])
        self.assertEqual(set(), fields - named)

    def test_the_doc_describes_every_field_of_instance_preempted(self):
        named = set(re.findall(r'``([a-z_]+)``', self.doc))
        self.assertEqual(
            set(), set(notification_schema.PREEMPTED['properties']) - named)
