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

"""The pure parts of the burst benchmark (bench/burst.py).

Its percentiles, the workload's mix, how an engine call is told apart,
the fault proxy (against a small local HTTP service), and the shape of
a case's JSON line: what failed, or never finished, is
counted apart and kept out of the lateness figures.
"""

import datetime
import http.server
import json
import threading
import urllib.error
import urllib.request

from bench import burst as bench_burst
from harness import burst
from harness import fault_proxy
from tests import base

T0 = datetime.datetime(2030, 1, 1, 9, 0)


def record(phase, issued, usable, status='ACTIVE', event='DONE',
           kind='server', reason=None):
    """One lease's record as harness.burst.observe makes it."""
    return {'kind': kind, 'phase': phase, 'status': status,
            'reason': reason, 'event': event,
            'finished_at': T0 + datetime.timedelta(seconds=usable or 1),
            'builds': 1, 'issued': issued, 'usable': usable}


class PercentilesTest(base.TestCase):

    def test_nearest_rank(self):
        figures = bench_burst.percentiles([float(n) for n in range(100, 0,
                                                                   -1)])
        self.assertEqual({'p50': 50.0, 'p99': 99.0, 'max': 100.0,
                          'count': 100}, figures)

    def test_one_value_is_every_percentile(self):
        self.assertEqual({'p50': 1.23, 'p99': 1.23, 'max': 1.23,
                          'count': 1}, bench_burst.percentiles([1.234]))

    def test_empty(self):
        self.assertEqual({'p50': None, 'p99': None, 'max': None,
                          'count': 0}, bench_burst.percentiles([]))


class PlanTest(base.TestCase):

    def test_mix(self):
        leases = burst.plan(100)
        starters = [kind for kind, phase in leases if phase == 'start']
        self.assertEqual(100, len(starters))
        self.assertEqual({'host': 4, 'server': 32, 'capacity': 32,
                          'volume': 32},
                         {kind: starters.count(kind) for kind in starters})
        enders = [kind for kind, phase in leases if phase == 'end']
        self.assertEqual({'host': 4, 'server': 8, 'volume': 8},
                         {kind: enders.count(kind) for kind in enders})


class CallKeyTest(base.TestCase):

    def call(self, method, path, body=None, status=200):
        """An engine call through the proxy, as it records it."""
        action = next(iter(body)) if body else None
        return fault_proxy.Call(T0, 'nova', method, path, status, action,
                                body, None, False)

    def test_calls(self):
        aggregates = {'7': 'reservation-id'}
        cases = [
            (self.call('POST', '/v2.1/servers/s1/action',
                       {'os-reservation-start': {}}),
             ('server', 's1', 'os-reservation-start')),
            (self.call('DELETE', '/v2.1/servers/s1'),
             ('server', 's1', 'DELETE')),
            (self.call('POST', '/v2.1/os-aggregates/7/action',
                       {'add_host': {'host': 'compute-1'}}),
             ('host', 'reservation-id', 'add_host')),
            (self.call('POST', '/v2.1/os-server-groups',
                       {'server_group': {'name': 'reservation-r1'}}),
             ('capacity', 'r1', 'server_group')),
            (self.call('POST', '/v3/volumes/v1/action',
                       {'os-reservation-end': {}}),
             ('volume', 'v1', 'os-reservation-end')),
            (self.call('GET', '/v2.1/servers/s1'), None),
        ]
        for call, key in cases:
            self.assertEqual(key, burst.call_key(call, aggregates))

    def test_aggregate_ids_are_those_of_the_last_create(self):
        ended = self.call('DELETE', '/v2.1/os-aggregates/2')
        created = self.call('POST', '/v2.1/os-aggregates',
                            {'aggregate': {'name': 'new'}})._replace(
                                at=T0 + datetime.timedelta(seconds=1),
                                answer={'aggregate': {'id': 2,
                                                      'name': 'new'}})
        joined = self.call('POST', '/v2.1/os-aggregates/2/action',
                           {'add_host': {'host': 'compute-2'}})._replace(
                               at=T0 + datetime.timedelta(seconds=2))
        first = burst.first_answers([joined, created, ended], {'2': 'old'})
        self.assertEqual({'DELETE': T0}, first['host', 'old'])
        self.assertEqual({'add_host': joined.at}, first['host', 'new'])

    def test_a_capacity_start_is_issued_when_its_event_finished(self):
        # Its flavor and group were made when the lease was created.
        lease = burst.Lease('capacity', 'start', 'c1')
        lease.reservation_id = 'r1'
        finished = T0 + datetime.timedelta(seconds=3)
        self.assertEqual(finished, burst._issued(lease, {}, finished))

    def test_a_server_start_is_issued_when_its_build_was_asked_for(self):
        lease = burst.Lease('server', 'start', 's', resource_id='s1')
        asked = T0 + datetime.timedelta(seconds=2)
        first = {('server', 's1'): {'os-reservation-start': asked}}
        self.assertEqual(asked, burst._issued(lease, first, T0))
        self.assertIsNone(burst._issued(lease, {}, T0))

    def test_duplicate_creates(self):
        create = self.call('POST', '/v2.1/os-aggregates',
                           {'aggregate': {'name': 'r1'}})
        refused = create._replace(status=409)
        self.assertEqual(1, burst.duplicate_creates(
            [create, create, refused]))


