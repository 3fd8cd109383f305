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

"""The Nova internals that the middleware and the filter rely on.

Each is a method or function of Nova's that ``reservation_ext/nova_api/``
or ``nova_filters/`` wraps (``wrapping.wrap_once``) or calls, and that
Nova does not promise to keep. These tests read the installed Nova and
fail, naming the internal, when one is gone or takes other parameters;
doc/source/admin/upgrading.rst lists them with these tests.
"""

import inspect

from nova.compute import api as compute_api
from nova.conductor import api as conductor_api
from nova import objects
from nova.scheduler.client import report
from nova.scheduler import filters
from nova.scheduler import utils as scheduler_utils

from tests import base


class NovaInternalsTest(base.TestCase):
    """The parameters of each Nova internal, as the project calls it."""

    def setUp(self):
        super().setUp()
        objects.register_all()

    def assert_parameters(self, function, names):
        """Check that ``function`` takes exactly ``names``, in order."""
        self.assertEqual(list(names),
                         list(inspect.signature(function).parameters),
                         function.__qualname__)

    def test_the_conductor_still_takes_the_build_that_is_held_back(self):
        # held_builds wraps it and calls it with these, by keyword.
        self.assert_parameters(
            conductor_api.ComputeTaskAPI.schedule_and_build_instances,
            ['self', 'context', 'build_requests', 'request_spec', 'image',
             'admin_password', 'injected_files', 'requested_networks',
             'block_device_mapping', 'tags'])

    def test_compute_api_still_reads_every_instance_through_get_instance(
            self):
        # server_access wraps it to hide servers waiting for a lease.
        self.assert_parameters(
            compute_api.API._get_instance,
            ['self', 'context', 'instance_uuid', 'expected_attrs',
             'cell_down_support'])

    def test_compute_api_still_checks_the_quota_of_an_upsize(self):
        # held_builds counts a held-back build's quota as a resize does.
        self.assert_parameters(
            compute_api.API._check_quota_for_upsize,
            ['context', 'instance', 'current_flavor', 'new_flavor',
             'is_bfv', 'is_revert'])

    def test_the_report_client_still_finds_a_provider_by_name(self):
        # host_room reads a booked host's inventory in Placement.
        self.assert_parameters(report.report_client_singleton, [])
        self.assert_parameters(
            report.SchedulerReportClient.get_provider_by_name,
            ['self', 'context', 'name'])
        self.assert_parameters(
            scheduler_utils.ResourceRequest.from_request_spec,
            ['request_spec', 'enable_pinning_translate'])
        # ... and counts the builds cast there that it has not claimed.
        self.assert_parameters(
            report.SchedulerReportClient.get_allocations_for_resource_provider,
            ['self', 'context', 'rp_uuid'])
        self.assert_parameters(
            scheduler_utils.ResourceRequest.merged_resources, ['self'])

    def test_host_filters_still_get_the_host_and_the_request_spec(self):
        # ReservationFilter overrides both and tells rebuilds apart.
        self.assert_parameters(filters.BaseHostFilter.host_passes,
                               ['self', 'host_state', 'filter_properties'])
        self.assert_parameters(filters.BaseHostFilter.filter_all,
                               ['self', 'filter_obj_list', 'spec_obj'])
        self.assert_parameters(scheduler_utils.request_is_rebuild,
                               ['spec_obj'])

    def test_the_objects_still_offer_the_lookups_the_middleware_uses(self):
        for function, names in (
                (objects.RequestSpec.get_by_instance_uuid,
                 ['context', 'instance_uuid']),
                (objects.RequestSpec.get_scheduler_hint,
                 ['self', 'hint_name', 'default']),
                (objects.BuildRequest.get_by_instance_uuid,
                 ['context', 'instance_uuid']),
                (objects.InstanceGroup.get_by_uuid, ['context', 'uuid']),
                (objects.InstanceGroup.add_members,
                 ['context', 'group_uuid', 'instance_uuids']),
                (objects.Flavor.get_by_flavor_id,
                 ['context', 'flavor_id', 'read_deleted'])):
            self.assert_parameters(function, names)
        self.assertLessEqual({'host', 'node'},
                             set(objects.Destination.fields))
