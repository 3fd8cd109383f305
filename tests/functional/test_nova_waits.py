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
change since are not. A later read lists only the changes since Nova's
latest change in the earlier list, unless a wait it did not cover asks
for an earlier start; each list looks back a few seconds more, for the
changes Nova stamped before others but committed after them.
"""

import datetime
import time

from nova import context as nova_context
from nova.db.main import api as nova_db
from oslo_utils import timeutils

from reservation_ext.clients import deferral
from reservation_ext.clients import plugin_clients
from reservation_ext import conf as conf_mod
from reservation_ext.engine import waiting
from tests.functional import nova_base


def _earlier(since, seconds):
    """Nova's ``since`` (ISO 8601) ``seconds`` earlier, as a datetime."""
    return timeutils.parse_isotime(since) - datetime.timedelta(
        seconds=seconds)


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
                         .changed_servers(server['updated'])[0])

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

    def _listed_since(self):
        """Record the ``since`` of each list of changes the reads ask for."""
        nova = self.statuses.clients.nova
        asked, real = [], nova.changed_servers

        def changed_servers(since):
            asked.append(since)
            return real(since)

        nova.changed_servers = changed_servers
        return asked

    def test_a_later_read_lists_only_the_changes_since_the_last_list(self):
        gone = self.boot()
        # Nova shows ``updated`` to the second: the two differ.
        time.sleep(1.1)
        stays = self.boot()
        waits = [_wait_for(gone), _wait_for(stays)]
        asked = self._listed_since()
        self.assertEqual([], self._over(waits))
        self._delete_server(gone)
        self.assertEqual([gone['id']], self._over(waits))
        lookback = waiting.LIST_LOOKBACK.total_seconds()
        self.assertEqual(
            [_earlier(gone['updated'], lookback),
             _earlier(stays['updated'], lookback)],
            [timeutils.parse_isotime(since) for since in asked])

    def test_a_change_committed_after_a_later_one_was_listed_is_seen(self):
        stamped_first = self.boot()
        time.sleep(1.1)
        listed = self.boot()
        waits = [_wait_for(stamped_first, until=('ERROR',)),
                 _wait_for(listed)]
        self.assertEqual([], self._over(waits))
        # Its transaction stamped it before ``listed`` changed and
        # committed only now, after the list that showed that change.
        nova_db.instance_update(
            nova_context.get_admin_context(), stamped_first['id'],
            {'vm_state': 'error', 'updated_at': _earlier(
                listed['updated'], 1).replace(tzinfo=None)})
        self.assertEqual([stamped_first['id']], self._over(waits))

    def test_a_wait_the_lists_did_not_cover_is_read_from_its_own_since(self):
        shelved = self.boot()
        wait = _wait_for(shelved, until=('SHELVED', 'SHELVED_OFFLOADED'))
        self.api.post_server_action(shelved['id'], {'shelve': None})
        self._wait_for_state_change(shelved, 'SHELVED_OFFLOADED')
        # Later changes move the next list's start past the shelving.
        time.sleep(1.1)
        later = self.boot()
        self.assertEqual([], self._over([_wait_for(later, ('SHELVED',))]))
        self.assertEqual([shelved['id']], self._over(
            [_wait_for(later, ('SHELVED',)), wait]))