class CaseLineTest(base.TestCase):

    def test_shape(self):
        records = [record('start', 1.0, 3.0), record('start', 2.0, 5.0),
                   record('start', None, None, status='ERROR',
                          event='ERROR', reason='Nova said no'),
                   record('start', None, None, status='STARTING',
                          event='IN_PROGRESS'),
                   record('end', 0.5, 1.5, kind='volume')]
        line = bench_burst.case_line({'n': 4}, records, T0, {
            'nova_calls': 8, 'plain_boot_s': 2.5, 'double_executions': 0,
            'nova_call_s': bench_burst.percentiles([0.2, 0.4]),
            'nova_calls_by_kind': {'GET servers': [8, 2.4]},
            'doubles_by_kind': {'builds': 0},
            'create_failures': [], 'seconds': 60.0})
        self.assertEqual({'p50': 1.0, 'p99': 2.0, 'max': 2.0, 'count': 2},
                         line['start_engine_s'])
        self.assertEqual(5.0, line['start_usable_s']['max'])
        self.assertEqual(1, line['end_engine_s']['count'])
        self.assertEqual(1, line['leases_error'])
        self.assertEqual(['Nova said no'], line['error_reasons'])
        self.assertEqual(1, line['unfinished'])
        self.assertEqual(4, line['events_finished'])
        self.assertEqual(2.0, line['nova_calls_per_event'])
        self.assertEqual(6.0, line['target_start_engine_p99_s'])
        self.assertEqual({'p50': 0.5 + 1.0, 'max': 1.5, 'count': 1},
                         line['usable_by_kind']['volume_end'])
        self.assertEqual({'p50': 3.0, 'max': 5.0, 'count': 2},
                         line['usable_by_kind']['server_start'])
        self.assertEqual({'n', 'start_engine_s', 'start_usable_s',
                          'end_engine_s', 'end_usable_s', 'plain_boot_s',
                          'usable_by_kind',
                          'events', 'events_finished', 'events_per_s',
                          'nova_calls', 'nova_calls_per_event',
                          'nova_call_s', 'nova_calls_by_kind',
                          'leases_error', 'error_reasons', 'unfinished',
                          'double_executions', 'doubles_by_kind',
                          'create_failures',
                          'seconds', 'target_start_engine_p99_s'},
                         set(line))

    def test_calls_by_kind_sums_each_kind_most_costly_first(self):
        def call(method, path, action=None, took=0.5):
            return fault_proxy.Call(T0, 'nova', method, path, 202, action,
                                    None, None, False, took)
        kinds = bench_burst.calls_by_kind([
            call('GET', '/v2.1/servers/detail'),
            call('GET', '/v2.1/servers/s1'),
            call('POST', '/v2.1/servers/s1/action', 'os-reservation-start',
                 took=2.0),
            call('POST', '/v2.1/flavors', 'flavor', took=None)])
        self.assertEqual({'POST servers os-reservation-start': [1, 2.0],
                          'GET servers': [2, 1.0],
                          'POST flavors flavor': [1, 0.0]}, kinds)
        self.assertEqual('POST servers os-reservation-start',
                         next(iter(kinds)))


class _Backend(http.server.BaseHTTPRequestHandler):
    """A service that answers every request with its own URL in JSON."""

    def do_POST(self):
        """Answer with the service's URL and the path asked for."""
        self.rfile.read(int(self.headers['Content-Length']))
        data = json.dumps({'aggregate': {'id': 1, 'name': 'r1'},
                           'href': 'http://%s:%d%s' % (
                               self.server.server_address + (
                                   self.path,))}).encode()
        self.send_response(200)
        self.send_header('Content-Length', str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def log_message(self, format, *args):
        """Log nothing."""


class FaultProxyTest(base.TestCase):

    def setUp(self):
        super().setUp()
        server = http.server.ThreadingHTTPServer(('127.0.0.1', 0),
                                                 _Backend)
        threading.Thread(target=server.serve_forever, daemon=True).start()
        self.addCleanup(server.server_close)
        self.addCleanup(server.shutdown)
        self.backend = 'http://127.0.0.1:%d' % server.server_address[1]

    def post(self, proxy):
        """POST an aggregate create through ``proxy``; status and body."""
        request = urllib.request.Request(
            proxy.service_url('nova') + '/v2.1/os-aggregates',
            data=b'{"aggregate": {"name": "r1"}}', method='POST')
        try:
            with urllib.request.urlopen(request) as response:
                return response.status, json.loads(response.read())
        except urllib.error.HTTPError as exc:
            return exc.code, None

    def test_urls_rewritten_and_call_recorded(self):
        proxy = fault_proxy.FaultProxy({'nova': self.backend})
        self.addCleanup(proxy.stop)
        status, body = self.post(proxy)
        self.assertEqual(200, status)
        self.assertEqual(proxy.service_url('nova') + '/v2.1/os-aggregates',
                         body['href'])
        (call,) = proxy.calls
        self.assertEqual(('nova', 'POST', '/v2.1/os-aggregates', 200,
                          'aggregate', False),
                         (call.service, call.method, call.path, call.status,
                          call.action, call.injected))

    def test_failures_keep_what_the_service_did(self):
        proxy = fault_proxy.FaultProxy(
            {'nova': self.backend},
            {'nova': fault_proxy.Faults(0, 1.0)}, seed=1)
        self.addCleanup(proxy.stop)
        statuses = [self.post(proxy)[0] for _ in range(8)]
        self.assertEqual([503] * 8, statuses)
        self.assertTrue(all(call.injected for call in proxy.calls))
        # Half fail before the service sees them, half after it answered.
        self.assertEqual({200, 503}, {call.status for call in proxy.calls})
        self.assertTrue(all(call.answer['aggregate']['id'] == 1
                            for call in proxy.calls if call.status == 200))
