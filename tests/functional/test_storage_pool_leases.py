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

"""Storage pool leases: ``storage:pool`` bookings on a real leases DB.

Leases are created, moved and refused through the real lease service
with the real ``storage:pool`` and ``virtual:volume`` plugins, on SQLite,
PostgreSQL and MariaDB. The pools are registered as the inventory
registers them, with what a Cinder would report (the inventory's own
calls to a real Cinder are in ``test_storage_pools``). Concurrent
bookings (threads on an SQLite file, processes on the servers) never
put one pool in two overlapping leases.
"""

import datetime
import uuid

from oslo_config import cfg

from db import api as db_api
from db import tables
from reservation_ext import clock as clock_mod
from reservation_ext import conf as conf_mod
from reservation_ext import context
from reservation_ext import exceptions
from reservation_ext.leases import notifications
from reservation_ext.leases import service as lease_service
from reservation_ext.planning import capabilities
from reservation_ext.planning import storage_pools as planner
from reservation_ext.plugins import storage_pool
from reservation_ext.plugins import virtual_volume
from reservation_ext.storage_pools import inventory as inventory_mod
from reservation_ext.store import storage_pools as store
from tests import base
from tests.functional import concurrency
from tests.functional import test_planner

NOW = datetime.datetime(2027, 1, 10, 9, 0, 0)
# The GB volume reservations may hold, pools booked then included.
RESERVABLE_GB = 1500
# name: (what Cinder reported, extra capabilities). Cinder reports no
# number for bronze's capacity.
POOLS = {
    'storage-1@hdd#bronze': ({'volume_backend_name': 'hdd',
                              'total_capacity_gb': 'infinite',
                              'thin_provisioning_support': False}, {}),
    'storage-1@ssd#gold': ({'volume_backend_name': 'ssd',
                            'total_capacity_gb': 1000,
                            'thin_provisioning_support': True},
                           {'tier': 'gold'}),
    'storage-2@hdd#silver': ({'volume_backend_name': 'hdd',
                              'total_capacity_gb': 4000.0,
                              'thin_provisioning_support': True},
                             {'tier': 'silver'}),
}
BRONZE, GOLD, SILVER = sorted(POOLS)


def at(hours):
    return NOW + datetime.timedelta(hours=hours)


def when(hours):
    return at(hours).strftime('%Y-%m-%d %H:%M')


def make_service(clock):
    """A lease service with the real storage:pool and virtual:volume."""
    conf = cfg.ConfigOpts()
    conf_mod.register_opts(conf)
    conf([], project='reservation')
    conf.set_override('volume_reservable_gb', RESERVABLE_GB,
                      group='reservation')
    return lease_service.LeaseService(
        conf, clock, {
            'storage:pool': storage_pool.StoragePoolPlugin(conf, clock),
            'virtual:volume': virtual_volume.VirtualVolumePlugin(conf,
                                                                 clock)},
        notifications.get_notifier(conf))


def pool_lease(start=0, end=24, **fields):
    """A create request of a lease with one ``storage:pool`` reservation."""
    return {'name': str(uuid.uuid4()), 'start_date': when(start),
            'end_date': when(end), 'events': [],
            'reservations': [dict({'resource_type': 'storage:pool',
                                   'min': 1, 'max': 1}, **fields)]}


def volume_lease(size, start=0, end=24):
    return {'name': str(uuid.uuid4()), 'start_date': when(start),
            'end_date': when(end), 'events': [],
            'reservations': [{'resource_type': 'virtual:volume',
                              'size_gb': size,
                              'volume_id': str(uuid.uuid4())}]}


def register(session, name, reported, extra):
    store.register_pool(session, {
        'id': str(uuid.uuid4()), 'name': name, 'volume_backend_name':
        reported['volume_backend_name'], 'total_capacity_gb':
        inventory_mod._gigabytes(reported['total_capacity_gb']),
        'capabilities': '{}', 'created_at': NOW}, extra, reported)


def user():
    return context.RequestContext(project_id='p1', user_id='u1',
                                  roles=['member', 'reader'])


