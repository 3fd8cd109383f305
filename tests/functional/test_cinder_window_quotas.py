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

"""Cinder's quotas count a leased volume over its lease's window only.

Inside Cinder's harness (a child process, see :mod:`tests.cinder_child`):
the quotas are set through Cinder's ``os-quota-sets`` API as ``openstack
quota set --volumes N --gigabytes G`` does; the volumes are created with
the ``reserved`` / ``lease_params`` hints.
"""

from tests import cinder_child

IN_CINDER = cinder_child.IN_CINDER


class CinderHarness(cinder_child.CinderHarness):
    """Run this module's tests in Cinder's harness, in a child process."""

    module = __name__


if IN_CINDER:
    import datetime
    import json

    from tests.functional import cinder_base

    HOUR = datetime.timedelta(hours=1)

    class CinderWindowQuotasTest(cinder_base.CinderTestCase):

        def setUp(self):
            super().setUp()
            self.override_config('volume_reservable_gb', 100,
                                 'reservation')
            self.start = (datetime.datetime.utcnow() + HOUR).replace(
                microsecond=0)

        def set_quota(self, **quotas):
            response = self.api.api_request(
                '/os-quota-sets/%s' % self.api.project_id, method='PUT',
                body=json.dumps({'quota_set': quotas}),
                headers={'Content-Type': 'application/json'})
            self.assertEqual(200, response.status_code, response.text)

        def create(self, size, start=None, hours=1, name='scratch',
                   expect=202):
            start = start or self.start
            body = {'volume': {'size': size, 'name': name},
                    'OS-SCH-HNT:scheduler_hints': {
                        'reserved': 'True', 'lease_params': json.dumps({
                            'start': start.strftime('%Y-%m-%d %H:%M'),
                            'end': (start + hours * HOUR).strftime(
                                '%Y-%m-%d %H:%M')})}}
            response = self.api.api_request(
                '/volumes', method='POST', body=json.dumps(body),
                headers={'Content-Type': 'application/json'})
            self.assertEqual(expect, response.status_code, response.text)
            return response.json()

        def test_the_volume_over_the_volumes_quota_is_cinders_413(self):
            self.set_quota(volumes=2)
            self.create(1, name='a')
            self.create(1, name='b')
            fault = self.create(1, name='c', expect=413)
            self.assertEqual(
                "Maximum number of volumes allowed (2) exceeded for quota "
                "'volumes'.", fault['overLimit']['message'])
            self.assertEqual(['a', 'b'], sorted(
                volume['name'] for volume in self.api.get_volumes()))

        def test_gigabytes_count_the_sizes_in_the_window(self):
            self.set_quota(gigabytes=10)
            self.create(6, name='a')
            fault = self.create(5, name='b', expect=413)
            self.assertEqual(
                'Requested volume or snapshot exceeds allowed gigabytes '
                'quota. Requested 5G, quota is 10G and 6G has been '
                'consumed.', fault['overLimit']['message'])
            # Another window does not compete.
            self.create(5, start=self.start + HOUR, name='b')
            self.assertEqual(2, len(self.api.get_volumes()))

        def test_a_deleted_volume_frees_its_quota(self):
            self.set_quota(volumes=1)
            volume = self.create(1, name='a')['volume']
            self.create(1, name='b', expect=413)
            self.api.delete_volume(volume['id'])
            self.create(1, name='b')
