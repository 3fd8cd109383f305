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

"""Billing payloads of the three resource types, from the real plugins.

The lease service with the real ``physical:host``, ``virtual:instance``
and ``virtual:volume`` plugins on SQLite, PostgreSQL and MariaDB,
notifications to oslo.messaging's in-memory driver: each payload is
checked against the schema and carries every resource with its size,
read in a number of queries that does not grow with the number of
leases. (The same over
RabbitMQ, in Nova's harness: test_billing_notifications.)
"""

import datetime
import uuid

import fixtures
from oslo_messaging.notify import _impl_test
import sqlalchemy as sa

from db import api as db_api
from reservation_ext import clock as clock_mod
from reservation_ext import context
from reservation_ext.leases import notifications
from reservation_ext.leases import service as lease_service
from reservation_ext.leases import views
from reservation_ext import plugins as plugins_mod
from reservation_ext.store import hosts as store_hosts
from tests import base
from tests import fixtures as test_fixtures
from tests import payloads

NOW = datetime.datetime(2027, 1, 10, 9, 0, 0)
HOSTS = {'big': (32, 131072, 2000), 'small': (8, 16384, 200)}


def lease_body(name, server_id, volume_id, day):
    """A lease of the big host, a server and a volume, from ``day`` on."""
    return {
        'name': name, 'start_date': '2027-01-%02d 09:00' % day,
        'end_date': '2027-01-%02d 09:00' % (day + 1),
        'reservations': [
            {'resource_type': 'physical:host', 'min': 1, 'max': 1,
             'hypervisor_properties': '[">=", "$vcpus", "16"]'},
            {'resource_type': 'virtual:instance', 'server_id': server_id,
             'flavor_id': 'm1.medium', 'vcpus': 2, 'memory_mb': 4096,
             'disk_gb': 40},
            {'resource_type': 'virtual:volume', 'volume_id': volume_id,
             'size_gb': 50, 'volume_type': 'fast'},
        ]}


class _PayloadTests:

    def setUp(self):
        super().setUp()
        conf = self.useFixture(test_fixtures.ReservationConf({
            ('reservation', 'volume_reservable_gb'): 100,
            ('oslo_messaging_notifications', 'driver'): ['test']})).conf
        _impl_test.reset()
        self.addCleanup(_impl_test.reset)
        self.clock = clock_mod.ManualClock(NOW)
        self.plugins = plugins_mod.load_plugins(conf, self.clock)
        self.service = lease_service.LeaseService(
            conf, self.clock, self.plugins, notifications.get_notifier(conf))
        self.user = context.RequestContext(project_id='p1', user_id='u1',
                                           roles=['member', 'reader'])
        with db_api.writer(self.ctx, self.clock) as session:
            self.host_ids = {name: str(store_hosts.add_host(session, {
                'hypervisor_hostname': name, 'service_name': name,
                'vcpus': vcpus, 'memory_mb': memory_mb,
                'local_gb': local_gb})) for name, (vcpus, memory_mb, local_gb)
                in HOSTS.items()}

    def create(self, name='billed', day=11):
        return self.create_with(self.service, name, day)

    def create_with(self, service, name='billed', day=11):
        server_id, volume_id = str(uuid.uuid4()), str(uuid.uuid4())
        view = service.create(self.user, lease_body(
            name, server_id, volume_id, day))
        return view, server_id, volume_id

    def sent(self):
        """``(event type, payload)`` of each notification sent, checked."""
        return [(message['event_type'], payloads.checked(message['payload']))
                for _ctx, message, _priority, _retry
                in _impl_test.NOTIFICATIONS]

    def test_a_created_lease_notifies_every_resource_with_its_size(self):
        view, server_id, volume_id = self.create()
        [(event_type, payload)] = self.sent()
        self.assertEqual('lease.create', event_type)
        self.assertEqual(view, payloads.as_view(payload))
        self.assertEqual(('1.1', '2027-01-10T09:00:00.000000',
                          '2027-01-12T08:00:00.000000', 'p1', 'u1'),
                         (payload['payload_version'], payload['event_time'],
                          payload['before_end_date'], payload['project_id'],
                          payload['user_id']))
        self.assertEqual({
            'physical:host': [{
                'id': self.host_ids['big'], 'hypervisor_hostname': 'big',
                'vcpus': 32, 'memory_mb': 131072, 'local_gb': 2000}],
            'virtual:instance': [{
                'id': server_id, 'flavor_id': 'm1.medium', 'amount': 1,
                'vcpus': 2, 'memory_mb': 4096, 'disk_gb': 40}],
            'virtual:volume': [{
                'id': volume_id, 'size_gb': 50, 'volume_type': 'fast'}],
        }, {reservation['resource_type']: reservation['resources']
            for reservation in payload['reservations']})

    def test_an_update_notifies_the_new_dates_and_the_same_resources(self):
        view, _, _ = self.create()
        self.clock.advance(minutes=5)
        self.service.update(self.user, view['id'],
                            {'name': 'renamed', 'prolong_for': '1h'})
        [(_, created), (event_type, updated)] = self.sent()
        self.assertEqual('lease.update', event_type)
        self.assertEqual(
            ('renamed', '2027-01-10T09:05:00.000000',
             '2027-01-12T10:00:00.000000', '2027-01-12T09:00:00.000000'),
            (updated['name'], updated['event_time'], updated['end_date'],
             updated['before_end_date']))
        self.assertEqual(
            [r['resources'] for r in created['reservations']],
            [r['resources'] for r in updated['reservations']])

    def test_payloads_are_read_in_the_same_queries_for_any_lease_count(self):
        leases = [self.create('lease%d' % day, day)[0]
                  for day in (11, 13, 15)]
        self.assertEqual(self._queries(leases[:1]), self._queries(leases))

    def test_a_lease_is_created_while_the_broker_is_down(self):
        # Nothing listens on port 1 of the loopback: the send fails at once.
        conf = self.service.conf
        conf.set_override('driver', ['messagingv2'],
                          group='oslo_messaging_notifications')
        conf.set_override('transport_url', 'rabbit://guest:guest@'
                          '127.0.0.1:1/', group='oslo_messaging_notifications')
        service = lease_service.LeaseService(
            conf, self.clock, self.plugins, notifications.get_notifier(conf))
        log = self.useFixture(fixtures.FakeLogger(
            name='oslo_messaging.notify.messaging'))
        view, _, _ = self.create_with(service)
        self.assertEqual(view, service.get(self.user, view['id']))
        self.assertIn('Could not send notification', log.output)

    def _queries(self, leases):
        """How many statements reading the payloads of ``leases`` takes."""
        statements = []
        engine = db_api.get_engine()

        def count(*args):
            statements.append(args)

        sa.event.listen(engine, 'before_cursor_execute', count)
        try:
            with db_api.context_manager.reader.using(self.ctx) as session:
                read = notifications.read_payloads(
                    session, self.plugins, views.lease_views_by_id(
                        session, self.plugins,
                        [lease['id'] for lease in leases]))
        finally:
            sa.event.remove(engine, 'before_cursor_execute', count)
        self.assertEqual(len(leases), len(read))
        return len(statements)


class PayloadsSQLiteTest(_PayloadTests, base.DBTestCase):
    pass


class PayloadsPostgreSQLTest(_PayloadTests, base.PostgreSQLTestCase):
    pass


class PayloadsMySQLTest(_PayloadTests, base.MySQLTestCase):
    pass