class _LeaseTests:

    def setUp(self):
        super().setUp()
        self.clock = clock_mod.ManualClock(NOW)
        self.service = make_service(self.clock)
        with db_api.writer(self.ctx, self.clock) as session:
            for name, (reported, extra) in POOLS.items():
                register(session, name, reported, extra)

    def lease(self, body=None, **fields):
        return self.service.create(user(), body or pool_lease(**fields))

    def refused(self, error, body=None, **fields):
        """The lease is refused with ``error``; return its message."""
        return self.assertRaises(error, self.lease, body, **fields).message

    @staticmethod
    def pools(lease):
        return lease['reservations'][0]['pools']

    def test_a_lease_gets_max_pools_when_that_many_are_free(self):
        lease = self.lease(min=1, max=2)
        [reservation] = lease['reservations']
        self.assertEqual([BRONZE, GOLD], reservation['pools'])
        self.assertEqual((1, 2, 'release'), (
            reservation['min'], reservation['max'], reservation['on_end']))

    def test_a_lease_gets_what_overlapping_leases_left_and_409_says_what(
            self):
        self.lease(min=2, max=2, end=24)
        self.assertEqual([SILVER], self.pools(self.lease(
            start=12, end=36, min=1, max=3)))
        message = self.refused(exceptions.NotEnoughResources, start=20,
                               end=30, min=2, max=2)
        self.assertIn('2 of the 2 storage pools wanted (min) are not free '
                      'from 2027-01-11 05:00:00', message)
        # Once the first lease ends, its pools are free again.
        self.assertEqual([BRONZE, GOLD], self.pools(self.lease(
            start=24, end=30, min=2, max=2)))

    def test_pool_properties_select_on_what_cinder_reported(self):
        for query, expected in [
                ('["=", "$volume_backend_name", "hdd"]', [BRONZE, SILVER]),
                ('[">=", "$total_capacity_gb", 2000]', [SILVER]),
                ('["=", "$thin_provisioning_support", "True"]',
                 [GOLD, SILVER]),
                ('["=", "$name", "%s"]' % GOLD, [GOLD])]:
            lease = self.lease(min=1, max=3, pool_properties=query)
            self.assertEqual(expected, self.pools(lease), query)
            self.service.delete(user(), lease['id'])

    def test_resource_properties_select_on_extra_capabilities(self):
        lease = self.lease(min=1, max=3, resource_properties=[
            'in', '$tier', 'gold', 'platinum'])
        self.assertEqual([GOLD], self.pools(lease))
        self.refused(exceptions.NotEnoughResources, resource_properties=(
            '["=", "$tier", "platinum"]'))

    def test_bad_requests_are_refused_naming_the_field(self):
        for fields, field in [
                ({'min': 2, 'max': 1}, 'max'),
                ({'min': 0}, 'min'),
                ({'min': 'one'}, 'min'),
                ({'pool_properties': '["=", "$tier"'}, 'pool_properties'),
                ({'resource_properties': ['<>', '$tier', 'x']},
                 'resource_properties'),
                ({'on_end': 'keep'}, 'on_end'),
                ({'amount': 1}, 'amount')]:
            error = self.assertRaises(exceptions.InvalidInput, self.lease,
                                      **fields)
            self.assertIn(field, error.message, fields)
        body = pool_lease()
        del body['reservations'][0]['min']
        self.assertIn('min', self.refused(exceptions.InvalidInput, body))
        self.assertEqual([], self.service.list(user()))

    def test_a_pool_lease_takes_its_gb_from_volume_reservations(self):
        gold = '["=", "$name", "%s"]' % GOLD
        self.lease(pool_properties=gold)
        message = self.refused(exceptions.NotEnoughResources,
                               volume_lease(600))
        self.assertIn('already hold 1000 of the 1500 GB', message)
        self.lease(volume_lease(500))
        # A pool Cinder gives no capacity for takes none.
        self.lease(pool_properties='["=", "$name", "%s"]' % BRONZE)
        self.lease(volume_lease(600, start=24, end=48))

    def test_a_pool_is_not_leased_where_volume_reservations_count_on_it(
            self):
        self.lease(volume_lease(600))
        message = self.refused(exceptions.NotEnoughResources,
                               pool_properties='["=", "$name", "%s"]' % GOLD)
        self.assertIn('The storage pools would take 1000 GB of the 1500 GB '
                      'reservable', message)
        self.assertIn('volume reservations already hold 600 GB', message)
        # Where no volume reservation counts on the GB, the pool is free.
        self.lease(pool_properties='["=", "$name", "%s"]' % SILVER,
                   start=24, end=48)

    def test_an_update_moves_the_pools_unless_another_lease_holds_them(
            self):
        first = self.lease(min=3, max=3, end=24)
        self.lease(min=1, max=1, start=48, end=72)
        moved = self.service.update(user(), first['id'], {
            'start_date': when(2), 'end_date': when(30)})
        self.assertEqual([BRONZE, GOLD, SILVER], self.pools(moved))
        with db_api.context_manager.reader.using(self.ctx) as session:
            self.assertEqual([], planner.POOLS.find_free(
                session, at(2), at(30), test_planner.busy()))
        message = self.assertRaises(
            exceptions.NotEnoughResources, self.service.update, user(),
            first['id'], {'end_date': when(60)}).message
        self.assertIn('can be extended until 2027-01-12 09:00', message)
        self.assertRaises(exceptions.InvalidInput, self.service.update,
                          user(), first['id'], {'reservations': [{
                              'id': first['reservations'][0]['id'],
                              'max': 2}]})

    def test_a_held_pool_is_removed_only_once_its_leases_are_gone(self):
        lease = self.lease(pool_properties='["=", "$name", "%s"]' % GOLD)
        inventory = inventory_mod.StoragePoolInventory(self.clock, None)
        error = self.assertRaises(exceptions.Conflict, inventory.delete,
                                  self.ctx, GOLD)
        self.assertIn('Storage pool %s is held by 1 current or future '
                      'reservation' % GOLD, error.message)
        self.service.delete(user(), lease['id'])
        inventory.delete(self.ctx, GOLD)
        self.assertRaises(exceptions.NotFound, inventory.get, self.ctx,
                          GOLD)


