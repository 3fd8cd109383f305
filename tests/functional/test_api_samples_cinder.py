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

"""The API reference's samples of Cinder's additions, in Cinder's harness.

The test sends the request samples of ``doc/api_samples/volumes`` to
cinder-api with the extension and compares the answers with the response
samples (:mod:`tests.api_samples`). It runs in a child process of its
own (see :mod:`tests.cinder_child`).
"""

from tests import cinder_child

IN_CINDER = cinder_child.IN_CINDER


class CinderHarness(cinder_child.CinderHarness):
    """Run this module's tests in Cinder's harness, in a child process."""

    module = __name__


if IN_CINDER:
    import json

    from tests import api_samples
    from tests.functional import cinder_base

    # The harness's endpoint, as the reference shows it.
    ENDPOINT = 'http://openstack.example.com'

    class VolumeSamplesTest(cinder_base.CinderTestCase):

        def setUp(self):
            super().setUp()
            self.override_config('volume_reservable_gb', 10, 'reservation')
            # The harness names its volume service at random.
            self.samples = api_samples.Samples(self, aliases={
                self.auth_url.rsplit('/', 1)[0]: ENDPOINT,
                self.volume.host: 'controller'})

        def call(self, method, path, status, request=None, response=None):
            """Send ``request``'s sample; check the answer.

            The answer is compared with ``response``'s sample.
            """
            body = (json.dumps(self.samples.request(request)) if request
                    else None)
            answer = self.api.api_request(
                path, method=method, body=body, check_response_status=[status],
                headers={'Content-Type': 'application/json'})
            if response:
                return self.samples.check(response, answer.json())
            self.assertEqual(b'', answer.content)
            return None

        def test_the_volume_samples_are_what_cinder_answers(self):
            volume = self.call('POST', '/volumes', 202,
                               'volumes/volume-create-reserved',
                               'volumes/volume-create-reserved')['volume']
            path = '/volumes/' + volume['id']
            self.call('GET', path, 200, None, 'volumes/volume-show-reserved')
            # The lease API's call when the lease's size changes, then the
            # engine's at the lease's start and end, as an administrator.
            self.call('POST', path + '/action', 202,
                      'volumes/volume-action-reservation-size')
            self.call('POST', path + '/action', 202,
                      'volumes/volume-action-reservation-start')
            self._poll_volume_while(volume['id'], ['reserved', 'creating'])
            self.call('GET', path, 200, None, 'volumes/volume-show-leased')
            self.call('POST', path + '/action', 202,
                      'volumes/volume-action-reservation-end',
                      'volumes/volume-action-reservation-end')
