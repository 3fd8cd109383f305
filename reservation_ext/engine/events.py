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

"""Claim lease events, run one through the plugins, record its outcome.

1. Claim, in one writer transaction: select up to a number of due events
   (``FOR UPDATE SKIP LOCKED`` on PostgreSQL, so that engines do not
   queue on each other's rows; SQLite serializes writers with ``BEGIN
   IMMEDIATE``), then ``UPDATE ... SET status='IN_PROGRESS', claimed_by=
   <token>, claim_expires_at=<now + event_claim_timeout> WHERE id IN
   (<candidates>) AND <still claimable> RETURNING ...`` (on MariaDB, which
   has no ``UPDATE ... RETURNING``, the rows are locked, updated and read
   back: :func:`db.api.update_returning`). The token is new for every
   claim, so only the returned rows are ours. The same transaction moves
   the leases to STARTING / TERMINATING. These writes, and those of step
   3, are made by :mod:`reservation_ext.store.leases`.
2. Run one event's plugin actions, outside any transaction, while
   :mod:`.claims` renews its claim; with their waits deferred
   (:mod:`reservation_ext.clients.deferral`), every reservation's action
   is issued and what they wait for is the outcome.
3. Record its outcome in a short transaction of its own; every write is
   conditioned on the event still being claimed with our token, so an
   engine whose claim expired cannot overwrite the work of its
   successor. Then notify: ``lease.event.<type>`` when it is done,
   ``lease.event.<type>.error`` when it failed for the last time and put
   its lease in ERROR. An event that waits is recorded as such, still
   claimed but with no expiry, for :mod:`.waiting` to give back.

:class:`EventRunner` calls its ``checkpoint`` at the points where dying
matters: :data:`CLAIMED` once the claim is committed, :data:`PLUGIN_ACTION`
before each plugin action, and :data:`RECORDING` before the outcome is
committed.
"""

import collections
import contextlib
import datetime
import functools
import uuid

from oslo_log import log as logging
import sqlalchemy as sa

from db import api as db_api
from db import tables
from reservation_ext.clients import deferral
from reservation_ext import exceptions
from reservation_ext.leases import notifications
from reservation_ext.leases import views
from reservation_ext import states
from reservation_ext.store import leases as store_leases

LOG = logging.getLogger(__name__)

LEASES = tables.LEASES

EventType = states.EventType
LeaseStatus = states.LeaseStatus
ReservationStatus = states.ReservationStatus

_Step = collections.namedtuple(
    '_Step', 'action lease_during lease_done reservations_done')
# What each event type does. ``lease_during`` is set when the event is
# claimed, ``lease_done`` and ``reservations_done`` when it succeeds.
_STEPS = {
    EventType.START_LEASE: _Step('on_start', LeaseStatus.STARTING,
                                 LeaseStatus.ACTIVE,
                                 ReservationStatus.ACTIVE),
    EventType.BEFORE_END_LEASE: _Step('before_end', None, None, None),
    EventType.END_LEASE: _Step('on_end', LeaseStatus.TERMINATING,
                               LeaseStatus.TERMINATED,
                               ReservationStatus.DELETED),
}

# Where an engine calls its checkpoint (see the module doc).
CLAIMED = 'claimed'
PLUGIN_ACTION = 'plugin_action'
RECORDING = 'recording'
CHECKPOINTS = (CLAIMED, PLUGIN_ACTION, RECORDING)

# A claimed event with its lease and the lease's reservations, as the
# plugins get them; ``token`` is the claim's.
Claimed = collections.namedtuple('Claimed', 'token event lease reservations')

# The outcome of one event: ``reason`` is None on success; ``notices``
# the further lease events that the plugins said it began; ``waiting``
# the :class:`.deferral.Waiting` of actions that wait for their results;
# ``not_yet_backoff`` the seconds before the next try of an attempt that
# waits for another lease, which spends no attempt (None for the others).
_Outcome = collections.namedtuple(
    '_Outcome', 'reason final notices waiting not_yet_backoff',
    defaults=(None, None))
