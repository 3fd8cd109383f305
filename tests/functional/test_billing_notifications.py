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

"""Billing notifications over a real RabbitMQ, in Nova's harness.

The lease API in nova-api and a real engine send the ``lease.*``
notifications of a host lease's whole life to RabbitMQ; the example
billing consumer (``tools/billing_consumer.py``, an oslo.messaging
notification listener) runs as its own process, as an operator runs it,
and prints every notification with its payload and the usage it rates.
Every payload is checked against the documented schema. The broker is
the one of :class:`tests.fixtures.RabbitMQ` (skipped without one, unless
``RESERVATION_REQUIRE_RABBITMQ=1``).
"""

import datetime
import json
import os
import queue
import signal
import subprocess
import sys
import threading

from oslo_messaging import conffixture

from reservation_ext import clock as clock_mod
from reservation_ext import conf as conf_mod
from reservation_ext import dates
from tests import fixtures
from tests.functional import nova_base
from tests import payloads

CONSUMER = os.path.join(nova_base.TOP, 'tools', 'billing_consumer.py')
# Hang guard for a line of the consumer, not a performance expectation.
WAIT = 60
MINUTE = datetime.timedelta(minutes=1)
# compute-2 and compute-3 run nova.virt.fake.MediumFakeDriver.
MEDIUM = {'vcpus': 10, 'memory_mb': 8192, 'local_gb': 1028}


def _date(text):
    return datetime.datetime.strptime(text, dates.VIEW_DATE_FORMAT)


