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

"""A stack lease counts against Nova's and Cinder's quotas in its window.

The lease API over the real ``heat:stack`` plugin and its real Heat and
Keystone clients, whose requests go to a Heat and a Keystone answered
here (through the clients' ``transport``): Heat previews the template it
is sent (its servers and volumes), Keystone makes and removes trusts.
The caller's token is keystonemiddleware's, with a catalog. Nova's and
Cinder's limits and counts are given by the test, as in
:mod:`tests.functional.test_window_quotas`; the window's sweep, the
stacks' totals and the leased ids run on SQLite, PostgreSQL and MariaDB.
"""

import json
import types
import uuid

import fixtures
from keystoneauth1 import access
from keystoneauth1 import fixture as ks_fixture
import requests
import requests_mock
import sqlalchemy as sa
import webob
import yaml

from db import api as db_api
from db import models
from reservation_ext.clients import plugin_clients
from reservation_ext import conf as conf_mod
from reservation_ext.enforcement import enforcer
from reservation_ext.enforcement import time_quotas
from reservation_ext.enforcement import window_quotas
from reservation_ext.planning import seats
from reservation_ext import plugins as plugins_mod
from reservation_ext.store import stacks as store_stacks
from tests import base
from tests.functional import test_enforcement as enforcement_tests
from tests.functional import test_window_quotas as window_tests
from tests import nova_auth

NOW = enforcement_tests.NOW
HOUR = window_tests.HOUR
date = enforcement_tests.date
HEAT_URL = 'http://heat.test/v1/p1'
KEYSTONE_URL = 'http://keystone.test/v3'
TRUSTS_URL = KEYSTONE_URL + '/OS-TRUST/trusts'
# m1.small: 2 vCPUs, 2048 MB, 20 GB; four fit on a host of the tests.
FLAVORS = {'m1.small': {'id': 'small-id', 'vcpus': 2, 'ram': 2048,
                        'disk': 20}}
STACK_TABLES = enforcement_tests.LEASE_TABLES + (
    'stack_reservations', 'stack_resources')


class Nova(window_tests.Flavors):
    """Nova's flavors: a template's found, a capacity lease's made."""

    def find_flavor(self, name):
        """Return Nova's view of the flavor ``name``, or None."""
        return FLAVORS.get(name)


def template(servers=0, volumes=()):
    """A HOT template of ``servers`` m1.small servers and volumes (GB)."""
    resources = {'server%d' % index: {
        'type': 'OS::Nova::Server',
        'properties': {'flavor': 'm1.small', 'image': 'cirros'}}
        for index in range(servers)}
    resources.update({'volume%d' % index: {
        'type': 'OS::Cinder::Volume', 'properties': {'size': size}}
        for index, size in enumerate(volumes)})
    return yaml.safe_dump({'heat_template_version': '2021-04-16',
                           'resources': resources})


def stack_lease(name, servers=0, volumes=(), start=NOW + HOUR, hours=2):
    """A stack lease's create body: :func:`template`'s stack, 2 h long."""
    return {'name': name, 'start_date': date(start),
            'end_date': date(start + hours * HOUR),
            'reservations': [{'resource_type': 'heat:stack',
                              'template': template(servers, volumes)}]}


def preview(request, context):
    """Heat's preview of the template sent: its resources, unchanged."""
    body = request.json()
    resources = yaml.safe_load(body['template'])['resources']
    return {'stack': {'stack_name': body['stack_name'], 'resources': [
        {'resource_name': name, 'resource_type': resource['type'],
         'properties': resource['properties']}
        for name, resource in sorted(resources.items())]}}


class Trusts:
    """Keystone's trusts: those made and not removed are ``live``."""

    def __init__(self):
        self.live = set()
        self.made = 0

    def create(self, request, context):
        """``POST /OS-TRUST/trusts``: a new trust."""
        self.made += 1
        trust_id = uuid.uuid4().hex
        self.live.add(trust_id)
        context.status_code = 201
        return {'trust': dict(request.json()['trust'], id=trust_id)}

    def delete(self, request, context):
        """``DELETE /OS-TRUST/trusts/{id}``."""
        self.live.discard(request.path.rsplit('/', 1)[-1])
        context.status_code = 204
        return ''


