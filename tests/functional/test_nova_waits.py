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

"""The waits of engines' events, read from Nova in Nova's harness.

What ends a server's wait is read in one list of the servers that
changed since the wait's ``since`` (Nova's ``updated`` of the server when
the action looked at it): deleted servers are in it, servers that did not
change since are not.
"""

import time

from reservation_ext.clients import deferral
from reservation_ext.clients import plugin_clients
from reservation_ext import conf as conf_mod
from reservation_ext.engine import waiting
from tests.functional import nova_base


def _wait_for(server, until=()):
    """A wait on ``server`` (its API view) as an action records it."""
    return deferral.Wait(deferral.SERVER, server['id'], until=until,
                         since=server['updated'])


class ServerWaitsTest(nova_base.NovaTestCase):

    def setUp(self):
        super().setUp()
        self.statuses = waiting.ResourceStatuses(
            plugin_clients.PluginClients(conf_mod.CONF))

    def _over(self, waits):
        """Return the ids of the servers whose waits are over."""
        found = self.statuses.read(waits)
        return sorted(wait.resource_id for wait in waits
                      if waiting._over(wait, found))

    def test_a_deleted_server_ends_the_wait_for_it_to_go(self):
        gone, stays = self.boot(), self.boot()
        waits = [_wait_for(gone), _wait_for(stays)]
        self.assertEqual([], self._over(waits))

        self._delete_server(gone)
        self.assertEqual([gone['id']], self._over(waits))

    def test_a_server_that_reaches_a_status_waited_for_ends_its_wait(self):
        server = self.boot()
        waits = [_wait_for(server, until=('SHELVED', 'SHELVED_OFFLOADED'))]
        self.assertEqual([], self._over(waits))

        self.api.post_server_action(server['id'], {'shelve': None})
        self._wait_for_state_change(server, 'SHELVED_OFFLOADED')
        self.assertEqual([server['id']], self._over(waits))

    def test_a_server_unchanged_since_its_wait_is_not_listed(self):
        before = self.boot()
        # Nova shows ``updated`` to the second: the later server's is
        # after every change of the first.
        time.sleep(1.1)
        server = self.boot()
        found = self.statuses.read([_wait_for(server)])
        self.assertEqual({(deferral.SERVER, server['id']): 'ACTIVE'}, found)
        self.assertNotIn(before['id'], self.statuses.clients.nova
                         .changed_servers(server['updated']))

    def test_a_start_run_after_its_wait_finds_its_server_active(self):
        server = self.boot()
        with deferral.deferring():
            # Deferred, a wait for what is there returns at once.
            self.statuses.clients.nova._wait_for_server(
                server['id'], 'ACTIVE', 600, 1)
            waiting_for = self.assertRaises(
                deferral.Waiting, self.statuses.clients.nova._wait_for_server,
                server['id'], 'SHELVED', 600, 1)
        [wait] = waiting_for.waits
        self.assertEqual((deferral.SERVER, server['id'], server['updated']),
                         (wait.kind, wait.resource_id, wait.since))
        self.assertEqual(('SHELVED', 'ERROR'), wait.until)
