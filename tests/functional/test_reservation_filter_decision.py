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

"""ReservationFilter decides once per request, and not for a rebuild.

Nova skips a filter for a rebuild (``RUN_ON_REBUILD``) in
``BaseHostFilter._filter_one``, which the filter's own ``filter_all`` does
not call: it makes the same check itself, once per request.
"""

import fixtures
from nova import objects
from nova.scheduler import host_manager

from nova_filters import reservation_filter
from tests import base

NAMES = ['compute-%d' % i for i in range(4)]


class FilterDecisionTest(base.DBTestCase):

    def setUp(self):
        super().setUp()
        objects.register_all()
        self.hosts = [host_manager.HostState(name, name, 'cell')
                      for name in NAMES]
        self.filter = reservation_filter.ReservationFilter()
        pools = self.filter._pools
        self.loads = self.useFixture(fixtures.MockPatchObject(
            pools, 'get', wraps=pools.get)).mock

    def spec(self, **hints):
        return objects.RequestSpec(
            project_id='owner', scheduler_hints=hints,
            flavor=objects.Flavor(extra_specs={}))

    def test_the_pools_are_read_once_for_all_hosts(self):
        passed = self.filter.filter_all(self.hosts, self.spec())
        self.assertEqual(NAMES, [host.host for host in passed])
        self.assertEqual(1, self.loads.call_count)

    def test_a_rebuild_passes_every_host_without_reading_the_pools(self):
        passed = self.filter.filter_all(
            self.hosts, self.spec(_nova_check_type=['rebuild']))
        self.assertEqual(NAMES, [host.host for host in passed])
        self.assertEqual(0, self.loads.call_count)

    def test_each_request_is_decided_again(self):
        self.filter.filter_all(self.hosts, self.spec())
        self.filter.filter_all(self.hosts, self.spec())
        self.assertEqual(2, self.loads.call_count)

    def test_nova_runs_it_for_the_first_instance_of_a_request_only(self):
        self.assertTrue(self.filter.run_filter_for_index(0))
        self.assertFalse(self.filter.run_filter_for_index(1))
