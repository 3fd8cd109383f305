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

"""Lease enforcement through the lease API, on a real DB.

The external service is a real HTTP service speaking Blazar's protocol
(:mod:`tests.enforcement_service`); leases book real hosts with the
``physical:host`` plugin. The time quotas' SQL runs on SQLite and
PostgreSQL with limits given by the test (Keystone's part is tested in
``tests/e2e/test_time_quotas.py``).
"""

import datetime
import json
import threading
import uuid

import sqlalchemy as sa
import webob

from db import api as db_api
from db import models
from reservation_ext.api import wsgi
from reservation_ext.clients import compute as compute_client
from reservation_ext import clock as clock_mod
from reservation_ext import context
from reservation_ext.enforcement import enforcer
from reservation_ext.enforcement import time_quotas
from reservation_ext.engine import runner
from reservation_ext import exceptions
from reservation_ext.leases import notifications
from reservation_ext.leases import service as lease_service
from reservation_ext import plugins as plugins_mod
from reservation_ext.plugins import physical_host
from reservation_ext.store import hosts as store_hosts
from tests import base
from tests import enforcement_service
from tests import fixtures
from tests import plugins as test_plugins

NOW = datetime.datetime(2027, 1, 10, 9, 0)
HOUR = datetime.timedelta(hours=1)
DAY = datetime.timedelta(days=1)
MEMBER = 'member,reader'
# The tables a lease writes rows into.
LEASE_TABLES = ('leases', 'reservations', 'events', 'host_allocations',
                'host_reservations', 'volume_reservations')


def date(moment):
    return moment.strftime('%Y-%m-%d %H:%M')


def hosts_lease(name='lease1', start=NOW + HOUR, end=NOW + HOUR + DAY,
                count=2):
    return {'name': name, 'start_date': date(start), 'end_date': date(end),
            'reservations': [{'resource_type': 'physical:host',
                              'min': count, 'max': count,
                              'resource_properties': ''}]}


def journal_lease(name='lease1'):
    return {'name': name, 'start_date': date(NOW + HOUR),
            'end_date': date(NOW + 2 * HOUR),
            'reservations': [{'resource_type': test_plugins.RESOURCE_TYPE}]}


def instance_lease(name, vcpus, start=NOW + HOUR, end=NOW + HOUR + DAY):
    return {'name': name, 'start_date': date(start), 'end_date': date(end),
            'reservations': [{'resource_type': 'virtual:instance',
                              'vcpus': vcpus, 'memory_mb': 1024,
                              'disk_gb': 1,
                              'server_id': str(uuid.uuid4())}]}


def volume_lease(name, size_gb, start=NOW + HOUR, end=NOW + HOUR + DAY):
    return {'name': name, 'start_date': date(start), 'end_date': date(end),
            'reservations': [{'resource_type': 'virtual:volume',
                              'size_gb': size_gb,
                              'volume_id': str(uuid.uuid4())}]}


class GivenLimits:
    """Unified limits as the test gives them: ``{resource: limit}``."""

    def __init__(self, limits):
        self.limits = limits

    def for_project(self, project_id):
        return dict(self.limits)


class _EnforcementAPITests:
    """The lease API with an enforcement, over real plugins and hosts."""

    def setUp(self):
        super().setUp()
        self.useFixture(fixtures.TestPlugins())
        self.conf = self.useFixture(fixtures.ReservationConf({
            ('reservation', 'volume_reservable_gb'): 1000})).conf
        self.clock = clock_mod.ManualClock(NOW)
        self.plugins = plugins_mod.load_plugins(self.conf, self.clock)
        with db_api.writer(self.ctx, self.clock) as session:
            for i in range(6):
                store_hosts.add_host(session, {
                    'hypervisor_hostname': 'host%d' % i,
                    'service_name': 'host%d' % i, 'vcpus': 8,
                    'memory_mb': 8192, 'local_gb': 100})

    def build(self, enforcement):
        self.enforcement = enforcement
        self.app = wsgi.build_app(
            self.conf, self.clock, self.plugins,
            notifications.get_notifier(self.conf),
            compute_client.NovaClient(self.conf), enforcement)

    def request(self, method, path, body=None, project='p1'):
        req = webob.Request.blank(path, method=method, headers={
            'X-User-Id': 'u-' + project, 'X-Project-Id': project,
            'X-Roles': MEMBER})
        if body is not None:
            req.body = json.dumps(body).encode()
            req.content_type = 'application/json'
        return req.get_response(self.app)

    def create(self, body, expected=201, project='p1'):
        response = self.request('POST', '/v1/leases', body, project=project)
        self.assertEqual(expected, response.status_int, response.text)
        return response.json.get('lease', response.json)

    def update(self, lease_id, body, expected=200):
        response = self.request('PUT', '/v1/leases/' + lease_id, body)
        self.assertEqual(expected, response.status_int, response.text)
        return response.json.get('lease', response.json)

    def show(self, lease_id):
        return self.request('GET', '/v1/leases/' + lease_id).json['lease']

    def rows(self):
        """Every row a lease may write, to show that nothing changed."""
        tables = models.Base.metadata.tables
        with self.engine.connect() as conn:
            return {name: sorted(tuple(str(value) for value in row)
                                 for row in conn.execute(
                                     sa.select(tables[name])))
                    for name in LEASE_TABLES}

    def assertRefused(self, code, response_body, message):
        self.assertEqual(
            {'error_code': code, 'error_message': message,
             'error_name': {403: 'EnforcementRefused',
                            503: 'EnforcementUnavailable'}[code]},
            response_body)


