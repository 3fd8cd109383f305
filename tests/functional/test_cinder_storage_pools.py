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

"""Storage pools and what Cinder does for them, inside Cinder's harness.

Registering a storage pool asks Cinder for the pools it reports; the end
of a ``storage:pool`` lease with ``on_end: delete_volumes`` deletes its
projects' volumes on its pools.

The storage pool inventory with the service user's real Cinder client
(:class:`reservation_ext.clients.block_storage.CinderClient`, through
openstacksdk's block storage proxy) against Cinder's own functional
harness on its ``keystone`` pipeline with the policy defaults of a new
cloud (:class:`cinder_base.KeystoneCinderTestCase`: the service user
has the admin's token): its volume service runs
Cinder's fake driver, which reports one pool of ``infinite`` size. The
lease API's error bodies for these refusals are tested in
:mod:`tests.functional.test_storage_pools` (the lease API's WSGI module
imports Nova, which cannot share this process).

Cinder's harness runs in a child process (:mod:`tests.cinder_child`).
"""

from tests import cinder_child


class CinderHarness(cinder_child.CinderHarness):
    """Run this module's tests in Cinder's harness, in a child process."""

    module = __name__


if cinder_child.IN_CINDER:
    import json

    from oslo_config import cfg
    import sqlalchemy as sa

    from db import tables
    from reservation_ext.clients import plugin_clients
    from reservation_ext import clock as clock_mod
    from reservation_ext import context
    from reservation_ext import exceptions
    from reservation_ext.storage_pools import inventory
    from tests.authz import table
    from tests import base as test_base
    from tests.functional import cinder_base

    ADMIN, MEMBER, OTHER = (table.PERSONAS[0], table.PERSONAS[1],
                            table.PERSONAS[3])

    class StoragePoolRegistrationTest(cinder_base.KeystoneCinderTestCase):

        def setUp(self):
            super().setUp()
            self.clients = plugin_clients.PluginClients(cfg.CONF)
            self.inventory = inventory.StoragePoolInventory(
                clock_mod.SYSTEM, self.clients)
            self.admin = context.RequestContext(
                user_id=ADMIN.user, project_id=ADMIN.project,
                roles=list(ADMIN.roles))

        @staticmethod
        def stable(capabilities):
            """What Cinder reports of a pool, but when it last did."""
            return {key: value for key, value in capabilities.items()
                    if key != 'timestamp'}

        def reported(self):
            """Cinder's pools, as ``openstack volume backend pool list``."""
            response = self.request(ADMIN, 'GET',
                                    '/scheduler-stats/get_pools?detail=True')
            self.assertEqual(200, response.status_code, response.text)
            return {pool['name']: pool['capabilities']
                    for pool in response.json()['pools']}

        def rows(self):
            with self.database.engine.connect() as conn:
                return conn.execute(sa.select(tables.STORAGE_POOLS)).all()

        def test_cinder_client_reads_the_pools_cinder_reports(self):
            self.assertEqual(
                {name: self.stable(pool)
                 for name, pool in self.reported().items()},
                {name: self.stable(pool) for name, pool in
                 self.clients.cinder.storage_pools().items()})

        def test_a_pool_cinder_reports_is_registered_as_reported(self):
            [(name, capabilities)] = self.reported().items()
            pool = self.inventory.create(self.admin, {
                'name': name, 'tier': 'fast'})
            self.assertEqual(
                (name, 'fake', None, 'fast'),
                (pool['name'], pool['backend'], pool['total_capacity_gb'],
                 pool['tier']))
            # Its size is "infinite": no number, but what Cinder said.
            self.assertEqual('infinite',
                             pool['capabilities']['total_capacity_gb'])
            [row] = self.rows()
            self.assertEqual(self.stable(capabilities),
                             self.stable(json.loads(row.capabilities)))

        def test_a_pool_cinder_does_not_report_is_not_found(self):
            [name] = self.reported()
            host, _sep, _pool = name.partition('#')
            for unknown in (host + '#other', 'elsewhere#' + _pool):
                error = self.assertRaises(
                    exceptions.NotFound, self.inventory.create,
                    self.admin, {'name': unknown})
                self.assertIn(unknown, error.message)
            self.assertEqual([], self.rows())

        def new_volume(self, persona):
            """A new volume of ``persona``'s project, once available."""
            response = self.request(persona, 'POST', '/volumes', {
                'volume': {'size': 1, 'name': persona.name}})
            self.assertEqual(202, response.status_code, response.text)
            volume_id = response.json()['volume']['id']
            test_base.wait_until(
                lambda: self.shown(volume_id)['status'] != 'creating',
                'volume %s created' % volume_id, 60)
            return self.shown(volume_id)

        def shown(self, volume_id):
            """The admin's view of a volume (with its host), or None."""
            response = self.request(ADMIN, 'GET', '/volumes/' + volume_id)
            if response.status_code == 404:
                return None
            self.assertEqual(200, response.status_code, response.text)
            return response.json()['volume']

        def test_the_end_deletes_the_projects_volumes_on_the_pools_only(
                self):
            mine, theirs = self.new_volume(MEMBER), self.new_volume(OTHER)
            self.assertEqual('available', mine['status'])
            pool = mine['os-vol-host-attr:host']
            self.assertEqual(pool, theirs['os-vol-host-attr:host'])
            # Volumes of the lease's project elsewhere stay too.
            self.clients.cinder.delete_pool_volumes(
                [pool + '-elsewhere'], [MEMBER.project], interval=0.1)
            self.assertIsNotNone(self.shown(mine['id']))

            self.clients.cinder.delete_pool_volumes(
                [pool], [MEMBER.project], interval=0.1)
            self.assertIsNone(self.shown(mine['id']))
            self.assertEqual('available', self.shown(theirs['id'])['status'])
            # Again, with nothing left to delete, it is done at once.
            self.clients.cinder.delete_pool_volumes(
                [pool], [MEMBER.project], interval=0.1)
