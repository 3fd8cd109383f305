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

"""Servers that start now fill the gaps of reservable hosts, in Nova's harness.

``[reservation] fill_gaps``: ``nova boot --hint reserved=True`` with a
lease that starts now is booked as a slice of a reservable host up to its
end when that ends before the host's next booking (cleaning time
included), and built there at once; otherwise it runs in the shared pool.
Only compute-2 is reservable (one test adds compute-3, to see which gap a
server takes), and ordinary servers never land on it, so a server on
compute-2 is one that the scheduler saw booked there.
"""

import datetime
import json
from unittest import mock
import uuid

from nova.conductor import rpcapi as conductor_rpcapi
from nova.tests.functional.api import client
import sqlalchemy as sa

from db import api as db_api
from db import models
from reservation_ext import context
from reservation_ext import dates
from reservation_ext.leases import service as lease_service
from reservation_ext.planning import reserved_servers
from tests.functional import nova_base

MINUTE = datetime.timedelta(minutes=1)
HOUR = datetime.timedelta(hours=1)
LEASE_KEY = 'reservation:lease_id'
CLEANING = 30
RECYCLING = models.RecyclingHost.__table__


class GapFillingTest(nova_base.NovaTestCase):

    def setUp(self):
        super().setUp()
        self.flags(cleaning_time=CLEANING, group='reservation')
        self.api_user = self.user_api(nova_base.OWNER)
        self.now = datetime.datetime.utcnow().replace(second=0,
                                                      microsecond=0)
        self.host = self.add_reservable_host('compute-2')
        # compute-2's next booking: a host lease from now + 3h.
        self.host_start = self.now + 3 * HOUR
        self.host_lease = self.lease_host(self.host_start,
                                          self.host_start + 24 * HOUR)

    def lease_host(self, start, end, expect=None, host='compute-2'):
        return self.lease_api('POST', '/leases', {
            'name': 'whole-%s-%s' % (host, start.strftime('%H%M')),
            'start_date': nova_base.lease_date(start),
            'end_date': nova_base.lease_date(end),
            'reservations': [{'resource_type': 'physical:host', 'min': 1,
                              'max': 1, 'hosts': [host]}]},
            expect=expect)

    def boot_until(self, end, name='vm1'):
        """A server whose lease starts now and ends at ``end``, ACTIVE."""
        server = self.api_user.post_server({
            'server': self._build_server(name=name, networks='none'),
            'os:scheduler_hints': {
                'reserved': 'True', 'lease_params': json.dumps({
                    'start': 'now', 'end': dates.format_date(end)})}})
        return self._wait_for_state_change(server, 'ACTIVE')

    def host_of(self, server):
        return self.admin_api.get_server(server['id'])[
            'OS-EXT-SRV-ATTR:hypervisor_hostname']

    def lease_of(self, server):
        return self.lease_api('GET', '/leases/' + self.lease_id_of(server))[
            'lease']

    def reservation_of(self, server):
        [reservation] = self.lease_of(server)['reservations']
        return reservation

    def assertSharedPool(self, server):
        self.assertNotEqual('compute-2', self.host_of(server))
        reservation = self.reservation_of(server)
        self.assertTrue(reservation['shared_pool'])
        self.assertNotIn('host', reservation)

    def test_a_server_that_ends_before_the_next_booking_fills_the_gap(self):
        # Ends 30 minutes (the cleaning time) before the host lease.
        end = self.host_start - CLEANING * MINUTE
        server = self.boot_until(end)
        self.assertEqual('compute-2', self.host_of(server))
        reservation = self.reservation_of(server)
        self.assertEqual((False, 'compute-2'), (reservation['shared_pool'],
                                                reservation['host']))
        self.assertIn(self._get_provider_uuid_by_host('compute-2'),
                      self._get_allocations_by_server_uuid(server['id']))
        # Nothing else is booked over the gap: no host lease before the
        # server's end plus the cleaning time.
        self.lease_host(end, end + HOUR, expect=409)
        # Its end is hard: the server goes, and the host lease starts.
        self.run_engine(at=datetime.datetime.utcnow() + MINUTE)
        self.assertEqual('ACTIVE', self.lease_of(server)['status'])
        self.run_engine(at=end + MINUTE)
        self._wait_until_deleted(server)
        self.run_engine(at=self.host_start + MINUTE)
        self.assertEqual('ACTIVE', self.lease_api(
            'GET', '/leases/' + self.host_lease['lease']['id'])[
                'lease']['status'])

    def test_a_server_takes_the_tightest_gap_and_leaves_hosts_whole(self):
        # compute-3 (registered after compute-2) is booked from now + 2h,
        # sooner than compute-2: its gap is the tighter one.
        self.add_reservable_host('compute-3')
        self.lease_host(self.now + 2 * HOUR, self.now + 4 * HOUR,
                        host='compute-3')
        first = self.boot_until(self.now + HOUR)
        self.assertEqual('compute-3', self.host_of(first))
        # compute-3 now carries a slice: the next server joins it, and
        # compute-2 stays whole for a host lease until its booking.
        second = self.boot_until(self.now + HOUR, name='vm2')
        self.assertEqual('compute-3', self.host_of(second))
        self.lease_host(self.now + 5 * MINUTE, self.now + 2 * HOUR)

    def test_the_gap_is_booked_before_nova_schedules_the_server(self):
        seen = []
        cast = conductor_rpcapi.ComputeTaskAPI.schedule_and_build_instances

        def look_then_cast(rpcapi, ctx, build_requests, request_spec,
                           *args, **kwargs):
            [spec] = request_spec
            with db_api.context_manager.reader.using(
                    context.get_admin_context()) as session:
                booked = reserved_servers.booked_host(
                    session, spec.instance_uuid)
            seen.append((booked,
                         getattr(spec.requested_destination, 'node', None)))
            return cast(rpcapi, ctx, build_requests, request_spec, *args,
                        **kwargs)

        with mock.patch.object(conductor_rpcapi.ComputeTaskAPI,
                               'schedule_and_build_instances',
                               look_then_cast):
            self.boot_until(self.now + HOUR)
        self.assertEqual([('compute-2', 'compute-2')], seen)

    def test_a_server_that_would_reach_the_next_booking_uses_the_pool(self):
        # Its end plus the cleaning time reaches the host lease's start.
        server = self.boot_until(self.host_start - MINUTE)
        self.assertSharedPool(server)

    def test_a_server_in_a_gap_is_extended_only_while_its_host_is_free(self):
        server = self.boot_until(self.now + 2 * HOUR)
        self.run_engine(at=datetime.datetime.utcnow() + MINUTE)
        path = '/leases/' + self.lease_id_of(server)
        answer = self.lease_api('PUT', path, {
            'end_date': dates.format_date(self.now + 4 * HOUR)},
            expect=409)
        latest = self.host_start - CLEANING * MINUTE
        self.assertIn('The lease can be extended until %s at the latest.'
                      % latest.strftime(dates.BLAZAR_DATE_FORMAT),
                      answer['error_message'])
        self.assertEqual(dates.format_date(self.now + 2 * HOUR),
                         self.lease_of(server)['end_date'])
        lease = self.lease_api('PUT', path, {
            'end_date': dates.format_date(latest)})['lease']
        self.assertEqual((dates.format_date(latest), 'compute-2'),
                         (lease['end_date'], lease['reservations'][0]['host']))
        self.assertEqual('compute-2', self.host_of(server))

    def test_a_server_in_a_gap_keeps_its_host_before_its_lease_starts(self):
        # Built at once, before the engine starts its lease: another free
        # host is no place to extend it to.
        self.add_reservable_host('compute-3')
        server = self.boot_until(self.now + 2 * HOUR)
        self.assertEqual('PENDING', self.lease_of(server)['status'])
        self.lease_api('PUT', '/leases/' + self.lease_id_of(server), {
            'end_date': dates.format_date(self.now + 4 * HOUR)},
            expect=409)
        self.assertEqual('compute-2', self.reservation_of(server)['host'])

    def test_a_host_that_recycles_has_no_gap(self):
        # As the host lease plugin leaves a host whose lease ended with
        # on_end recycle, while servers are left on it.
        ctx = context.get_admin_context()
        with db_api.writer(ctx) as session:
            session.execute(sa.insert(RECYCLING).values(
                host_id=int(self.host['id']),
                reservation_id=str(uuid.uuid4()),
                check_at=datetime.datetime.utcnow() + HOUR))
        server = self.boot_until(self.now + HOUR)
        self.assertSharedPool(server)

    def test_without_fill_gaps_a_server_that_starts_now_uses_the_pool(self):
        self.flags(fill_gaps=False, group='reservation')
        server = self.boot_until(self.now + HOUR)
        self.assertSharedPool(server)

    def test_an_ordinary_server_still_never_lands_on_a_reservable_host(self):
        server = self.boot()
        self.assertNotIn(LEASE_KEY, server['metadata'])
        self.assertNotEqual('compute-2', self.host_of(server))
        self.assertEqual([self.host_lease['lease']['id']], [
            lease['id'] for lease in self.lease_api('GET', '/leases')[
                'leases']])

    def test_a_server_whose_lease_fails_is_deleted_and_holds_nothing(self):
        with mock.patch.object(lease_service.LeaseService, '_insert_events',
                               side_effect=RuntimeError('boom')):
            error = self.assertRaises(client.OpenStackApiException,
                                      self.boot_until, self.now + HOUR)
        self.assertEqual(500, error.response.status_code)
        self.assertEqual([], self.api_user.get_servers())
        for host, _driver in nova_base.COMPUTES:
            self.assertEqual(
                0, self._get_provider_usages(
                    self._get_provider_uuid_by_host(host))['VCPU'], host)