class _ExternalServiceTests(_EnforcementAPITests):

    def setUp(self):
        super().setUp()
        self.service = self.useFixture(
            enforcement_service.EnforcementService())
        self.conf.set_override('enabled_filters', ['ExternalServiceFilter'],
                               group='enforcement')
        self.conf.set_override('external_service_base_endpoint',
                               self.service.url, group='enforcement')
        self.conf.set_override('auth_url', 'http://keystone.test/v3',
                               group='enforcement')
        self.conf.set_override('region_name', 'RegionOne',
                               group='enforcement')
        self.build(enforcer.from_conf(self.conf, self.clock))

    def test_an_allowed_lease_is_created_after_the_service_saw_it(self):
        lease = self.create(hosts_lease())
        [call] = self.service.calls
        self.assertEqual('/v1/check-create', call['path'])
        self.assertEqual({'user_id': 'u-p1', 'project_id': 'p1',
                          'auth_url': 'http://keystone.test/v3',
                          'region_name': 'RegionOne'},
                         call['body']['context'])
        sent = call['body']['lease']
        self.assertEqual(
            ('lease1', '2027-01-10T10:00:00', '2027-01-11T10:00:00', 'p1'),
            (sent['name'], sent['start_date'], sent['end_date'],
             sent['project_id']))
        [reservation] = sent['reservations']
        self.assertEqual(('physical:host', 2, 2, []),
                         (reservation['resource_type'], reservation['min'],
                          reservation['max'], reservation['allocations']))
        self.assertEqual('PENDING', lease['status'])

    def test_a_refused_create_is_403_with_the_message_and_makes_nothing(self):
        self.service.refuse_names['lease1'] = 'Your allocation has expired.'
        before = self.rows()
        refused = self.create(hosts_lease(), expected=403)
        self.assertRefused(403, refused, 'Your allocation has expired.')
        self.assertEqual(before, self.rows())
        self.assertEqual([], self.request('GET', '/v1/leases').json[
            'leases'])

    def test_the_update_check_gets_both_leases_with_their_hosts(self):
        lease = self.create(hosts_lease())
        self.update(lease['id'], {'end_date': date(NOW + 2 * DAY)})
        call = self.service.calls[-1]
        self.assertEqual('/v1/check-update', call['path'])
        current, new = (call['body'][key]
                        for key in ('current_lease', 'lease'))
        self.assertEqual(('2027-01-11T10:00:00', '2027-01-12T09:00:00'),
                         (current['end_date'], new['end_date']))
        self.assertEqual(lease['id'], current['id'])
        hosts = current['reservations'][0]['allocations']
        self.assertEqual(2, len(hosts))
        self.assertTrue(all(host['hypervisor_hostname'].startswith('host')
                            for host in hosts))

    def test_a_refused_update_leaves_the_lease_exactly_as_it_was(self):
        lease = self.create(hosts_lease())
        before, rows = self.show(lease['id']), self.rows()
        self.service.refuse_names['lease1'] = 'No extensions this week.'
        refused = self.update(lease['id'],
                              {'end_date': date(NOW + 3 * DAY)},
                              expected=403)
        self.assertRefused(403, refused, 'No extensions this week.')
        self.assertEqual(before, self.show(lease['id']))
        self.assertEqual(rows, self.rows())

    def test_a_rename_alone_is_not_checked_as_in_blazar(self):
        lease = self.create(hosts_lease())
        self.service.refuse_names['lease1'] = 'No changes.'
        renamed = self.update(lease['id'], {'name': 'renamed'})
        self.assertEqual('renamed', renamed['name'])
        self.assertEqual(['/v1/check-create'], self.service.paths())

    def test_a_service_that_does_not_answer_makes_a_create_503(self):
        self.service.raw_answers['lease1'] = (500, b'')
        self.conf.set_override('external_service_base_endpoint',
                               'http://127.0.0.1:9/', group='enforcement')
        self.build(enforcer.from_conf(self.conf, self.clock))
        before = self.rows()
        refused = self.create(hosts_lease(), expected=503)
        self.assertEqual(503, refused['error_code'])
        self.assertEqual(before, self.rows())

    def test_deleting_a_lease_before_its_end_tells_the_service(self):
        lease = self.create(journal_lease())
        response = self.request('DELETE', '/v1/leases/' + lease['id'])
        self.assertEqual(204, response.status_int, response.text)
        call = self.service.calls[-1]
        self.assertEqual('/v1/on-end', call['path'])
        self.assertEqual(lease['id'], call['body']['lease']['id'])

    def test_a_failing_on_end_does_not_stop_the_delete(self):
        lease = self.create(journal_lease())
        self.service.raw_answers['lease1'] = (500, b'')
        response = self.request('DELETE', '/v1/leases/' + lease['id'])
        self.assertEqual(204, response.status_int, response.text)
        self.assertEqual(404, self.request(
            'GET', '/v1/leases/' + lease['id']).status_int)


