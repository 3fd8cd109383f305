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

"""The rating of the example billing consumer (tools/billing_consumer.py).

Its whole run over RabbitMQ is in test_billing_notifications; here, the
periods it rates when leases change while they run.
"""

import importlib.util
import os

from tests import base

TOP = os.path.dirname(os.path.dirname(os.path.dirname(
    os.path.abspath(__file__))))
_spec = importlib.util.spec_from_file_location(
    'billing_consumer', os.path.join(TOP, 'tools', 'billing_consumer.py'))
billing_consumer = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(billing_consumer)

HOST = {'id': '1', 'hypervisor_hostname': 'compute-1', 'vcpus': 16,
        'memory_mb': 32768, 'local_gb': 400}
SERVERS = {'id': 's1', 'flavor_id': 'm1', 'amount': 2, 'vcpus': 2,
           'memory_mb': 4096, 'disk_gb': 20}
VOLUME = {'id': 'v1', 'size_gb': 100, 'volume_type': None}


def payload(hour, *reservations, version='1.0'):
    """A lease payload at 2027-01-10 ``hour``:00 with ``reservations``."""
    return {'payload_version': version, 'id': 'lease-1',
            'project_id': 'p1', 'status': 'ACTIVE',
            'event_time': '2027-01-10T%02d:00:00.000000' % hour,
            'reservations': [{'resource_type': resource_type,
                              'resources': resources}
                             for resource_type, resources in reservations]}


class BillingConsumerTest(base.TestCase):

    def setUp(self):
        super().setUp()
        self.lines = []
        self.endpoint = billing_consumer.BillingEndpoint(
            emit=self.lines.append)

    def receive(self, event_type, message):
        self.endpoint.info({}, 'reservation', event_type, message, {})

    def usage(self):
        return [line['usage'] for line in self.lines if 'usage' in line]

    def test_what_a_lease_holds_adds_up_every_resource_type(self):
        self.assertEqual(
            {'hosts': 1, 'vcpus': 20, 'memory_mb': 40960,
             'disk_gb': 540},
            billing_consumer.held(payload(
                1, ('physical:host', [HOST]),
                ('virtual:instance', [SERVERS]),
                ('virtual:volume', [VOLUME]),
                ('test:other', [{'id': 'x'}]))))

    def test_a_lease_is_rated_from_its_start_to_its_end(self):
        self.receive('lease.create', payload(0, ('physical:host', [HOST])))
        self.receive('lease.event.start_lease',
                     payload(1, ('physical:host', [HOST])))
        self.receive('lease.event.before_end_lease',
                     payload(2, ('physical:host', [HOST])))
        self.assertEqual([], self.usage())
        self.receive('lease.event.end_lease',
                     payload(4, ('physical:host', [HOST])))
        self.receive('lease.delete', payload(5, ('physical:host', [HOST])))
        self.assertEqual([{
            'lease_id': 'lease-1', 'project_id': 'p1',
            'from': '2027-01-10T01:00:00.000000',
            'to': '2027-01-10T04:00:00.000000', 'hours': 3.0,
            'host_hours': 3.0, 'vcpu_hours': 48.0,
            'memory_gb_hours': 96.0, 'disk_gb_hours': 1200.0}],
            self.usage())

    def test_an_update_while_running_starts_a_new_period(self):
        self.receive('lease.event.start_lease',
                     payload(1, ('virtual:volume', [VOLUME])))
        bigger = dict(VOLUME, size_gb=300)
        self.receive('lease.update', payload(3, ('virtual:volume', [bigger])))
        self.receive('lease.delete', payload(4, ('virtual:volume', [bigger])))
        self.assertEqual(
            [(2.0, 200.0), (1.0, 300.0)],
            [(usage['hours'], usage['disk_gb_hours'])
             for usage in self.usage()])

    def test_a_lease_that_never_started_costs_nothing(self):
        for event_type in ('lease.create', 'lease.update', 'lease.delete'):
            self.receive(event_type, payload(1, ('physical:host', [HOST])))
        self.assertEqual([], self.usage())

    def test_another_major_payload_version_is_skipped(self):
        self.receive('lease.event.start_lease',
                     payload(1, ('physical:host', [HOST]), version='2.0'))
        self.assertEqual([{'skipped': 'lease.event.start_lease',
                           'payload_version': '2.0'}], self.lines)
        self.assertEqual({}, self.endpoint.meter.running)

    def test_only_lease_notifications_of_the_reservation_service_count(self):
        rule = billing_consumer.BillingEndpoint.filter_rule
        self.assertTrue(rule.match({}, 'reservation', 'lease.create', {},
                                   {}))
        self.assertFalse(rule.match({}, 'compute.host-1',
                                    'compute.instance.create.end', {}, {}))
        self.assertFalse(rule.match({}, 'reservation', 'host.create', {},
                                    {}))