# The longest a start that waits for another lease waits between tries.
_NOT_YET_MAX_BACKOFF = 60


def _no_checkpoint(point, event):
    """Do nothing, carry on: the default checkpoint."""


def _sources(new_status):
    """List the statuses from which a lease may move to ``new_status``."""
    return sorted(s for s in LeaseStatus.TRANSITIONS
                  if LeaseStatus.can_move(s, new_status))


def _event_order(event):
    """Order of a claim: by time; at one instant, ends before the rest.

    A claim has one event per lease (:func:`store_leases.claim_events`
    claims none of a lease with an earlier event unfinished), so this
    only orders leases, for an engine that runs a claim's events one
    after another (:meth:`reservation_ext.engine.runner.Engine.run_once`).
    """
    return (event['time'], event['event_type'] != EventType.END_LEASE,
            event['id'])


class EventRunner:
    """Claims due events; runs one claimed event and records its outcome.

    Safe to use from several threads at once: it keeps no state between
    calls but its configuration.

    :param checkpoint: ``checkpoint(point, event)``, called at each of
        :data:`CHECKPOINTS` with the event concerned
    """

    def __init__(self, conf, clock, plugins, notifier, engine_id,
                 enforcement, reclaimer, checkpoint=None):
        self.conf = conf.reservation
        self.clock = clock
        self.plugins = plugins
        self.notifier = notifier
        self.engine_id = engine_id
        self.enforcement = enforcement
        self.reclaimer = reclaimer
        self.checkpoint = checkpoint or _no_checkpoint

    def claim(self, ctx, limit):
        """Claim up to ``limit`` due events; return them as :data:`Claimed`.

        In the order of :func:`_event_order`. A read comes first, so that
        a poll that finds nothing takes no writer's lock; with ``limit`` 0
        only the read is made (it tells that the DB answers).
        """
        with db_api.context_manager.reader.using(ctx) as session:
            if not store_leases.any_claimable(session, self.clock.now()):
                return []
        if not limit:
            return []
        token = '%s:%s' % (self.engine_id, uuid.uuid4().hex)
        with db_api.writer(ctx, self.clock) as session:
            # Read once the writers' lock is ours: a claim that waited
            # for it still gets its whole timeout.
            now = self.clock.now()
            expires = now + datetime.timedelta(
                seconds=self.conf.event_claim_timeout)
            events = store_leases.claim_events(session, now, token, expires,
                                               limit)
            if not events:
                return []
            self._mark_leases(session, events)
            leases, reservations = self._load(session, events)
        return [Claimed(token, event, leases[event['lease_id']],
                        reservations[event['lease_id']])
                for event in sorted(events, key=_event_order)]

    @staticmethod
    def _mark_leases(session, events):
        """Move the leases of claimed events to STARTING / TERMINATING."""
        for event_type, step in _STEPS.items():
            lease_ids = [e['lease_id'] for e in events
                         if e['event_type'] == event_type]
            if step.lease_during and lease_ids:
                store_leases.begin_leases(session, lease_ids,
                                          _sources(step.lease_during),
                                          step.lease_during)

    def _load(self, session, events):
        """Load the claimed events' leases and reservations (as the API)."""
        lease_ids = list({e['lease_id'] for e in events})
        leases = views.lease_dicts(session, session.execute(
            sa.select(LEASES).where(LEASES.c.id.in_(lease_ids))).all())
        reservations = collections.defaultdict(list, views.reservation_views(
            session, self.plugins, lease_ids))
        return leases, reservations

    def act(self, ctx, claimed, defer=False):
        """Run the plugins' actions of a claimed event; return its outcome.

        The outcome is for :meth:`record`; what the plugins raise is in it.
        With ``defer``, the actions' waits are deferred
        (:mod:`.deferral`): every reservation's action is issued, and the
        outcome says what they wait for, if anything.
        """
        self.checkpoint(CLAIMED, claimed.event)
        event, lease = claimed.event, claimed.lease
        step = _STEPS[event['event_type']]
        if step.lease_during and lease['status'] != step.lease_during:
            return _Outcome('lease %s is %s, cannot run %s' % (
                lease['id'], lease['status'], event['event_type']), True, ())
        # A run after a wait (its waits kept) goes on where it was.
        resumed = bool(event['waits'])
        if event['event_type'] == EventType.END_LEASE and \
                not event['attempts'] and not resumed:
            # Once per end, before the plugins act, as Blazar; a retry
            # does not tell the filters again.
            self.enforcement.on_end(ctx, lease, claimed.reservations)
        try:
            if event['event_type'] == EventType.START_LEASE and not resumed:
                # A lease made to start now had no lead time.
                self.reclaimer.reclaim_lease(ctx, lease['id'])
            with deferral.deferring() if defer else contextlib.nullcontext():
                notices = deferral.gather(
                    functools.partial(self._act_on, ctx, claimed, reservation)
                    for reservation in claimed.reservations)
        except deferral.Waiting as waiting:
            return _Outcome(None, False, (), waiting)
        except exceptions.NotYet as e:
            return self._not_yet(event, '%s: %s' % (step.action, e), e)
        except exceptions.ActionFailed as e:
            return self._failed(event, '%s: %s' % (step.action, e),
                                final=True)
        except Exception as e:
            return self._failed(event, '%s: %s' % (
                step.action, str(e) or type(e).__name__))
        return _Outcome(None, False, sorted(
            {notice for some in notices for notice in some or ()}))

    def _act_on(self, ctx, claimed, reservation):
        """Run the event's plugin action on one reservation of its lease."""
        step = _STEPS[claimed.event['event_type']]
        plugin = views.plugin_for(self.plugins, reservation['resource_type'])
        self.checkpoint(PLUGIN_ACTION, claimed.event)
        return getattr(plugin, step.action)(ctx, claimed.lease, reservation)

    def _not_yet(self, event, reason, not_yet):
        """An attempt that waits for another lease: counted only when late.

        Within ``not_yet.for_at_most`` seconds past the event's time it is
        tried again, its attempts unchanged, after the first backoff or a
        quarter of the time it has waited (at most a minute): an end that
        takes long is not asked about every few seconds.
        """
        waited = (self.clock.now() - event['time']).total_seconds()
        if waited >= not_yet.for_at_most:
            return self._failed(event, reason)
        LOG.info('Event %(id)s (%(type)s of lease %(lease)s) waits: '
                 '%(reason)s', {'id': event['id'],
                                'type': event['event_type'],
                                'lease': event['lease_id'],
                                'reason': reason})
        backoff = max(self.conf.event_retry_backoff,
                      min(waited / 4, _NOT_YET_MAX_BACKOFF))
        return _Outcome(reason, False, (), not_yet_backoff=backoff)

    def _failed(self, event, reason, final=False):
        """Log a failed attempt; return its outcome (final or not).

        :param final: no retry, whatever the attempts left.
        """
        attempts = event['attempts'] + 1
        final = final or attempts >= self.conf.event_max_attempts
        LOG.log(logging.ERROR if final else logging.WARNING,
                'Event %(id)s (%(type)s of lease %(lease)s), attempt '
                '%(attempt)d of %(max)d failed: %(reason)s',
                {'id': event['id'], 'type': event['event_type'],
                 'lease': event['lease_id'], 'attempt': attempts,
                 'max': self.conf.event_max_attempts, 'reason': reason})
        return _Outcome(reason, final, ())

    def record(self, ctx, claimed, outcome):
        """Record the outcome of a claimed event (:meth:`act`); notify it."""
        self.checkpoint(RECORDING, claimed.event)
        self._notify(ctx, claimed.event['lease_id'],
                     self._write(ctx, claimed, outcome))

    def _write(self, ctx, claimed, outcome):
        """Write the outcome; return the notification types it calls for.

        Every write is conditioned on the event still being claimed with
        the claim's token.
        """
        with db_api.writer(ctx, self.clock) as session:
            if outcome.waiting is not None:
                return self._record_waiting(session, claimed, outcome)
            if outcome.reason is None:
                return self._record_done(session, claimed, outcome)
            return self._record_failure(session, claimed, outcome)

    def _record_waiting(self, session, claimed, outcome):
        """Record what the event waits for; it keeps its claim's token."""
        now = self.clock.now()
        waiting = outcome.waiting
        if not store_leases.wait_event(
                session, claimed.event['id'], claimed.token,
                deferral.dump(waiting.waits), now,
                now + datetime.timedelta(seconds=waiting.timeout)):
            self._log_lost(claimed.event)
        return []

    def fail_waiting(self, ctx, event, reason):
        """Record a failed attempt of an event that waits (its time is up).

        :param event: the event's row, claimed with its ``claimed_by``
        """
        claimed = Claimed(event['claimed_by'], event, None, None)
        self.record(ctx, claimed, self._failed(event, reason))

    def _record_done(self, session, claimed, outcome):
        """Record a success: the event DONE, its lease and reservations on."""
        event = claimed.event
        if not store_leases.finish_events(session, [event['id']],
                                          claimed.token):
            self._log_lost(event)
            return []
        step = _STEPS[event['event_type']]
        if step.lease_done:
            store_leases.complete_leases(session, [event['lease_id']],
                                         step.lease_during, step.lease_done)
            store_leases.set_reservations_status(
                session, [event['lease_id']], step.reservations_done)
        return [notifications.event_type_of(t)
                for t in [event['event_type']] + list(outcome.notices)]

    def _record_failure(self, session, claimed, outcome):
        """Record a failure: a retry, or the event and its lease in ERROR."""
        event, token = claimed.event, claimed.token
        counted = outcome.not_yet_backoff is None
        attempts = event['attempts'] + (1 if counted else 0)
        if not outcome.final:
            backoff = (self.conf.event_retry_backoff * 2 ** (attempts - 1)
                       if counted else outcome.not_yet_backoff)
            store_leases.retry_event(
                session, event['id'], token, attempts,
                self.clock.now() + datetime.timedelta(seconds=backoff),
                outcome.reason)
            return []
        if not store_leases.fail_event(session, event['id'], token,
                                       attempts, outcome.reason):
            self._log_lost(event)
            return []
        if store_leases.fail_lease(session, event['lease_id'],
                                   _sources(LeaseStatus.ERROR),
                                   outcome.reason):
            return [notifications.error_type_of(event['event_type'])]
        return []

    def _log_lost(self, event):
        """Log that the outcome of ``event`` is not recorded.

        The claim expired and another engine took the event over: its
        outcome is the successor's to record.
        """
        LOG.warning('Engine %(engine)s lost its claim on event %(id)s '
                    '(%(type)s of lease %(lease)s): its outcome is not '
                    'recorded', {'engine': self.engine_id, 'id': event['id'],
                                 'type': event['event_type'],
                                 'lease': event['lease_id']})

    def _notify(self, ctx, lease_id, event_types):
        """Send ``event_types`` about the lease, as it is after the event.

        The payload is the lease as the API shows it, with its resources
        (the same shape as the lease.create/update/delete payloads);
        ``event_time`` is when the event was recorded.
        """
        if not event_types or not self.notifier.is_enabled():
            return
        with db_api.context_manager.reader.using(ctx) as session:
            payloads = notifications.read_payloads(
                session, self.plugins, views.lease_views_by_id(
                    session, self.plugins, {lease_id}))
        now = self.clock.now()
        for payload in payloads:
            for event_type in event_types:
                notifications.notify(self.notifier, ctx, event_type,
                                     payload, now)
