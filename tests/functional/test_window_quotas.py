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

"""Nova's quotas over a lease's window, through the lease API, on a real DB.

The window's sweep and the project's lock run on SQLite, PostgreSQL and
MySQL with Nova's limits and counts given by the test (Nova's own quota
engine is read in ``test_nova_window_quotas.py``, inside Nova's harness).
"""

import datetime
import threading

from reservation_ext.clients import block_storage_quotas
from reservation_ext.clients import plugin_clients
from reservation_ext import conf as conf_mod
from reservation_ext import context
from reservation_ext.enforcement import enforcer
from reservation_ext.enforcement import window_quotas
from reservation_ext import exceptions
from reservation_ext.leases import notifications
from reservation_ext.leases import service as lease_service
from reservation_ext import plugins as plugins_mod
from tests import base
from tests.functional import test_enforcement as enforcement_tests

NOW = enforcement_tests.NOW
HOUR = datetime.timedelta(hours=1)
date = enforcement_tests.date


class GivenNovaQuotas:
    """Nova's limits and counts as the test gives them."""

    def __init__(self, limits, usage=None, counted=None):
        self.limits = limits
        self.usage = usage or {}
        self.counted = counted or {}
        self.asked = []

    def read(self, project_id, server_ids):
        """Return the given ``(limits, usage, leased)``; note the ids."""
        self.asked.append(server_ids)
        return dict(self.limits), dict(self.usage), dict(self.counted)


class Flavors:
    """Nova's part of a capacity lease's create, answered from memory.

    The window's sweep is what these tests are about; real Nova makes the
    flavors in ``test_nova_window_quotas.py`` and
    ``test_nova_instance_capacity.py``.
    """

    def __init__(self):
        self.made = set()

    def ensure_private_flavor(self, flavor, extra_specs, projects):
        self.made.add(flavor['id'])

    def delete_flavor(self, flavor_id):
        self.made.discard(flavor_id)


class _WithFlavors:
    """The plugins over :class:`Flavors`: capacity leases need no Nova."""

    def setUp(self):
        super().setUp()
        self.flavors = Flavors()
        self.plugins = plugins_mod.load_plugins(
            self.conf, self.clock, plugin_clients.PluginClients(
                self.conf, nova=self.flavors))


def capacity_lease(name, amount, vcpus=1, start=NOW + HOUR, hours=2):
    return {'name': name, 'start_date': date(start),
            'end_date': date(start + hours * HOUR),
            'reservations': [{'resource_type': 'virtual:instance',
                              'amount': amount, 'vcpus': vcpus,
                              'memory_mb': 512, 'disk_gb': 1,
                              'affinity': None,
                              'resource_properties': ''}]}


class _WindowQuotaTests(_WithFlavors,
                        enforcement_tests._EnforcementAPITests):
    """The sweep over the window and the refusals, in Blazar's body."""

    def set_quotas(self, limits, usage=None, counted=None):
        self.nova = GivenNovaQuotas(limits, usage, counted)
        self.build(enforcer.Enforcement(
            self.conf.enforcement, [], None,
            [window_quotas.WindowQuotas(window_quotas.COMPUTE, self.nova,
                                        self.clock)]))

    def test_a_lease_over_the_peak_of_its_window_is_403_and_makes_nothing(
            self):
        self.set_quotas({'instances': 5, 'cores': -1, 'ram': -1})
        self.create(capacity_lease('early', 2, hours=2))
        self.create(capacity_lease('late', 2, start=NOW + 2 * HOUR))
        before, flavors = self.rows(), set(self.flavors.made)
        refused = self.create(capacity_lease('over', 2, hours=3),
                              expected=403)
        self.assertEqual({
            'error_code': 403, 'error_name': 'ComputeQuotaExceeded',
            'error_message': 'Quota exceeded for instances: Requested 2, '
            'but already used 4 of 5 instances'}, refused)
        self.assertEqual((before, flavors), (self.rows(), self.flavors.made))
        # After the first ends, only the second counts.
        self.create(capacity_lease('after', 3, start=NOW + 3 * HOUR))

    def test_what_nova_counts_outside_leases_counts_in_every_window(self):
        # Nova counts 6 instances, 2 of them leased servers (counted in
        # their leases' windows instead): 4 stay for ever.
        self.set_quotas({'instances': 6, 'cores': 100, 'ram': -1},
                        usage={'instances': 6, 'cores': 6, 'ram': 3072},
                        counted={'instances': 2, 'cores': 2, 'ram': 1024})
        self.create(capacity_lease('two', 2, start=NOW + 48 * HOUR))
        refused = self.create(capacity_lease('three', 3), expected=403)
        self.assertEqual('Quota exceeded for instances: Requested 3, but '
                         'already used 4 of 6 instances',
                         refused['error_message'])

    def test_each_resource_over_its_limit_is_named_as_nova_names_them(self):
        self.set_quotas({'instances': 10, 'cores': 4, 'ram': 1024})
        refused = self.create(capacity_lease('big', 3, vcpus=2),
                              expected=403)
        self.assertEqual('Quota exceeded for cores, ram: Requested 6, 1536, '
                         'but already used 0, 0 of 4, 1024 cores, ram',
                         refused['error_message'])

    def test_other_projects_leases_do_not_count(self):
        self.set_quotas({'instances': 2, 'cores': -1, 'ram': -1})
        self.create(capacity_lease('theirs', 2), project='p2')
        self.create(capacity_lease('mine', 2))

    def test_an_update_that_does_not_add_is_allowed_over_a_lowered_limit(
            self):
        self.set_quotas({'instances': 4, 'cores': -1, 'ram': -1})
        lease = self.create(capacity_lease('mine', 3))
        self.set_quotas({'instances': 2, 'cores': -1, 'ram': -1})
        self.update(lease['id'], {'reduce_by': '1h'})
        refused = self.update(lease['id'], {'prolong_for': '2h'},
                              expected=403)
        self.assertEqual('Quota exceeded for instances: Requested 3, but '
                         'already used 0 of 2 instances',
                         refused['error_message'])

    def test_a_volume_lease_over_cinders_quota_is_403_in_blazars_body(self):
        self.build(enforcer.Enforcement(
            self.conf.enforcement, [], None,
            [window_quotas.WindowQuotas(window_quotas.VOLUME, GivenNovaQuotas(
                {'volumes': 1, 'gigabytes': -1}), self.clock)]))
        self.create(enforcement_tests.volume_lease('one', 1))
        before = self.rows()
        refused = self.create(enforcement_tests.volume_lease('two', 1),
                              expected=403)
        self.assertEqual({
            'error_code': 403, 'error_name': 'VolumeQuotaExceeded',
            'error_message': "Maximum number of volumes allowed (1) "
            "exceeded for quota 'volumes'."}, refused)
        self.assertEqual(before, self.rows())

    def test_a_volume_lease_when_cinder_cannot_be_asked_is_503(self):
        # The lease API's reader, sent where nothing listens (port 9).
        for option, value in (('endpoint_override', 'http://127.0.0.1:9/v3'),
                              ('connect_retries', 0)):
            self.conf.set_override(option, value,
                                   group=conf_mod.CLIENT_GROUP)
        self.build(enforcer.from_conf(
            self.conf, self.clock,
            volume_quotas=block_storage_quotas.BlockStorageQuotas(
                self.conf)))
        refused = self.create(enforcement_tests.volume_lease('one', 1),
                              expected=503)
        self.assertEqual({
            'error_code': 503, 'error_name': 'EnforcementUnavailable',
            'error_message': "Cinder's quotas cannot be read; please retry "
            "later."}, refused)
        self.assertEqual([], self.rows()['leases'])


