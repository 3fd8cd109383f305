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

"""A RESERVED server's build arguments are written with its lease.

nova-api could die at any moment after the lease commits: the held-back
build must be startable from then on, so its arguments are part of the
lease-create transaction.
"""

import datetime
import json
from unittest import mock
import uuid

from nova.tests.functional.api import client
import sqlalchemy as sa

from db import api as db_api
from db import models
from reservation_ext import context
from reservation_ext import dates
from reservation_ext.leases import service as lease_service
from reservation_ext.nova_api import server_records
from tests.functional import nova_base

HOUR = datetime.timedelta(hours=1)
REQUESTS = models.InstanceReservation.__table__


class ReservedBuildArgsTest(nova_base.NovaTestCase):

    def setUp(self):
        super().setUp()
        self.add_reservable_host('compute-2')
        self.api_user = self.user_api(nova_base.OWNER)
        start = (datetime.datetime.utcnow() + HOUR).replace(microsecond=0)
        self.hints = {'reserved': 'True', 'lease_params': json.dumps({
            'start': dates.format_date(start),
            'end': dates.format_date(start + HOUR)})}

    def post_server(self):
        return self.api_user.post_server({
            'server': self._build_server(networks='none'),
            'os:scheduler_hints': self.hints})

    def instance_reservations(self):
        ctx = context.get_admin_context()
        with db_api.context_manager.reader.using(ctx) as session:
            return session.execute(sa.select(REQUESTS)).all()

    def test_the_build_args_are_there_when_the_lease_create_returns(self):
        seen = []
        # Where every lease create commits.
        create = lease_service.LeaseService._create

        def create_then_look(service, ctx, request):
            view = create(service, ctx, request)
            [reservation] = view['reservations']
            seen.append(server_records.leased_server(
                ctx, reservation['server_id']))
            return view

        with mock.patch.object(lease_service.LeaseService, '_create',
                               create_then_look):
            server = self.post_server()

        [leased] = seen
        self.assertEqual(server['id'], leased.server_id)
        self.assertTrue(leased.reserved)
        self.assertIn('"image"', leased.build_args)
        self._wait_for_state_change(server, 'RESERVED')

    def test_a_failed_lease_create_leaves_neither_server_nor_row(self):
        # Fails after the plugin wrote its row, in the same transaction.
        with mock.patch.object(lease_service.LeaseService, '_insert_events',
                               side_effect=RuntimeError('boom')):
            error = self.assertRaises(client.OpenStackApiException,
                                      self.post_server)
        self.assertEqual(500, error.response.status_code)
        self.assertEqual([], self.instance_reservations())
        self.assertEqual([], self.lease_api('GET', '/leases')['leases'])
        self.assertEqual([], self.api_user.get_servers())

    def test_a_lease_api_user_cannot_set_build_args(self):
        answer = self.lease_api('POST', '/leases', {
            'name': 'forged', 'start_date': '2099-01-01 00:00',
            'end_date': '2099-01-02 00:00',
            'reservations': [{
                'resource_type': 'virtual:instance',
                'server_id': str(uuid.uuid4()),
                'vcpus': 1, 'memory_mb': 512, 'disk_gb': 1,
                'build_args': '{"image": {}}'}]}, expect=400)
        self.assertIn('reservations[0].build_args', answer['error_message'])
