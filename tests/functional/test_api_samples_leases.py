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

"""The API reference's samples of the lease API that need no Nova.

The real WSGI application in process, with the installed plugins only
(no test plugin, so the plugin list is what a deployment shows) on an
SQLite leases DB; the samples that need Nova's hosts are checked in
:mod:`tests.functional.test_api_samples_nova`.
"""

import json

import webob

from reservation_ext.api import wsgi
from reservation_ext.clients import compute as compute_client
from reservation_ext import clock as clock_mod
from reservation_ext.leases import notifications
from reservation_ext import plugins as plugins_mod
from tests import api_samples
from tests import base
from tests import fixtures
from tests.functional import test_leases


class LeaseAPISamplesTest(base.DBTestCase):

    def setUp(self):
        super().setUp()
        conf = self.useFixture(fixtures.ReservationConf()).conf
        clock = clock_mod.ManualClock(test_leases.NOW)
        self.app = wsgi.build_app(conf, clock,
                                  plugins_mod.load_plugins(conf, clock),
                                  notifications.get_notifier(conf),
                                  compute_client.NovaClient(conf))
        self.samples = api_samples.Samples(self)

    def call(self, method, path, status, request=None, response=None):
        """Send ``request``'s sample as a project member.

        The answer is compared with ``response``'s sample.
        """
        req = webob.Request.blank('/v1' + path, method=method, headers={
            'X-User-Id': 'user-owner-project',
            'X-Project-Id': 'owner-project', 'X-Roles': 'member,reader',
            'X-Auth-Token': 'token', 'Accept': 'application/json'})
        if request:
            req.body = json.dumps(self.samples.request(request)).encode()
            req.content_type = 'application/json'
        answer = req.get_response(self.app)
        self.assertEqual(status, answer.status_int, answer.text)
        self.samples.check(response, answer.json)

    def test_the_plugin_list_is_what_the_api_answers(self):
        self.call('GET', '/plugins', 200, None, 'leases/plugin-list')

    def test_an_error_is_what_the_sample_shows(self):
        self.call('POST', '/leases', 400, 'leases/lease-create-bad-dates',
                  'leases/lease-create-bad-dates')