class WindowQuotaSQLiteTest(_WindowQuotaTests, base.DBTestCase):
    pass


class WindowQuotaPostgreSQLTest(_WindowQuotaTests, base.PostgreSQLTestCase):
    pass


class WindowQuotaMySQLTest(_WindowQuotaTests, base.MySQLTestCase):
    pass


class MeetingPlugin:
    """A plugin whose creates try to meet after booking.

    As :class:`tests.functional.test_enforcement.MeetingHostPlugin`.
    """

    MEET_TIMEOUT = 2

    def __init__(self, plugin):
        self.plugin = plugin
        self.barrier = threading.Barrier(2)
        self._met = threading.local()

    def __getattr__(self, name):
        return getattr(self.plugin, name)

    def reserve(self, session, ctx, lease, reservation_id, values,
                **kwargs):
        found = self.plugin.reserve(session, ctx, lease, reservation_id,
                                    values, **kwargs)
        if not getattr(self._met, 'done', False):
            self._met.done = True
            try:
                self.barrier.wait(timeout=self.MEET_TIMEOUT)
            except threading.BrokenBarrierError:
                pass
        return found


class _ConcurrentWindowQuotaTests(_WithFlavors,
                                  enforcement_tests._EnforcementAPITests):
    """Two boots at once cannot both slip under a limit.

    (SQLite serializes its writers whole: see ``db.api.writer``.)
    """

    def test_of_two_concurrent_creates_over_the_limit_together_one_wins(self):
        plugin = MeetingPlugin(self.plugins['virtual:instance'])
        service = lease_service.LeaseService(
            self.conf, self.clock, {'virtual:instance': plugin},
            notifications.get_notifier(self.conf),
            enforcer.Enforcement(
                self.conf.enforcement, [], None, [window_quotas.WindowQuotas(
                    window_quotas.COMPUTE, GivenNovaQuotas(
                        {'instances': 3, 'cores': -1, 'ram': -1}),
                    self.clock)]))
        outcomes = []

        def create(name):
            ctx = context.RequestContext(project_id='p1', user_id='u1',
                                         roles=['member', 'reader'])
            try:
                service.create(ctx, capacity_lease(name, 2))
                outcomes.append('created')
            except exceptions.ComputeQuotaExceeded:
                outcomes.append('refused')

        base.run_together(create, [('a',), ('b',)])
        self.assertEqual(['created', 'refused'], sorted(outcomes))


class ConcurrentWindowQuotaPostgreSQLTest(_ConcurrentWindowQuotaTests,
                                          base.PostgreSQLTestCase):
    pass


class ConcurrentWindowQuotaMySQLTest(_ConcurrentWindowQuotaTests,
                                     base.MySQLTestCase):
    pass
