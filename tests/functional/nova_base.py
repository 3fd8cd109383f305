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

"""A base for tests that run inside Nova's own functional harness.

Real Nova: API (with the project's ``etc/nova/api-paste.ini``, so the
lease API is mounted at ``/reservation``), conductor, scheduler with
``ReservationFilter``, in-process Placement, and fake computes of
different sizes (``nova.virt.fake``). Nova's harness stubs only
keystonemiddleware; the service user of ``[reservation_client]`` sends
the harness's headers (:mod:`tests.nova_auth`).
"""

import datetime
import logging
import os
import warnings

import fixtures as fixtures_lib
from nova.tests.functional.api import client
from nova.tests.functional import integrated_helpers
from oslo_utils.fixture import uuidsentinel
import requests
from sqlalchemy import exc as sqla_exc
from wsgi_intercept import interceptor

from db import api as db_api
from reservation_ext import clock as clock_mod
from reservation_ext import conf as conf_mod
from reservation_ext import context as context_mod
from reservation_ext.engine import runner
from reservation_ext.leases import notifications
from reservation_ext import plugins as plugins_mod
from reservation_ext import policy
from reservation_ext.sandbox import image_api
from reservation_ext.store import leases as store_leases
from tests import base as test_base
from tests import fixtures
from tests import nova_auth

# nova.test sets up oslo.log when it is imported: a handler on the root
# logger that writes to the process's stdout of that moment, which no
# test's output capture sees. Tests log through their own fixtures.
logging.getLogger().handlers.clear()

TOP = os.path.dirname(os.path.dirname(os.path.dirname(
    os.path.abspath(__file__))))
API_PASTE = os.path.join(TOP, 'etc', 'nova', 'api-paste.ini')
# OSAPIFixture serves Nova at this wsgi-intercept address.
NOVA_URL = 'http://%s:80' % uuidsentinel.osapi_host
IMAGE_URL = 'http://%s:80' % uuidsentinel.image_host
# Seconds an engine run waits for Nova at most: a hang guard.
ENGINE_WAIT = 120
# The fake compute hosts and their drivers (vcpus, memory_mb, local_gb):
# SmallFakeDriver 2/8192/1028, MediumFakeDriver 10/8192/1028,
# FakeDriver 1000/800000/600000.
COMPUTES = (('compute-1', 'fake.SmallFakeDriver'),
            ('compute-2', 'fake.MediumFakeDriver'),
            ('compute-3', 'fake.MediumFakeDriver'),
            ('compute-4', 'fake.FakeDriver'))
FILTERS = ['ComputeFilter', 'ComputeCapabilitiesFilter',
           'ImagePropertiesFilter', 'ServerGroupAntiAffinityFilter',
           'ServerGroupAffinityFilter', 'ReservationFilter']
OWNER = 'owner-project'
OTHER = 'other-project'
# Where a server's view shows its lease (its metadata's key).
LEASE_ID = 'reservation:lease_id'


def lease_date(moment):
    """``moment`` as a lease request writes its dates."""
    return moment.strftime('%Y-%m-%d %H:%M')


_FROM_ENVIRON = context_mod.RequestContext.from_environ.__func__


def _from_environ_with_user_auth(cls, environ, **kwargs):
    """The lease API's context, with the caller's auth plugin.

    Nova's harness stubs keystonemiddleware out, and with it the user's
    auth plugin it puts in the environ: the caller's headers stand in
    for it, as the harness's Nova reads them.
    """
    if 'HTTP_X_PROJECT_ID' in environ:
        kwargs.setdefault('user_auth_plugin', nova_auth.HeaderAuth(
            environ.get('HTTP_X_USER_ID'), environ['HTTP_X_PROJECT_ID'],
            environ.get('HTTP_X_ROLES')))
    return _FROM_ENVIRON(cls, environ, **kwargs)


