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

"""Keep an engine's claims on the events it runs from expiring.

While an engine runs an event, a thread of this module renews the claim
every third of ``[reservation] event_claim_timeout``: one conditional
UPDATE of every event the engine runs, by id and claim token
(:func:`reservation_ext.store.leases.renew_claims`), sets its expiry to
now plus the timeout. So a plugin action that waits longer than the
timeout (servers to be gone, an image to be active) keeps its claim, and
no other engine takes the event over while it runs; an engine that dies
renews nothing, and its claims expire as before. A claim that could not
be renewed was lost (the DB was out of reach for longer than the
timeout and another engine took the event over): it is logged, and the
token condition of the outcome's record keeps the action's outcome out.
The thread runs only while the engine holds claims.
"""

import contextlib
import datetime
import threading
import time

from oslo_log import log as logging

from db import api as db_api
from reservation_ext import context
from reservation_ext.store import leases as store_leases

LOG = logging.getLogger(__name__)


class ClaimKeeper:
    """Renews the claims of the events an engine is running.

    :param conf: a ConfigOpts with the ``[reservation]`` options
    :param clock: the source of "now" (:mod:`reservation_ext.clock`)
    :param engine_id: the engine's name, for the logs
    """

    def __init__(self, conf, clock, engine_id):
        self.conf = conf.reservation
        self.clock = clock
        self.engine_id = engine_id
        self._held = {}
        self._changed = threading.Condition()
        self._thread = None

    @contextlib.contextmanager
    def holding(self, event_id, token):
        """Renew the claim ``token`` on the event while the block runs."""
        with self._changed:
            self._held[event_id] = token
            if self._thread is None:
                self._thread = threading.Thread(
                    target=self._renew_while_held, daemon=True,
                    name='claims-%s' % self.engine_id)
                self._thread.start()
        try:
            yield
        finally:
            with self._changed:
                del self._held[event_id]
                # The thread ends at once when nothing is left to renew.
                self._changed.notify_all()

    def _renew_while_held(self):
        """Renew the held claims every third of the claim timeout.

        The third is counted from the start of the last renewal, not its
        end: a renewal slowed by a busy DB or CPU does not push the next
        one later, so a claim keeps its margin against expiry.
        """
        interval = self.conf.event_claim_timeout / 3.0
        due = time.monotonic() + interval
        while True:
            with self._changed:
                self._changed.wait_for(
                    lambda: not self._held or time.monotonic() >= due,
                    max(0.0, due - time.monotonic()))
                if not self._held:
                    self._thread = None
                    return
                held = dict(self._held)
            due = time.monotonic() + interval
            self._renew(held)

    def _renew(self, held):
        """Renew the claims ``held`` (``{event id: token}``); log lost ones."""
        try:
            with db_api.writer(context.get_admin_context(),
                               self.clock) as session:
                # As a claim: the whole timeout from when the lock is ours.
                expires = self.clock.now() + datetime.timedelta(
                    seconds=self.conf.event_claim_timeout)
                lost = store_leases.renew_claims(session, held, expires)
        except Exception:
            # The DB is out of reach: the claims hold until they expire,
            # and the next renewal, a third of the timeout later, retries.
            LOG.exception('Engine %s failed to renew its claims',
                          self.engine_id)
            return
        for event_id in sorted(lost):
            LOG.warning('Engine %(engine)s lost its claim on event %(id)s '
                        'while running it: another engine took it over',
                        {'engine': self.engine_id, 'id': event_id})