class ExternalServiceSQLiteTest(_ExternalServiceTests, base.DBTestCase):
    pass


class EngineOnEndTest(_EnforcementAPITests, base.DBTestCase):
    """The engine tells the external service when a lease ends."""

    def test_the_end_of_a_lease_is_posted_to_on_end_once(self):
        service = self.useFixture(enforcement_service.EnforcementService())
        self.conf.set_override('enabled_filters', ['ExternalServiceFilter'],
                               group='enforcement')
        self.conf.set_override('external_service_on_end_endpoint',
                               service.url + 'on-end', group='enforcement')
        self.build(enforcer.from_conf(self.conf, self.clock))
        engine = runner.Engine(
            self.conf, self.clock, self.plugins,
            notifications.get_notifier(self.conf),
            enforcement=self.enforcement)
        lease = self.create(journal_lease())
        self.clock.set(NOW + 3 * HOUR)
        while engine.run_once():
            pass
        self.assertEqual('TERMINATED', self.show(lease['id'])['status'])
        self.assertEqual(['/v1/on-end'], service.paths())
        ended = service.calls[0]['body']
        self.assertEqual(
            (lease['id'], 'p1', 'u-p1'),
            (ended['lease']['id'], ended['context']['project_id'],
             ended['context']['user_id']))


class _TimeQuotaTests(_EnforcementAPITests):
    """Time quotas with given limits: the usage SQL and the refusals."""

    def set_limits(self, **limits):
        self.build(enforcer.Enforcement(self.conf.enforcement, [],
                   time_quotas.TimeQuotas(self.conf.enforcement,
                                          GivenLimits(limits), self.clock)))

    def test_a_lease_within_the_limit_is_granted(self):
        self.set_limits(host_hours=48)
        self.create(hosts_lease(count=2))

    def test_a_lease_over_the_limit_is_403_naming_it_and_makes_nothing(self):
        self.set_limits(host_hours=60)
        self.create(hosts_lease('first', count=1))
        before = self.rows()
        refused = self.create(hosts_lease('second', count=2), expected=403)
        self.assertEqual({
            'error_code': 403, 'error_name': 'QuotaExceeded',
            'error_message': 'Quota exceeded for host_hours: the project\'s '
                             'leases would reserve 72 host_hours in the '
                             'quota window (this lease 48), over the limit '
                             'of 60.'}, refused)
        self.assertEqual(before, self.rows())

    def test_other_projects_leases_do_not_count(self):
        self.set_limits(host_hours=48)
        self.create(hosts_lease('theirs', count=2), project='p2')
        self.create(hosts_lease('mine', count=2))

    def test_a_limit_of_zero_refuses_any_use_of_the_resource(self):
        self.set_limits(host_hours=0, gb_hours=1000)
        self.create(hosts_lease(count=1), expected=403)
        self.create(volume_lease('volume', 10))

    def test_gb_hours_count_volume_reservations(self):
        self.set_limits(gb_hours=500)
        self.create(volume_lease('ten', 10))
        refused = self.create(volume_lease('twenty', 20), expected=403)
        self.assertIn('reserve 720 gb_hours in the quota window (this '
                      'lease 480), over the limit of 500',
                      refused['error_message'])

    def test_vcpu_hours_count_the_vcpus_booked_for_instances(self):
        self.set_limits(vcpu_hours=100, host_hours=0)
        self.create(instance_lease('two', 2))
        refused = self.create(instance_lease('three', 3), expected=403)
        self.assertIn('reserve 120 vcpu_hours in the quota window (this '
                      'lease 72), over the limit of 100',
                      refused['error_message'])

    def test_hours_before_the_window_do_not_count(self):
        self.set_limits(host_hours=30)
        # 24 hours from 2027-01-10 10:00, of which the window (30 days
        # back from 2027-02-09 22:00) holds the last 12.
        self.create(hosts_lease('old', count=1))
        self.clock.set(NOW + 30 * DAY + 13 * HOUR)
        self.create(hosts_lease('new', start=self.clock.now() + HOUR,
                                end=self.clock.now() + 19 * HOUR, count=1))
        refused = self.create(
            hosts_lease('more', start=self.clock.now() + HOUR,
                        end=self.clock.now() + 2 * HOUR, count=1),
            expected=403)
        self.assertIn('reserve 31 host_hours', refused['error_message'])

    def test_a_lease_over_a_lowered_limit_may_still_be_shortened(self):
        self.set_limits(host_hours=100)
        lease = self.create(hosts_lease(count=2))
        self.set_limits(host_hours=10)
        self.update(lease['id'], {'reduce_by': '2h'})
        refused = self.update(lease['id'], {'prolong_for': '1h'},
                              expected=403)
        self.assertIn('reserve 46 host_hours', refused['error_message'])

    def test_an_extension_over_the_limit_leaves_the_lease_as_it_was(self):
        self.set_limits(host_hours=50)
        lease = self.create(hosts_lease(count=2))
        before, rows = self.show(lease['id']), self.rows()
        refused = self.update(lease['id'], {'prolong_for': '2h'},
                              expected=403)
        self.assertIn('reserve 52 host_hours', refused['error_message'])
        self.assertEqual(before, self.show(lease['id']))
        self.assertEqual(rows, self.rows())
        self.update(lease['id'], {'prolong_for': '1h'})


