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

"""Cinder's ``ReservationFilter`` dedicates leased pools, in Cinder's harness.

Cinder's own functional harness on its ``keystone`` pipeline
(:class:`cinder_base.KeystoneCinderTestCase`), with the backends and
pools of the sandbox (:data:`reservation_ext.sandbox.config.CINDER_BACKENDS`:
a volume service per backend, its driver reporting the pools) and the
sandbox's scheduler filters, ours among them. Cinder finds our filter by
the entry point ``setup.cfg`` declares, installed for the test
(:class:`FilterEntryPoint`). Pools are registered through the storage
pool inventory with the real Cinder client, leases are created by the
lease service and started and ended by the engine, with the real
``storage:pool`` plugin; volumes are created through cinder-api as the
personas of :mod:`tests.authz.table`.

Cinder's harness runs in a child process (:mod:`tests.cinder_child`).
"""

from tests import cinder_child


class CinderHarness(cinder_child.CinderHarness):
    """Run this module's tests in Cinder's harness, in a child process."""

    module = __name__


if cinder_child.IN_CINDER:
    import configparser
    import datetime
    import os
    import sys
    import time
    import uuid

    from cinder.scheduler import host_manager
    from cinder.volume import driver as cinder_driver
    import fixtures as lib_fixtures
    from oslo_config import cfg

    from cinder_ext import reservation_filter
    from reservation_ext.clients import plugin_clients
    from reservation_ext import clock as clock_mod
    from reservation_ext import context
    from reservation_ext import dates
    from reservation_ext.engine import runner
    from reservation_ext.leases import notifications
    from reservation_ext.leases import service as lease_service
    from reservation_ext.plugins import storage_pool
    from reservation_ext.sandbox.cinder import volume_driver
    from reservation_ext.sandbox import config as sandbox_config
    from reservation_ext.storage_pools import inventory
    from tests.authz import table
    from tests import base
    from tests import fixtures
    from tests.functional import cinder_base

    HOST = 'storage-1'
    BRONZE, GOLD, SILVER = POOLS = sandbox_config.cinder_pools(HOST)
    PERSONAS = {persona.name: persona for persona in table.PERSONAS}
    ADMIN, MEMBER, OTHER = (PERSONAS[name] for name in (
        table.ADMIN, table.MEMBER, table.OTHER))
    # The options of the sandbox's backend sections, registered in each
    # section before the test sets them (Cinder registers them when its
    # volume service starts).
    BACKEND_OPTS = [opt for opt in cinder_driver.volume_opts
                    if opt.name == 'volume_backend_name'] + [
        volume_driver.POOLS_OPT]
    # Hang guards, not performance expectations.
    POOLS_TIMEOUT = 60
    VOLUME_TIMEOUT = 60
    HOUR = datetime.timedelta(hours=1)

    class FilterEntryPoint(lib_fixtures.Fixture):
        """The ``cinder.scheduler.filters`` entry points of ``setup.cfg``.

        Installed as those of a distribution on ``sys.path``, so that
        Cinder's scheduler finds our filter as it does once the project
        is installed (the test's environment may predate the entry point).
        """

        def _setUp(self):
            parser = configparser.ConfigParser(interpolation=None)
            parser.read(os.path.join(cinder_base.TOP, 'setup.cfg'))
            entry_points = parser['entry_points']['cinder.scheduler.filters']
            path = fixtures.distribution(
                'reservation-ext-filter',
                '[cinder.scheduler.filters]%s\n' % entry_points)
            self.useFixture(lib_fixtures.MonkeyPatch(
                'sys.path', [path] + sys.path))
            # stevedore keeps each namespace's entry points for the life
            # of the process.
            self.useFixture(lib_fixtures.MonkeyPatch(
                'stevedore.extension.ExtensionManager.ENTRY_POINT_CACHE',
                {}))

    class PoolsTestCase(cinder_base.KeystoneCinderTestCase):
        """Cinder with the sandbox's pools and filters; none registered."""

        def _get_flags(self):
            flags = super()._get_flags()
            flags['scheduler_default_filters'] = {
                'v': list(sandbox_config.CINDER_FILTERS)}
            return flags

        def setUp(self):
            self.useFixture(FilterEntryPoint())
            super().setUp()
            base.wait_until(lambda: sorted(self.reported()) == POOLS,
                            "the scheduler's pools", POOLS_TIMEOUT)
            self.clients = plugin_clients.PluginClients(cfg.CONF)
            self.admin = context.RequestContext(
                user_id=ADMIN.user, project_id=ADMIN.project,
                roles=list(ADMIN.roles))

        def start_service(self, name, host=None, **kwargs):
            """Start the sandbox's backends for the harness's one."""
            if name != 'volume':
                return super().start_service(name, host, **kwargs)
            for backend, options in (
                    sandbox_config.cinder_backend_sections().items()):
                cfg.CONF.register_opts(BACKEND_OPTS, group=backend)
                for key, value in options:
                    self.override_config(key, value, backend)
                service = super().start_service(
                    'volume', host='%s@%s' % (HOST, backend),
                    service_name=backend)
            return service

        def reported(self):
            """The names of the pools Cinder's scheduler reports."""
            response = self.request(ADMIN, 'GET',
                                    '/scheduler-stats/get_pools')
            self.assertEqual(200, response.status_code, response.text)
            return [pool['name'] for pool in response.json()['pools']]

        def register(self, *names):
            pools = inventory.StoragePoolInventory(clock_mod.SYSTEM,
                                                   self.clients)
            for name in names:
                pools.create(self.admin, {'name': name})

        def lease(self, pools, start='now', end=None):
            """Register ``pools``; the admin leases them for the member.

            The lease is the admin's, shared with the member's project.
            """
            self.register(*pools)
            end = end or clock_mod.SYSTEM.now() + HOUR
            query = ['in', '$name'] + list(pools)
            lease = self.lease_service(clock_mod.SYSTEM).create(self.admin, {
                'name': str(uuid.uuid4()), 'start_date': start,
                'end_date': dates.format_date(end), 'events': [],
                'projects': [MEMBER.project],
                'reservations': [{
                    'resource_type': storage_pool.RESOURCE_TYPE,
                    'min': len(pools), 'max': len(pools),
                    'pool_properties': query}]})
            [reservation] = lease['reservations']
            self.assertEqual(sorted(pools), reservation['pools'])
            return lease

        def lease_service(self, clock):
            return lease_service.LeaseService(
                cfg.CONF, clock, self.plugins(clock),
                notifications.get_notifier(cfg.CONF))

        def plugins(self, clock):
            return {storage_pool.RESOURCE_TYPE: storage_pool.StoragePoolPlugin(
                cfg.CONF, clock, self.clients)}

        def run_engine(self, clock=clock_mod.SYSTEM):
            """Run the lease events due by ``clock``."""
            engine = runner.Engine(cfg.CONF, clock, self.plugins(clock),
                                   notifications.get_notifier(cfg.CONF))
            while engine.run_once():
                pass

        def started(self, pools):
            """A lease of ``pools`` from now, started; its reservation id."""
            lease = self.lease(pools)
            self.run_engine()
            lease = self.lease_service(clock_mod.SYSTEM).get(
                self.admin, lease['id'])
            self.assertEqual('ACTIVE', lease['status'])
            return lease['reservations'][0]['id']

        def create(self, persona, reservation_id=None, size=1):
            """Create a volume as ``persona``; return it once scheduled."""
            body = {'volume': {'size': size, 'name': 'scratch'}}
            if reservation_id is not None:
                body['OS-SCH-HNT:scheduler_hints'] = {
                    reservation_filter.HINT: reservation_id}
            response = self.request(persona, 'POST', '/volumes', body)
            self.assertEqual(202, response.status_code, response.text)
            return self.settled(response.json()['volume']['id'],
                                'creating')

        def settled(self, volume_id, *moving):
            """The volume, as the admin sees it, once out of ``moving``."""
            path = '/volumes/%s' % volume_id
            deadline = time.monotonic() + VOLUME_TIMEOUT
            while True:
                response = self.request(ADMIN, 'GET', path)
                self.assertEqual(200, response.status_code, response.text)
                volume = response.json()['volume']
                if volume['status'] not in moving:
                    return volume
                if time.monotonic() > deadline:
                    self.fail('volume %s stays %s' % (volume_id,
                                                      volume['status']))
                time.sleep(0.05)

        @staticmethod
        def where(volume):
            return (volume['status'], volume['os-vol-host-attr:host'])

    class LeasedPoolsTest(PoolsTestCase):

        def test_a_volume_with_the_hint_of_its_lease_lands_on_the_leased_pools(
                self):
            reservation_id = self.started([GOLD, SILVER])
            placed = [self.where(self.create(MEMBER, reservation_id))
                      for _ in range(4)]
            self.assertEqual([], [where for where in placed
                                  if where not in {('available', GOLD),
                                                   ('available', SILVER)}])

        def test_a_volume_without_the_hint_lands_only_on_unregistered_pools(
                self):
            self.register(SILVER)
            self.started([GOLD])
            # SILVER is registered and no lease holds it: still closed.
            self.assertEqual(
                [('available', BRONZE)] * 4,
                [self.where(self.create(persona))
                 for persona in (MEMBER, OTHER, ADMIN, MEMBER)])

        def test_a_volume_without_the_hint_finds_none_when_all_are_registered(
                self):
            self.register(*POOLS)
            self.assertEqual(('error', None),
                             self.where(self.create(MEMBER)))

        def test_a_project_outside_the_lease_finds_no_valid_backend(self):
            reservation_id = self.started([GOLD])
            self.assertEqual(('error', None),
                             self.where(self.create(OTHER, reservation_id)))
            self.assertEqual(('available', GOLD),
                             self.where(self.create(MEMBER, reservation_id)))

        def test_a_volume_of_the_lease_owner_lands_on_the_leased_pools(self):
            reservation_id = self.started([GOLD])
            self.assertEqual(('available', GOLD),
                             self.where(self.create(ADMIN, reservation_id)))

        def test_a_lease_that_has_not_started_gives_no_valid_backend(self):
            lease = self.lease([GOLD], start=dates.format_date(
                clock_mod.SYSTEM.now() + HOUR),
                end=clock_mod.SYSTEM.now() + 2 * HOUR)
            self.run_engine()
            self.assertEqual(('error', None), self.where(self.create(
                MEMBER, lease['reservations'][0]['id'])))

        def test_a_lease_that_ended_gives_no_valid_backend(self):
            reservation_id = self.started([GOLD])
            self.assertEqual(('available', GOLD),
                             self.where(self.create(MEMBER, reservation_id)))
            self.run_engine(clock_mod.ManualClock(
                clock_mod.SYSTEM.now() + 2 * HOUR))
            self.assertEqual(('error', None),
                             self.where(self.create(MEMBER, reservation_id)))

        def test_an_unknown_reservation_gives_no_valid_backend(self):
            self.assertEqual(('error', None), self.where(self.create(
                MEMBER, str(uuid.uuid4()))))

        def test_a_volume_on_a_leased_pool_is_extended_and_snapshotted(self):
            # Cinder asks its scheduler about the volume's own pool, with
            # no hint: the filter lets the volume be where it is.
            reservation_id = self.started([GOLD])
            volume = self.create(MEMBER, reservation_id)
            path = '/volumes/%s' % volume['id']
            response = self.request(MEMBER, 'POST', path + '/action',
                                    {'os-extend': {'new_size': 2}})
            self.assertEqual(202, response.status_code, response.text)
            volume = self.settled(volume['id'], 'extending')
            self.assertEqual(('available', GOLD, 2),
                             self.where(volume) + (volume['size'],))
            response = self.request(MEMBER, 'POST', '/snapshots', {
                'snapshot': {'volume_id': volume['id'], 'name': 'snap'}})
            self.assertEqual(202, response.status_code, response.text)
            snapshot_path = '/snapshots/%s' % response.json()['snapshot'][
                'id']
            base.wait_until(lambda: self.request(
                MEMBER, 'GET', snapshot_path).json()['snapshot'][
                'status'] != 'creating', 'the snapshot', VOLUME_TIMEOUT)
            self.assertEqual('available', self.request(
                MEMBER, 'GET', snapshot_path).json()['snapshot']['status'])

        def test_the_leases_db_is_read_once_per_request(self):
            reservation_id = self.started([GOLD])
            self.register(BRONZE)
            statements = self.useFixture(
                fixtures.Statements(self.database.engine))
            self.assertEqual(('available', SILVER),
                             self.where(self.create(MEMBER)))
            self.assertEqual(1, len(statements.reading('storage_pools')))
            self.assertEqual(('available', GOLD),
                             self.where(self.create(MEMBER, reservation_id)))
            self.assertEqual(2, len(statements.reading('storage_pools')))

    class FilterDecisionTest(PoolsTestCase):
        """The filter called as Cinder's scheduler calls it."""

        def setUp(self):
            super().setUp()
            self.backends = [host_manager.PoolState(
                name.partition('#')[0], None, {}, name.partition('#')[2])
                for name in POOLS]

        def passing(self, properties, clock=clock_mod.SYSTEM):
            chosen = reservation_filter.ReservationFilter(clock).filter_all(
                self.backends, properties)
            return [backend.backend_id for backend in chosen]

        @staticmethod
        def spec(reservation_id=None, project_id=MEMBER.project, **spec):
            hints = {} if reservation_id is None else {
                reservation_filter.HINT: reservation_id}
            return {'scheduler_hints': hints, 'request_spec': dict(
                spec, volume_properties=dict(
                    spec.get('volume_properties', {}),
                    project_id=project_id))}

        def test_a_hinted_volume_is_refused_once_the_window_is_over(self):
            reservation_id = self.started([GOLD])
            self.assertEqual([GOLD], self.passing(self.spec(
                reservation_id)))
            # The engine has not ended the lease yet: the window decides.
            self.assertEqual([], self.passing(
                self.spec(reservation_id),
                clock_mod.ManualClock(clock_mod.SYSTEM.now() + 2 * HOUR)))

        def test_a_hint_in_a_list_of_one_is_its_value(self):
            reservation_id = self.started([GOLD])
            self.assertEqual([GOLD], self.passing(self.spec(
                [reservation_id])))
            self.assertEqual([], self.passing(self.spec(
                [reservation_id, reservation_id])))

        def test_a_volume_keeps_its_own_pool_when_retyped(self):
            self.register(*POOLS)
            retype = self.spec(operation='retype_volume',
                               volume_properties={'host': SILVER})
            self.assertEqual([SILVER], self.passing(retype))
            self.assertEqual([], self.passing(self.spec()))

        def test_in_place_operations_pass_every_pool_unread(self):
            self.register(*POOLS)
            statements = self.useFixture(
                fixtures.Statements(self.database.engine))
            for operation in reservation_filter.IN_PLACE:
                self.assertEqual(POOLS, self.passing(self.spec(
                    operation=operation)))
            self.assertEqual([], statements.statements)

        def test_cinder_runs_it_for_the_first_volume_of_a_request_only(
                self):
            chosen = reservation_filter.ReservationFilter()
            self.assertEqual((True, False), (
                chosen.run_filter_for_index(0),
                chosen.run_filter_for_index(1)))
