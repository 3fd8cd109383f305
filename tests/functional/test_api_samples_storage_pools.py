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

"""The API reference's samples of the storage pools, with a real Cinder.

The real WSGI application in process on an SQLite leases DB; the pools
are those the Cinder of :mod:`tests.cinder_service` reports
(``storage-1@ssd#gold`` and ``#silver``), asked by the real Cinder
client.
"""

import json

import webob

from reservation_ext.api import wsgi
from reservation_ext.clients import compute as compute_client
from reservation_ext import clock as clock_mod
from reservation_ext import conf as conf_mod
from reservation_ext.leases import notifications
from reservation_ext import plugins as plugins_mod
from tests import api_samples
from tests import base
from tests import cinder_service
from tests import fixtures
from tests.functional import test_leases
from tests import nova_auth


class StoragePoolSamplesTest(base.DBTestCase):

    def setUp(self):
        super().setUp()
        self.useFixture(fixtures.TestPlugins())
        self.useFixture(cinder_service.CinderFixture())
        conf = self.useFixture(fixtures.ReservationConf({
            (conf_mod.CLIENT_GROUP, 'auth_type'): nova_auth.NAME,
            (conf_mod.CLIENT_GROUP, 'connect_retries'): 0})).conf
        self.clock = clock_mod.ManualClock(test_leases.NOW)
        self.app = wsgi.build_app(conf, self.clock,
                                  plugins_mod.load_plugins(conf, self.clock),
                                  notifications.get_notifier(conf),
                                  compute_client.NovaClient(conf))
        self.samples = api_samples.Samples(self)

    def call(self, method, path, status, request=None, response=None):
        """Send ``request``'s sample as an administrator.

        The answer is compared with ``response``'s sample and returned.
        """
        req = webob.Request.blank('/v1' + path, method=method, headers={
            'X-User-Id': 'admin', 'X-Project-Id': 'admin-project',
            'X-Roles': 'admin,member,reader', 'X-Auth-Token': 'token',
            'Accept': 'application/json'})
        if request:
            req.body = json.dumps(self.samples.request(request)).encode()
            req.content_type = 'application/json'
        answer = req.get_response(self.app)
        self.assertEqual(status, answer.status_int, answer.text)
        return self.samples.check(response, answer.json)

    def test_the_storage_pool_samples_are_what_the_api_answers(self):
        pool = self.call('POST', '/storage-pools', 201,
                         'storage-pools/storage-pool-create',
                         'storage-pools/storage-pool-create')['storage_pool']
        self.call('GET', '/storage-pools', 200, None,
                  'storage-pools/storage-pool-list')
        self.call('GET', '/storage-pools/' + pool['id'], 200, None,
                  'storage-pools/storage-pool-show')
        self.clock.advance(hours=1)
        self.call('PUT', '/storage-pools/' + pool['id'], 200,
                  'storage-pools/storage-pool-update',
                  'storage-pools/storage-pool-update')

    def test_a_pool_cinder_does_not_report_is_what_the_sample_shows(self):
        self.call('POST', '/storage-pools', 404,
                  'storage-pools/storage-pool-create-unknown',
                  'storage-pools/storage-pool-create-unknown')