class LeaseSQLiteTest(_LeaseTests, base.DBTestCase):
    pass


class LeasePostgreSQLTest(_LeaseTests, base.PostgreSQLTestCase):
    pass


class LeaseMySQLTest(_LeaseTests, base.MySQLTestCase):
    pass


def book(window):
    """One booking of any one pool in ``window``; its outcome."""
    return concurrency.book(lambda session, reservation_id: (
        planner.allocate(session, reservation_id, window,
                         test_planner.busy(), [capabilities.compile(
                             '', 'pool_properties',
                             capabilities.REPORTED_POOL_TARGET)], (1, 1),
                         RESERVABLE_GB)))


def overlapping_bookings(connection):
    """Pairs of bookings of the same pool whose windows overlap."""
    return test_planner.overlapping_bookings(
        connection, tables.STORAGE_POOL_ALLOCATIONS, 'pool_id')


class _ConcurrencyMixin(concurrency.WholeItemsMixin):

    POOL = 3
    book = staticmethod(book)
    overlapping = staticmethod(overlapping_bookings)

    def add_pool(self, session):
        for name, (reported, extra) in POOLS.items():
            register(session, name, dict(reported, total_capacity_gb=None),
                     extra)


class ConcurrentThreadsTest(_ConcurrencyMixin,
                            concurrency.SQLiteFileTestCase):

    def test_concurrent_threads_never_put_a_pool_in_two_leases(self):
        self.in_threads()


class _ProcessesMixin(_ConcurrencyMixin):

    def test_concurrent_processes_never_put_a_pool_in_two_leases(self):
        self.in_four_processes()


class ConcurrentProcessesPostgreSQLTest(_ProcessesMixin,
                                        base.PostgreSQLTestCase):
    pass


class ConcurrentProcessesMySQLTest(_ProcessesMixin, base.MySQLTestCase):
    pass