class NovaTestCase(integrated_helpers.ProviderUsageBaseTestCase):
    """Nova with the reservation pieces enabled, and 4 compute hosts."""

    compute_driver = 'fake.SmallFakeDriver'

    def setUp(self):
        test_base.bound_details(self)
        self.flags(api_paste_config=API_PASTE, group='wsgi')
        self.flags(available_filters=[
            'nova.scheduler.filters.all_filters',
            'nova_filters.reservation_filter.ReservationFilter'],
            enabled_filters=FILTERS, group='filter_scheduler')
        self.flags(auth_type=nova_auth.NAME, group=conf_mod.CLIENT_GROUP)
        self.useFixture(fixtures_lib.MonkeyPatch(
            'tests.nova_auth.ENDPOINTS',
            {'compute': NOVA_URL + '/v2.1', 'image': IMAGE_URL}))
        self.flags(connect_retries=0, group=conf_mod.CLIENT_GROUP)
        # Before Nova's setUp, which loads the API and so the lease API.
        self.useFixture(fixtures.TestPlugins())
        self.useFixture(fixtures_lib.MonkeyPatch(
            'reservation_ext.context.RequestContext.from_environ',
            classmethod(_from_environ_with_user_auth)))
        self.database = self.useFixture(fixtures.Database())
        super().setUp()
        # Nova's harness makes SQLAlchemy deprecations in nova's own code
        # errors; SQLAlchemy 2.1 deprecates the noload() that nova uses
        # when it saves an instance in ERROR.
        warnings.filterwarnings('ignore', message='.*noload',
                                category=sqla_exc.SADeprecationWarning)
        policy.reset()
        self.addCleanup(policy.reset)
        # The image API of the sandbox over the harness's fake Glance, for
        # the engine's image calls.
        intercept = interceptor.RequestsInterceptor(
            lambda: image_api.ImageAPI(self.glance), url=IMAGE_URL)
        intercept.install_intercept()
        self.addCleanup(intercept.uninstall_intercept)
        for host, driver in COMPUTES:
            self.flags(compute_driver=driver)
            self._start_compute(host)

    def lease_api(self, method, path, body=None, project=OWNER,
                  roles='member,reader', expect=None):
        """Call the lease API as a user of ``project``; return the JSON.

        ``expect``: the status code the call must answer (2xx if None).
        """
        response = requests.request(
            method, NOVA_URL + '/reservation/v1' + path, json=body,
            headers={'X-User-Id': 'user-' + project,
                     'X-Project-Id': project, 'X-Roles': roles,
                     'X-Auth-Token': 'token'})
        if expect is None:
            self.assertLess(response.status_code, 300, response.text)
        else:
            self.assertEqual(expect, response.status_code, response.text)
        return response.json() if response.content else None

    def lease_one_host(self, name, host, start, end):
        """Lease ``host`` from ``start`` to ``end`` (dates or 'now')."""
        return self.lease_api('POST', '/leases', {
            'name': name, 'start_date': start, 'end_date': end,
            'reservations': [{'resource_type': 'physical:host',
                              'min': 1, 'max': 1, 'hosts': [host],
                              'hypervisor_properties': '',
                              'resource_properties': ''}]})['lease']

    def admin_lease_api(self, method, path, body=None, expect=None):
        return self.lease_api(method, path, body, project='admin',
                              roles='admin,member,reader', expect=expect)

    def add_reservable_host(self, name, **capabilities):
        return self.admin_lease_api('POST', '/os-hosts',
                                    dict(capabilities, name=name))['host']

    def run_engine(self, at, clients=None):
        """Run the due events as of ``at`` (UTC) with a real engine.

        As the service does, an action's wait for Nova (a server ACTIVE
        or gone) is recorded, not sat through, and the event runs again
        once Nova lists the server as changed; this returns when no
        event is due or waits.

        :param clients: the plugins' clients (by default the service
            user's).
        """
        clock = clock_mod.ManualClock(at)
        engine = runner.Engine(
            conf_mod.CONF, clock, plugins_mod.load_plugins(
                conf_mod.CONF, clock, clients),
            notifications.get_notifier(conf_mod.CONF))
        test_base.wait_until(
            lambda: not engine.run_once(defer_waits=True) and
            not any_event_waits(), 'the events that wait', ENGINE_WAIT)

    def boot(self, project=OWNER, hints=None, expect_state='ACTIVE'):
        """Boot a server as ``project``; return it in ``expect_state``."""
        api = self.user_api(project)
        request = {'server': self._build_server(networks='none')}
        if hints:
            request['os:scheduler_hints'] = hints
        server = api.post_server(request)
        return self._wait_for_state_change(server, expect_state)

    def lease_id_of(self, server):
        """The id of ``server``'s lease, from its view's ``metadata``.

        The administrator's view, which shows every lease; None for a
        server without one. Kept from the first call: a server keeps its
        lease, and the lease outlives a deleted server. At microversion
        2.1, whose view has the metadata and none of the later fields
        (Nova's harness checks its answers against its own schemas, and a
        fuzzed server's hints may not pass those of 2.100).
        """
        known = self.__dict__.setdefault('_lease_ids', {})
        if server['id'] not in known:
            admin = client.TestOpenStackClient(
                'admin', self.api_fixture.base_url,
                project_id=self.api_fixture.project_id,
                roles=['reader', 'member', 'admin'])
            admin.microversion = '2.1'
            known[server['id']] = admin.get_server(server['id'])[
                'metadata'].get(LEASE_ID)
        return known[server['id']]

    def user_api(self, project):
        """Nova's test client for a member of ``project``."""
        api = client.TestOpenStackClient(
            'user-' + project, self.api_fixture.base_url,
            project_id=project, roles=['reader', 'member'])
        api.microversion = self.microversion
        return api

    def aggregate(self, name):
        """Nova's aggregate called ``name``, or None."""
        for aggregate in self.admin_api.api_get(
                '/os-aggregates').body['aggregates']:
            if aggregate['name'] == name:
                return aggregate
        return None


class GpuHostsTestCase(NovaTestCase):
    """Three reservable hosts, two with a gpu, and a window a day long.

    compute-2 and compute-3 (10 vcpus) have the gpu; compute-1 has 2
    vcpus; compute-4 stays an ordinary host. The window starts in an hour.
    """

    def setUp(self):
        super().setUp()
        self.now = clock_mod.SYSTEM.now()
        self.start = self.now + datetime.timedelta(hours=1)
        self.end = self.now + datetime.timedelta(days=1)
        self.add_reservable_host('compute-1', gpu='false')
        self.add_reservable_host('compute-2', gpu='true')
        self.add_reservable_host('compute-3', gpu='true')


def any_event_waits():
    """Return whether an event of the leases DB waits for its results."""
    with db_api.context_manager.reader.using(
            context_mod.get_admin_context()) as session:
        return session.execute(
            store_leases.waiting_events().limit(1)).first() is not None