class Consumer:
    """The example billing consumer, run as a process of its own."""

    def __init__(self, test, url, topic, exchange):
        self.process = subprocess.Popen(
            [sys.executable, CONSUMER, '--transport-url', url,
             '--topic', topic, '--exchange', exchange, '--payloads'],
            stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
        test.addCleanup(self.stop)
        self.lines = queue.Queue()
        self.reader = threading.Thread(target=self._read, daemon=True)
        self.reader.start()

    def _read(self):
        for line in self.process.stdout:
            self.lines.put(json.loads(line))

    def next_line(self):
        """The consumer's next line (a dict), waiting for it."""
        return self.lines.get(timeout=WAIT)

    def stop(self):
        """Stop the consumer (as a service manager does), read its output."""
        if self.process.poll() is None:
            self.process.send_signal(signal.SIGTERM)
            try:
                self.process.wait(WAIT)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait()
        self.reader.join(WAIT)
        self.process.stdout.close()


class BillingNotificationsTest(nova_base.NovaTestCase):

    def setUp(self):
        self.broker = self.useFixture(fixtures.RabbitMQ())
        # Before Nova's setUp, which builds the lease API and its notifier;
        # the fixture registers oslo.messaging's options.
        self.useFixture(conffixture.ConfFixture(conf_mod.CONF))
        self.flags(driver=['messagingv2'], transport_url=self.broker.url,
                   topics=[self.broker.topic],
                   group='oslo_messaging_notifications')
        # Nova's own notifications follow the same configuration: only the
        # legacy ones, which go to the same topic, where the consumer's
        # filter passes them over, not versioned ones to a queue of their
        # own that nobody would read.
        self.flags(notification_format='unversioned', group='notifications')
        super().setUp()
        for name in ('compute-1', 'compute-2', 'compute-3'):
            self.add_reservable_host(name)
        # The lease API and the engine publish on the exchange of their
        # configuration, here Nova's.
        self.consumer = Consumer(self, self.broker.url, self.broker.topic,
                                 conf_mod.CONF.control_exchange)

    def expect(self, event_type, status):
        """The consumer's line of the next notification, and its payload.

        The payload must be valid by the schema and of ``event_type``
        with the lease in ``status``.
        """
        line = self.consumer.next_line()
        self.assertEqual((event_type, status),
                         (line.get('notification'), line.get('status')),
                         line)
        return line, payloads.checked(line['payload'])

    def assertResources(self, hosts, payload):
        [reservation] = payload['reservations']
        self.assertEqual('physical:host', reservation['resource_type'])
        self.assertEqual(
            [dict(MEDIUM, id=hosts[name], hypervisor_hostname=name)
             for name in ('compute-2', 'compute-3')],
            reservation['resources'])

    def assertEventTime(self, earliest, latest, payload):
        self.assertTrue(earliest <= _date(payload['event_time']) <= latest,
                        (earliest, payload['event_time'], latest))

    def test_a_billing_consumer_receives_every_event_of_a_lease_life(self):
        hosts = {host['hypervisor_hostname']: host['id'] for host in
                 self.admin_lease_api('GET', '/os-hosts')['hosts']}
        now = clock_mod.SYSTEM.now()
        body = {'name': 'billed', 'start_date': nova_base.lease_date(
                    now + datetime.timedelta(hours=1)),
                'end_date': nova_base.lease_date(
                    now + datetime.timedelta(days=1)),
                'reservations': [{'resource_type': 'physical:host',
                                  'min': 2, 'max': 2,
                                  'hypervisor_properties':
                                      '[">=", "$vcpus", "8"]'}]}
        lease = self.lease_api('POST', '/leases', body)['lease']
        _, created = self.expect('lease.create', 'PENDING')
        self.assertEventTime(now, clock_mod.SYSTEM.now(), created)
        self.assertEqual(payloads.as_view(created), lease)
        self.assertEqual('1.1', created['payload_version'])
        self.assertEqual(('owner-project', 'user-owner-project'),
                         (created['project_id'], created['user_id']))
        self.assertResources(hosts, created)

        start = _date(lease['start_date'])
        end = _date(lease['end_date']) + datetime.timedelta(hours=2)
        before = clock_mod.SYSTEM.now()
        lease = self.lease_api('PUT', '/leases/' + lease['id'], {
            'end_date': nova_base.lease_date(end)})['lease']
        _, updated = self.expect('lease.update', 'PENDING')
        self.assertEventTime(before, clock_mod.SYSTEM.now(), updated)
        self.assertEqual(payloads.as_view(updated), lease)
        self.assertEqual(dates.format_date(end - 60 * MINUTE),
                         updated['before_end_date'])
        self.assertResources(hosts, updated)

        for at, event_type, status in [
                (start + MINUTE, 'start_lease', 'ACTIVE'),
                (end - 59 * MINUTE, 'before_end_lease', 'ACTIVE'),
                (end + MINUTE, 'end_lease', 'TERMINATED')]:
            self.run_engine(at)
            _, payload = self.expect('lease.event.' + event_type, status)
            self.assertEqual(dates.format_date(at),
                             payload['event_time'])
            self.assertResources(hosts, payload)
        # The consumer rates the hosts from the start to the end.
        usage = self.consumer.next_line()['usage']
        hours = (end - start).total_seconds() / 3600
        self.assertEqual(
            {'lease_id': lease['id'], 'project_id': 'owner-project',
             'from': dates.format_date(start + MINUTE),
             'to': dates.format_date(end + MINUTE), 'hours': hours,
             'host_hours': 2 * hours, 'vcpu_hours': 20 * hours,
             'memory_gb_hours': 16 * hours, 'disk_gb_hours': 2056 * hours},
            usage)

        before = clock_mod.SYSTEM.now()
        self.lease_api('DELETE', '/leases/' + lease['id'])
        line, deleted = self.expect('lease.delete', 'DELETING')
        self.assertEventTime(before, clock_mod.SYSTEM.now(), deleted)
        self.assertResources(hosts, deleted)
        self.assertEqual({'hosts': 2, 'vcpus': 20, 'memory_mb': 16384,
                          'disk_gb': 2056}, line['held'])
        # Nothing more: the consumer stops cleanly having printed no other
        # line.
        self.consumer.stop()
        self.assertEqual(0, self.consumer.process.returncode)
        self.assertTrue(self.consumer.lines.empty())
