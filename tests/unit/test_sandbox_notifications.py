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

"""The sandbox's ``--notify-url``: the options it writes.

nova.conf (read by nova-api and the engine) and cinder.conf send the lease
notifications to the URL; without it neither sends any.
"""

from reservation_ext.sandbox import main
from tests import base
from tests import sandbox_files

URL = 'rabbit://guest:guest@localhost:5672/'


class SandboxNotificationsTest(base.TestCase):

    def write(self, *argv):
        args = main.parse_args(list(argv))
        return sandbox_files.write(self, ('nova', 'cinder'),
                                   notify_url=args.notify_url)

    def test_notify_url_sends_the_notifications_of_nova_cinder_and_engine(
            self):
        files = self.write('--notify-url', URL)
        for name in ('nova', 'cinder'):
            section = files[name]['oslo_messaging_notifications']
            self.assertEqual(
                ('messagingv2', URL, 'notifications'),
                (section['driver'], section['transport_url'],
                 section['topics']))
        self.assertEqual('unversioned', files['nova'].get(
            'notifications', 'notification_format'))

    def test_without_notify_url_nothing_is_sent(self):
        files = self.write()
        for name in ('nova', 'cinder'):
            self.assertFalse(
                files[name].has_section('oslo_messaging_notifications'))