def user_token(project):
    """What keystonemiddleware gives the lease API of a caller's token."""
    token = ks_fixture.V3Token(user_id='u-' + project, project_id=project)
    for service_type, url in (('orchestration', HEAT_URL),
                              ('identity', KEYSTONE_URL)):
        token.add_service(service_type).add_standard_endpoints(public=url)
    return types.SimpleNamespace(user=access.create(body=token,
                                                    auth_token='token'))


class _StackWindowQuotaTests(enforcement_tests._EnforcementAPITests):
    """A stack lease's servers and volumes, swept over its window."""

    def setUp(self):
        super().setUp()
        self.useFixture(fixtures.MonkeyPatch(
            'tests.nova_auth.ENDPOINTS', {'identity': KEYSTONE_URL}))
        for option, value in (('auth_type', nova_auth.NAME),
                              ('connect_retries', 0)):
            self.conf.set_override(option, value,
                                   group=conf_mod.CLIENT_GROUP)
        self.keystone = Trusts()
        services = requests_mock.Adapter()
        services.register_uri('POST', HEAT_URL + '/stacks/preview',
                              json=preview)
        services.register_uri('POST', TRUSTS_URL, json=self.keystone.create)
        services.register_uri('DELETE', requests_mock.ANY,
                              text=self.keystone.delete)
        transport = requests.Session()
        transport.mount('http://', services)
        self.plugins = plugins_mod.load_plugins(
            self.conf, self.clock, plugin_clients.PluginClients(
                self.conf, nova=Nova(), transport=transport))

    def request(self, method, path, body=None, project='p1'):
        """Call the lease API with the caller's token, as Keystone gave it."""
        req = webob.Request.blank(path, method=method, headers={
            'X-User-Id': 'u-' + project, 'X-Project-Id': project,
            'X-Roles': enforcement_tests.MEMBER})
        req.environ['keystone.token_auth'] = user_token(project)
        if body is not None:
            req.body = json.dumps(body).encode()
            req.content_type = 'application/json'
        return req.get_response(self.app)

    def set_quotas(self, nova=None, cinder=None):
        """Check the leases against the limits and counts given.

        :param nova: ``(limits, usage, counted)`` of Nova's quotas
            (unlimited if None); ``cinder`` Cinder's.
        """
        self.nova = window_tests.GivenNovaQuotas(*(nova or ({},)))
        self.cinder = window_tests.GivenNovaQuotas(*(cinder or ({},)))
        self.build(enforcer.Enforcement(
            self.conf.enforcement, [], None,
            [window_quotas.WindowQuotas(window_quotas.COMPUTE, self.nova,
                                        self.clock),
             window_quotas.WindowQuotas(window_quotas.VOLUME, self.cinder,
                                        self.clock)]))

    def rows(self):
        """Every row a stack lease may write, to show that nothing changed."""
        metadata = models.Base.metadata.tables
        with self.engine.connect() as conn:
            return {name: sorted(tuple(str(value) for value in row)
                                 for row in conn.execute(
                                     sa.select(metadata[name])))
                    for name in STACK_TABLES}

    def refused(self, body, message, name='ComputeQuotaExceeded'):
        """Create a lease that must be refused; nothing is left of it."""
        before, trusts, made = self.rows(), set(self.keystone.live), \
            self.keystone.made
        refusal = self.create(body, expected=403)
        self.assertEqual({'error_code': 403, 'error_name': name,
                          'error_message': message}, refusal)
        self.assertEqual(before, self.rows())
        # The create made a trust; the plugin's undo_create removed it.
        self.assertEqual((made + 1, trusts),
                         (self.keystone.made, self.keystone.live))
        return refusal

    def reservation_of(self, lease):
        """The id of a one-reservation lease's reservation."""
        [reservation] = lease['reservations']
        return reservation['id']

    def test_a_stack_over_the_instances_quota_in_its_window_is_novas_403(
            self):
        self.set_quotas(nova=({'instances': 4, 'cores': -1, 'ram': -1},))
        self.create(window_tests.capacity_lease('capacity', 2))
        self.refused(stack_lease('stack', servers=3),
                     'Quota exceeded for instances: Requested 3, but '
                     'already used 2 of 4 instances')

    def test_the_same_stack_in_a_window_clear_of_other_leases_is_granted(
            self):
        self.set_quotas(nova=({'instances': 4, 'cores': -1, 'ram': -1},))
        self.create(window_tests.capacity_lease('capacity', 2))
        # The capacity lease ends when the stack's starts.
        lease = self.create(stack_lease('stack', servers=3,
                                        start=NOW + 3 * HOUR))
        self.assertEqual('stack', lease['name'])
        self.assertEqual(1, len(self.keystone.live))

    def test_a_stack_over_cores_and_ram_is_refused_naming_both(self):
        self.set_quotas(nova=({'instances': 10, 'cores': 4, 'ram': 4096},))
        self.refused(stack_lease('stack', servers=3),
                     'Quota exceeded for cores, ram: Requested 6, 6144, '
                     'but already used 0, 0 of 4, 4096 cores, ram')

    def test_a_stacks_servers_count_against_a_later_capacity_lease(self):
        self.set_quotas(nova=({'instances': 4, 'cores': -1, 'ram': -1},))
        self.create(stack_lease('stack', servers=3))
        refusal = self.create(window_tests.capacity_lease('capacity', 2),
                              expected=403)
        self.assertEqual('Quota exceeded for instances: Requested 2, but '
                         'already used 3 of 4 instances',
                         refusal['error_message'])

    def test_a_stack_over_cinders_gigabytes_quota_is_refused(self):
        self.set_quotas(cinder=({'gigabytes': 10, 'volumes': -1},))
        self.create(enforcement_tests.volume_lease('volume', 6))
        self.refused(stack_lease('stack', volumes=(3, 2)),
                     'Requested volume or snapshot exceeds allowed '
                     'gigabytes quota. Requested 5G, quota is 10G and 6G '
                     'has been consumed.', name='VolumeQuotaExceeded')

    def test_a_stack_over_cinders_volumes_quota_is_refused(self):
        self.set_quotas(cinder=({'gigabytes': -1, 'volumes': 2},))
        self.create(enforcement_tests.volume_lease('volume', 1))
        self.refused(stack_lease('stack', volumes=(1, 1)),
                     "Maximum number of volumes allowed (2) exceeded for "
                     "quota 'volumes'.", name='VolumeQuotaExceeded')

    def test_a_stack_update_that_widens_its_window_over_a_quota_is_refused(
            self):
        self.set_quotas(nova=({'instances': 4, 'cores': -1, 'ram': -1},),
                        cinder=({'gigabytes': 10, 'volumes': -1},))
        lease = self.create(stack_lease('stack', servers=3, volumes=(5,)))
        self.create(window_tests.capacity_lease(
            'capacity', 2, start=NOW + 3 * HOUR))
        before = self.rows()
        refusal = self.update(lease['id'], {'prolong_for': '1h'},
                              expected=403)
        self.assertEqual('Quota exceeded for instances: Requested 3, but '
                         'already used 2 of 4 instances',
                         refusal['error_message'])
        self.assertEqual(before, self.rows())
        # Over Cinder's quota outside leases, a stack may still shrink.
        self.set_quotas(nova=({'instances': 4, 'cores': -1, 'ram': -1},),
                        cinder=({'gigabytes': 1, 'volumes': -1},))
        self.update(lease['id'], {'reduce_by': '1h'})
        refusal = self.update(lease['id'], {'prolong_for': '30m'},
                              expected=403)
        self.assertEqual('Requested volume or snapshot exceeds allowed '
                         'gigabytes quota. Requested 5G, quota is 1G and 0G '
                         'has been consumed.', refusal['error_message'])

    def test_a_started_stacks_servers_and_volumes_are_not_counted_twice(
            self):
        # Nova counts the stack's 2 servers, Cinder its volume: they are
        # its leased ones, counted in its window only.
        self.set_quotas(
            nova=({'instances': 2, 'cores': -1, 'ram': -1},
                  {'instances': 2, 'cores': 4, 'ram': 4096},
                  {'instances': 2, 'cores': 4, 'ram': 4096}),
            cinder=({'gigabytes': 5, 'volumes': -1},
                    {'gigabytes': 5, 'volumes': 1},
                    {'gigabytes': 5, 'volumes': 1}))
        stack = self.create(stack_lease('stack', servers=2, volumes=(5,)))
        rid = self.reservation_of(stack)
        with db_api.writer(self.ctx, self.clock) as session:
            # nova-api seated one server before Heat's create completed;
            # the engine recorded the stack's servers and volume then.
            token, [seat] = seats.claim(session, rid, 1, (2, 2048, 20))
            seats.bind(session, token, seat, 'server-a')
            store_stacks.record_resources(session, rid, [
                ('OS::Nova::Server', 'server-a'),
                ('OS::Nova::Server', 'server-b'),
                ('OS::Cinder::Volume', 'volume-a'),
                ('OS::Neutron::FloatingIP', 'fip-a')])
        self.create(stack_lease('after', servers=2, volumes=(5,),
                                start=NOW + 3 * HOUR))
        self.assertEqual(['server-a', 'server-b'], self.nova.asked[-1])
        self.assertEqual(['volume-a'], self.cinder.asked[-1])
        refusal = self.create(stack_lease('overlapping', servers=1,
                                          start=NOW + 2 * HOUR),
                              expected=403)
        self.assertEqual('Quota exceeded for instances: Requested 1, but '
                         'already used 2 of 2 instances',
                         refusal['error_message'])

    def test_a_stacks_resources_leave_the_leased_ids_when_its_lease_ends(
            self):
        self.set_quotas(nova=({'instances': 10, 'cores': -1, 'ram': -1},))
        stack = self.create(stack_lease('stack', servers=1, hours=1))
        with db_api.writer(self.ctx, self.clock) as session:
            store_stacks.record_resources(session, self.reservation_of(
                stack), [('OS::Nova::Server', 'server-a')])
        self.create(stack_lease('next', servers=1, start=NOW + 5 * HOUR))
        self.assertEqual(['server-a'], self.nova.asked[-1])
        self.clock.advance(hours=3)
        self.create(stack_lease('later', servers=1, start=NOW + 7 * HOUR))
        self.assertEqual([], self.nova.asked[-1])

    def test_a_stacks_volumes_count_gb_hours_and_its_slices_vcpu_hours(
            self):
        self.build(enforcer.Enforcement(
            self.conf.enforcement, [], time_quotas.TimeQuotas(
                self.conf.enforcement, enforcement_tests.GivenLimits(
                    {'gb_hours': 25, 'vcpu_hours': 10}), self.clock)))
        # 2 hours of 10 GB, and of 2 servers of 2 vCPUs: 8 vCPU-hours.
        self.create(stack_lease('stack', servers=2, volumes=(10,)))
        refusal = self.create(stack_lease('more', volumes=(3,)),
                              expected=403)
        self.assertEqual(
            "Quota exceeded for gb_hours: the project's leases would "
            "reserve 26 gb_hours in the quota window (this lease 6), over "
            "the limit of 25.", refusal['error_message'])
        refusal = self.create(stack_lease('server', servers=1),
                              expected=403)
        self.assertIn('for vcpu_hours', refusal['error_message'])


class StackWindowQuotaSQLiteTest(_StackWindowQuotaTests, base.DBTestCase):
    """On SQLite."""


class StackWindowQuotaPostgreSQLTest(_StackWindowQuotaTests,
                                     base.PostgreSQLTestCase):
    """On PostgreSQL."""


class StackWindowQuotaMySQLTest(_StackWindowQuotaTests, base.MySQLTestCase):
    """On MariaDB."""