class TimeQuotaSQLiteTest(_TimeQuotaTests, base.DBTestCase):
    pass


class TimeQuotaPostgreSQLTest(_TimeQuotaTests, base.PostgreSQLTestCase):
    pass


class TimeQuotaMySQLTest(_TimeQuotaTests, base.MySQLTestCase):
    pass


class MeetingHostPlugin(physical_host.PhysicalHostPlugin):
    """Hosts booked as usual; then the creates try to meet at ``barrier``.

    Two creates that had both booked their hosts when they went on to the
    quota check could both slip under a limit. The writers' lock of
    db.api.writer lets only one writer in at a time, so the first waits
    for the second in vain for a moment and carries on; the second, in
    once the first committed, finds the barrier broken and carries on
    too. Were writers ever let in together again, they would meet here
    and the quota check would have to hold alone.
    """

    barrier = None
    # How long the first create waits for the other inside its
    # transaction.
    MEET_TIMEOUT = 2

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        self._met = threading.local()

    def reserve(self, session, ctx, lease, reservation_id, values,
                hold=None):
        found = super().reserve(session, ctx, lease, reservation_id, values,
                                hold)
        if not getattr(self._met, 'done', False):
            self._met.done = True
            try:
                self.barrier.wait(timeout=self.MEET_TIMEOUT)
            except threading.BrokenBarrierError:
                pass
        return found


class _ConcurrentQuotaTests(_EnforcementAPITests):
    """Two creates at once cannot both slip under a limit."""

    def test_of_two_concurrent_creates_over_the_limit_together_one_wins(self):
        plugin = MeetingHostPlugin(self.conf, self.clock)
        plugin.barrier = threading.Barrier(2)
        quotas = time_quotas.TimeQuotas(
            self.conf.enforcement, GivenLimits({'host_hours': 30}),
            self.clock)
        service = lease_service.LeaseService(
            self.conf, self.clock, {'physical:host': plugin},
            notifications.get_notifier(self.conf),
            enforcer.Enforcement(self.conf.enforcement, [], quotas))
        outcomes = []

        def create(name, host):
            ctx = context.RequestContext(project_id='p1', user_id='u1',
                                         roles=MEMBER.split(','))
            body = hosts_lease(name, count=1)
            body['reservations'][0]['hosts'] = [host]
            try:
                service.create(ctx, body)
                outcomes.append('created')
            except exceptions.QuotaExceeded:
                outcomes.append('refused')

        base.run_together(create, [('a', 'host0'), ('b', 'host1')])
        self.assertEqual(['created', 'refused'], sorted(outcomes))


class ConcurrentQuotaPostgreSQLTest(_ConcurrentQuotaTests,
                                    base.PostgreSQLTestCase):
    pass


class ConcurrentQuotaMySQLTest(_ConcurrentQuotaTests, base.MySQLTestCase):
    pass
