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

"""What the lease API reads of Cinder's quota set and leased volumes."""

from reservation_ext.clients import block_storage_quotas
from tests import base


def quota_set(volumes, gigabytes):
    """Cinder's ``quota_set`` with usage: ``(limit, in_use, reserved)``."""
    return dict(
        {name: dict(zip(('limit', 'in_use', 'reserved'), values))
         for name, values in (('volumes', volumes),
                              ('gigabytes', gigabytes))},
        id='p1', snapshots={'limit': 10, 'in_use': 7, 'reserved': 0})


def volume(size, status='available'):
    """A volume as ``GET /volumes/{id}`` shows it (the keys read)."""
    return {'size': size, 'status': status}


class QuotaUsageTest(base.TestCase):

    def usage(self, quotas, volumes=()):
        return block_storage_quotas.quota_usage(quotas, list(volumes))

    def test_the_limits_are_cinders_and_the_usage_adds_its_reservations(
            self):
        limits, usage, leased = self.usage(quota_set((5, 2, 1), (-1, 30, 4)))
        self.assertEqual({'volumes': 5, 'gigabytes': -1}, limits)
        self.assertEqual({'volumes': 3, 'gigabytes': 34}, usage)
        self.assertEqual({'volumes': 0, 'gigabytes': 0}, leased)

    def test_started_leased_volumes_are_subtracted_with_their_sizes(self):
        _limits, _usage, leased = self.usage(
            quota_set((5, 2, 0), (100, 30, 0)),
            [volume(10), volume(3, 'in-use'), volume(1, 'error')])
        self.assertEqual({'volumes': 3, 'gigabytes': 14}, leased)

    def test_reserved_and_missing_volumes_hold_no_quota(self):
        _limits, _usage, leased = self.usage(
            quota_set((5, 1, 0), (100, 10, 0)),
            [volume(50, 'reserved'), None, volume(10)])
        self.assertEqual({'volumes': 1, 'gigabytes': 10}, leased)
