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

"""The events that wait: looked at every poll, run again when they may.

An event whose actions issued their work and wait for its result (a
server ACTIVE, shelved or gone, a snapshot active, a volume available
or deleted, a Heat stack made or deleted:
:mod:`reservation_ext.clients.deferral`) is recorded as
waiting. It keeps its claim's token but has no claim expiry, so it holds
neither a worker nor a renewal, and any engine may finish it. Each poll
of an engine (:class:`WaitWatcher`):

1. reads the waiting events, oldest wait first;
2. records a failed attempt of those whose deadline passed (a retry
   later, or the lease in ERROR once the attempts are spent, as any
   failure);
3. reads the statuses of what the others wait for: the servers in one
   Nova list of changes (of every project, deleted ones included),
   snapshots, volumes and stacks one by one. The list asks for the
   changes since Nova's latest change of the engine's previous list, or
   since the oldest change seen by the actions of waits that list did
   not cover yet, each looking back a few seconds more (:data:`LIST_LOOKBACK`):
   in a burst, each poll lists the few servers that changed lately
   rather than every server built since the oldest wait;
4. gives back those whose waits are all over, in one transaction: their
   claims become expired ones, which the next claim takes at once. Their
   run issues nothing that is done already (the actions are idempotent)
   and finds the results, then goes on or finishes.
"""

import datetime

from oslo_log import log as logging
from oslo_utils import timeutils

from db import api as db_api
from reservation_ext.clients import deferral
from reservation_ext.store import leases as store_leases

LOG = logging.getLogger(__name__)

# Nova's status of a deleted server, in a list of changes.
DELETED = 'DELETED'

# Nova stamps a change (``updated``) before its transaction commits, so
# a change stamped just before the latest one a list showed can become
# visible only after that list (seconds later on a busy database). Each
# list starts this much earlier than the changes it asks for.
LIST_LOOKBACK = datetime.timedelta(seconds=10)


class ResourceStatuses:
    """Reads the statuses of what waits wait for, through the clients.

    :param clients: the plugins' :class:`~reservation_ext.clients.
        plugin_clients.PluginClients`
    """

    def __init__(self, clients):
        self.clients = clients
        # Where the next list of changes starts (Nova's clock), the
        # ``since`` of each server wait the lists cover from there, and
        # what they showed of those servers.
        self._next_since = None
        self._covered = {}
        self._seen = {}

    def read(self, waits):
        """Return ``{(kind, id): status}`` of the resources of ``waits``.

        None for a resource that is gone. A server that Nova did not list
        as changed since its wait's ``since`` has no entry: it did not
        move.
        """
        found = {}
        servers = {w.resource_id: w.since for w in waits
                   if w.kind == deferral.SERVER and w.since}
        if servers:
            found.update(((deferral.SERVER, server_id),
                          None if status == DELETED else status)
                         for server_id, status in
                         self._changed(servers).items())
        for wait in waits:
            if wait.kind != deferral.SERVER or wait.resource_id not in servers:
                found[wait.kind, wait.resource_id] = self._read_one(wait)
        return found

    def _changed(self, servers):
        """Return ``{id: status}`` of the waited-for servers that changed.

        ``servers`` is ``{id: since}``: changed since the ``since`` of its
        wait. A wait not covered yet (new, or its action looked again) drops
        what was seen of its server and lists from its own ``since``.
        """
        new = {server_id: since for server_id, since in servers.items()
               if self._covered.get(server_id) != since}
        for server_id in new:
            self._seen.pop(server_id, None)
        # Nova's own timestamps: no clock of ours is compared to them.
        since = min([*new.values()] + (
            [self._next_since] if self._next_since else []))
        changed, latest = self.clients.nova.changed_servers(
            _earlier(since, LIST_LOOKBACK))
        # A later change is at or after Nova's latest one listed.
        self._next_since = max(filter(None, (latest, since,
                                             self._next_since)))
        self._seen.update(changed)
        self._seen = {server_id: status for server_id, status
                      in self._seen.items() if server_id in servers}
        self._covered = dict(servers)
        return dict(self._seen)

    def _read_one(self, wait):
        """Return the status of the resource of one wait (None: gone)."""
        if wait.kind == deferral.VOLUME:
            return self.clients.cinder.volume_status(wait.resource_id)
        if wait.kind == deferral.IMAGE:
            return self.clients.nova.image_status(wait.resource_id)
        if wait.kind == deferral.STACK:
            return self.clients.heat.stack_status(
                self.clients.trusts.auth(wait.scope), wait.resource_id)
        return self.clients.nova.server_status(wait.resource_id)


class WaitWatcher:
    """Ends the waits of waiting events (see the module).

    :param clock: the source of "now" (:mod:`reservation_ext.clock`)
    :param events: the engine's :class:`~.events.EventRunner`, which
        records failed attempts
    :param statuses: what reads the resources' statuses
        (:class:`ResourceStatuses`)
    :param engine_id: the engine's name, for the logs
    """

    def __init__(self, clock, events, statuses, engine_id):
        self.clock = clock
        self.events = events
        self.statuses = statuses
        self.engine_id = engine_id

    def run(self, ctx):
        """Fail the late waits, give back the ones that are over.

        Return how many events were given back or failed.
        """
        with db_api.context_manager.reader.using(ctx) as session:
            waiting = session.execute(
                store_leases.waiting_events()).mappings().all()
        if not waiting:
            return 0
        now = self.clock.now()
        late = [e for e in waiting if e['wait_deadline'] <= now]
        for event in late:
            self.events.fail_waiting(ctx, event, _late(event))
        on_time = [e for e in waiting if e['wait_deadline'] > now]
        return len(late) + self._resume(ctx, on_time)

    def _resume(self, ctx, waiting):
        """Give back the events whose waits are all over; count them."""
        if not waiting:
            return 0
        waits = {e['id']: deferral.load(e['waits']) for e in waiting}
        statuses = self.statuses.read(
            [w for some in waits.values() for w in some])
        over = {e['id']: e['claimed_by'] for e in waiting
                if all(_over(wait, statuses) for wait in waits[e['id']])}
        if not over:
            return 0
        with db_api.writer(ctx, self.clock) as session:
            resumed = store_leases.resume_events(session, over,
                                                 self.clock.now())
        LOG.debug('Engine %s: %d waiting events may go on', self.engine_id,
                  len(resumed))
        return len(resumed)


def _over(wait, statuses):
    """Return whether the statuses read end ``wait``."""
    key = (wait.kind, wait.resource_id)
    return key in statuses and wait.over(statuses[key])


def _earlier(since, by):
    """Return the ISO 8601 time ``by`` before ``since`` (ISO 8601)."""
    return (timeutils.parse_isotime(since) - by).isoformat()


def _late(event):
    """Return the reason of a failed attempt whose wait took too long."""
    waited = (event['wait_deadline'] - event['waits_since']).total_seconds()
    return 'waited %d s in vain for %s' % (waited, ', '.join(
        map(repr, deferral.load(event['waits']))))
