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

"""Tests of the lease engine, on SQLite, PostgreSQL and MariaDB."""

import datetime
import os

import fixtures
from oslo_config import cfg
from oslo_messaging.notify import _impl_test as test_notifier
from oslo_utils import uuidutils
import sqlalchemy as sa

from db import api as db_api
from db import models
from reservation_ext import clock as clock_mod
from reservation_ext import conf as conf_mod
from reservation_ext import context
from reservation_ext.engine import runner
from reservation_ext import exceptions
from reservation_ext.leases import notifications
from reservation_ext import plugins
from reservation_ext.states import EventStatus
from reservation_ext.states import EventType
from reservation_ext.states import LeaseStatus
from reservation_ext.store import leases as store_leases
from tests import base
from tests import fixtures as test_fixtures
from tests import payloads
from tests import plugins as test_plugins

T0 = datetime.datetime(2030, 1, 1, 12, 0)
HOUR = datetime.timedelta(hours=1)


def create_lease(start=T0, end=T0 + HOUR, before_end=None,
                 status=LeaseStatus.PENDING, fail_start=0, fail_end=0,
                 sleep=0):
    """Insert a lease, one test:journal reservation and its events.

    Return ``(lease_id, reservation_id)``. The events are start_lease,
    end_lease and, when ``before_end`` is given, before_end_lease.
    """
    lease_id = uuidutils.generate_uuid()
    reservation_id = uuidutils.generate_uuid()
    times = {EventType.START_LEASE: start, EventType.END_LEASE: end}
    if before_end is not None:
        times[EventType.BEFORE_END_LEASE] = before_end
    ctx = context.get_admin_context()
    with db_api.context_manager.writer.using(ctx) as session:
        session.execute(sa.insert(models.Lease.__table__).values(
            id=lease_id, name='lease-' + lease_id, project_id='p',
            start_date=start, end_date=end, before_end_date=before_end,
            status=status, created_at=start))
        session.execute(sa.insert(models.Reservation.__table__).values(
            id=reservation_id, lease_id=lease_id,
            resource_type=test_plugins.RESOURCE_TYPE,
            resource_id='%d,%d,%g' % (fail_start, fail_end, sleep),
            status='pending', created_at=start))
        session.execute(sa.insert(models.Event.__table__), [
            dict(id=uuidutils.generate_uuid(), lease_id=lease_id,
                 event_type=event_type, time=time,
                 status=EventStatus.UNDONE, attempts=0, created_at=start)
            for event_type, time in times.items()])
    return lease_id, reservation_id


def get_lease(lease_id):
    """The lease row and ``{event_type: event row}`` of its events."""
    ctx = context.get_admin_context()
    with db_api.context_manager.reader.using(ctx) as session:
        lease = session.execute(sa.select(models.Lease.__table__).where(
            models.Lease.id == lease_id)).mappings().one()
        events = session.execute(sa.select(models.Event.__table__).where(
            models.Event.lease_id == lease_id)).mappings().all()
        reservations = session.execute(
            sa.select(models.Reservation.__table__).where(
                models.Reservation.lease_id == lease_id)).mappings().all()
    return lease, {e['event_type']: e for e in events}, reservations


def make_conf(test, **overrides):
    """A ConfigOpts with the project's options, notifications to memory."""
    path = test.useFixture(fixtures.TempDir()).path
    conf_file = os.path.join(path, 'reservation.conf')
    with open(conf_file, 'w') as f:
        f.write('[oslo_messaging_notifications]\ndriver = test\n')
    conf = cfg.ConfigOpts()
    conf_mod.register_opts(conf)
    conf(['--config-file', conf_file], project='reservation-ext')
    for name, value in overrides.items():
        conf.set_override(name, value, group=conf_mod.GROUP)
    return conf


class GracePlugin(test_plugins.JournalPlugin):
    """A journal plugin whose end begins a further lease event."""

    def on_end(self, ctx, lease, reservation):
        super().on_end(ctx, lease, reservation)
        return ['grace_period_start']


class NotFreeYetPlugin(test_plugins.JournalPlugin):
    """A journal plugin whose start waits while ``free`` is False."""

    free = False

    def on_start(self, ctx, lease, reservation):
        if not self.free:
            raise exceptions.NotYet('its host is not free yet',
                                    for_at_most=60)
        super().on_start(ctx, lease, reservation)


class PendingPlugin(test_plugins.JournalPlugin):
    """A journal plugin with pending work: ``pending`` pieces, or a fault."""

    def __init__(self, conf, clock, pending=0, fail=False):
        super().__init__(conf, clock)
        self.pending = pending
        self.fail = fail
        self.polls = 0

    def run_pending(self, ctx):
        self.polls += 1
        if self.fail:
            raise RuntimeError('Nova is down')
        finished, self.pending = self.pending, 0
        return finished


class EngineTestMixin:

    def setUp(self):
        super().setUp()
        self.useFixture(test_fixtures.TestPlugins())
        test_notifier.reset()
        self.addCleanup(test_notifier.reset)
        self.clock = clock_mod.ManualClock(T0 - HOUR)
        self.conf = make_conf(self, event_max_attempts=3,
                              event_retry_backoff=10, event_batch_size=10)
        self.engine = runner.Engine(
            self.conf, self.clock, plugins.load_plugins(self.conf, self.clock),
            notifications.get_notifier(self.conf), engine_id='test')

    def _notified(self):
        return [(m['event_type'], payloads.checked(m['payload'])['id'],
                 m['payload']['status'])
                for _ctx, m, _priority, _retry in test_notifier.NOTIFICATIONS]

    def test_nothing_due_before_start(self):
        lease_id, _ = create_lease()
        self.assertEqual(0, self.engine.run_once())
        lease, events, _ = get_lease(lease_id)
        self.assertEqual(LeaseStatus.PENDING, lease['status'])
        self.assertEqual(EventStatus.UNDONE,
                         events[EventType.START_LEASE]['status'])
        self.assertEqual([], test_plugins.read_journal())

    def test_start_lease(self):
        lease_id, reservation_id = create_lease()
        self.clock.set(T0)
        self.assertEqual(1, self.engine.run_once())
        lease, events, reservations = get_lease(lease_id)
        self.assertEqual(LeaseStatus.ACTIVE, lease['status'])
        self.assertEqual(['active'], [r['status'] for r in reservations])
        self.assertEqual(EventStatus.DONE,
                         events[EventType.START_LEASE]['status'])
        self.assertEqual(EventStatus.UNDONE,
                         events[EventType.END_LEASE]['status'])
        self.assertEqual([('attempt_on_start', reservation_id),
                          ('on_start', reservation_id)],
                         test_plugins.read_journal())
        self.assertEqual(0, self.engine.run_once())

    def test_before_end_and_end_lease(self):
        lease_id, reservation_id = create_lease(before_end=T0 + HOUR / 2)
        self.clock.set(T0 + HOUR)
        self.assertEqual(1, self.engine.run_once())
        self.assertEqual(1, self.engine.run_once())
        lease, events, _ = get_lease(lease_id)
        self.assertEqual(LeaseStatus.ACTIVE, lease['status'])
        self.assertEqual(EventStatus.DONE,
                         events[EventType.BEFORE_END_LEASE]['status'])
        self.assertEqual(1, self.engine.run_once())
        lease, events, reservations = get_lease(lease_id)
        self.assertEqual(LeaseStatus.TERMINATED, lease['status'])
        self.assertEqual(['deleted'], [r['status'] for r in reservations])
        self.assertEqual(
            {EventStatus.DONE},
            {e['status'] for e in events.values()})
        self.assertEqual(['on_start', 'before_end', 'on_end'],
                         [a for a, _ in test_plugins.read_journal()
                          if not a.startswith('attempt_')])
        self.assertEqual(0, self.engine.run_once())

    def test_notifications(self):
        lease_id, _ = create_lease(before_end=T0 + HOUR / 2)
        self.clock.set(T0 + HOUR)
        while self.engine.run_once():
            pass
        self.assertEqual(
            [('lease.event.start_lease', lease_id, LeaseStatus.ACTIVE),
             ('lease.event.before_end_lease', lease_id, LeaseStatus.ACTIVE),
             ('lease.event.end_lease', lease_id, LeaseStatus.TERMINATED)],
            self._notified())
        _ctx, message, priority, _retry = test_notifier.NOTIFICATIONS[-1]
        self.assertEqual('reservation', message['publisher_id'])
        self.assertEqual('INFO', priority)
        self.assertEqual(['deleted'], [
            r['status'] for r in message['payload']['reservations']])

    def _engine_with(self, plugins_by_type):
        return runner.Engine(self.conf, self.clock, plugins_by_type,
                             notifications.get_notifier(self.conf),
                             engine_id='test')

    def test_lease_events_an_end_began_are_notified_after_it(self):
        lease_id, _ = create_lease(before_end=T0 + HOUR / 2)
        engine = self._engine_with({test_plugins.RESOURCE_TYPE: GracePlugin(
            self.conf, self.clock)})
        self.clock.set(T0 + HOUR)
        while engine.run_once():
            pass
        self.assertEqual(
            [('lease.event.start_lease', lease_id, LeaseStatus.ACTIVE),
             ('lease.event.before_end_lease', lease_id, LeaseStatus.ACTIVE),
             ('lease.event.end_lease', lease_id, LeaseStatus.TERMINATED),
             ('lease.event.grace_period_start', lease_id,
              LeaseStatus.TERMINATED)],
            self._notified())

    def test_every_poll_runs_the_plugins_pending_work(self):
        working = PendingPlugin(self.conf, self.clock, pending=2)
        failing = PendingPlugin(self.conf, self.clock, fail=True)
        engine = self._engine_with({'a:failing': failing,
                                    test_plugins.RESOURCE_TYPE: working})
        # Pending work counts as work: the engine polls again at once.
        self.assertEqual(2, engine.run_once())
        self.assertEqual(0, engine.run_once())
        # A failing plugin stops neither the poll nor the other plugins.
        self.assertEqual((2, 2), (working.polls, failing.polls))

    def test_events_of_a_lease_run_in_order(self):
        # Everything is due at once; one event per lease per claim.
        leases = [create_lease(before_end=T0 + HOUR / 2)[0]
                  for _ in range(3)]
        self.clock.set(T0 + 2 * HOUR)
        self.assertEqual(3, self.engine.run_once())
        self.assertEqual(
            {EventStatus.DONE},
            {get_lease(i)[1][EventType.START_LEASE]['status']
             for i in leases})
        while self.engine.run_once():
            pass
        journal = [a for a, _ in test_plugins.read_journal()
                   if not a.startswith('attempt_')]
        self.assertEqual(['on_start'] * 3 + ['before_end'] * 3 +
                         ['on_end'] * 3, journal)

    def test_a_lease_that_ends_runs_before_one_that_starts_then(self):
        _first, ending = create_lease(start=T0 - HOUR, end=T0)
        _second, starting = create_lease(start=T0, end=T0 + HOUR)
        self.assertEqual(1, self.engine.run_once())
        self.clock.set(T0)
        self.assertEqual(2, self.engine.run_once())
        self.assertEqual([('on_end', ending), ('on_start', starting)],
                         [entry for entry in test_plugins.read_journal()
                          if not entry[0].startswith('attempt_')][1:])

    def test_batch_size(self):
        for _ in range(3):
            create_lease()
        self.conf.set_override('event_batch_size', 2, group='reservation')
        self.clock.set(T0)
        self.assertEqual(2, self.engine.run_once())
        self.assertEqual(1, self.engine.run_once())
        self.assertEqual(0, self.engine.run_once())

    def test_retry_then_success(self):
        lease_id, reservation_id = create_lease(fail_start=1)
        self.clock.set(T0)
        self.assertEqual(1, self.engine.run_once())
        lease, events, _ = get_lease(lease_id)
        start = events[EventType.START_LEASE]
        self.assertEqual(LeaseStatus.STARTING, lease['status'])
        self.assertEqual(EventStatus.UNDONE, start['status'])
        self.assertEqual(1, start['attempts'])
        self.assertEqual(T0 + datetime.timedelta(seconds=10),
                         start['retry_at'])
        self.assertIn('on_start failed on purpose', start['message'])
        self.assertEqual(0, self.engine.run_once())

        self.clock.advance(seconds=10)
        self.assertEqual(1, self.engine.run_once())
        lease, events, _ = get_lease(lease_id)
        self.assertEqual(LeaseStatus.ACTIVE, lease['status'])
        self.assertEqual(EventStatus.DONE,
                         events[EventType.START_LEASE]['status'])
        self.assertEqual(1, test_plugins.read_journal().count(
            ('on_start', reservation_id)))

    def test_a_start_that_waits_for_another_lease_spends_no_attempt(self):
        lease_id, _ = create_lease()
        plugin = NotFreeYetPlugin(self.conf, self.clock)
        engine = self._engine_with({test_plugins.RESOURCE_TYPE: plugin})
        self.clock.set(T0)
        # More tries than event_max_attempts (3), each after the first
        # backoff (10 s), none counted.
        for _ in range(4):
            self.assertEqual(1, engine.run_once())
            start = get_lease(lease_id)[1][EventType.START_LEASE]
            self.assertEqual((EventStatus.UNDONE, 0),
                             (start['status'], start['attempts']))
            self.assertEqual(self.clock.now() + datetime.timedelta(
                seconds=10), start['retry_at'])
            self.assertIn('not free yet', start['message'])
            self.clock.advance(seconds=10)
        # Later, a quarter of the time waited: 50 s past its time.
        self.clock.advance(seconds=10)
        self.assertEqual(1, engine.run_once())
        self.assertEqual(self.clock.now() + datetime.timedelta(seconds=12.5),
                         get_lease(lease_id)[1][EventType.START_LEASE][
                             'retry_at'])
        self.clock.advance(seconds=12.5)
        plugin.free = True
        self.assertEqual(1, engine.run_once())
        self.assertEqual(LeaseStatus.ACTIVE, get_lease(lease_id)[0]['status'])

    def test_a_start_that_waits_too_long_fails_as_any_other(self):
        lease_id, _ = create_lease()
        engine = self._engine_with({test_plugins.RESOURCE_TYPE:
                                    NotFreeYetPlugin(self.conf, self.clock)})
        self.clock.set(T0 + datetime.timedelta(seconds=60))
        for backoff in (10, 20, 0):
            self.assertEqual(1, engine.run_once())
            self.clock.advance(seconds=backoff)
        lease, events, _ = get_lease(lease_id)
        self.assertEqual((EventStatus.ERROR, 3), (
            events[EventType.START_LEASE]['status'],
            events[EventType.START_LEASE]['attempts']))
        self.assertEqual(LeaseStatus.ERROR, lease['status'])
        self.assertEqual('on_start: its host is not free yet',
                         lease['status_reason'])

    def test_backoff_then_error_with_reason(self):
        lease_id, _ = create_lease(fail_start=5, before_end=T0 + HOUR / 2)
        self.clock.set(T0)
        self.assertEqual(1, self.engine.run_once())
        self.clock.advance(seconds=10)
        self.assertEqual(1, self.engine.run_once())
        start = get_lease(lease_id)[1][EventType.START_LEASE]
        self.assertEqual(T0 + datetime.timedelta(seconds=30),
                         start['retry_at'])
        self.clock.advance(seconds=19)
        self.assertEqual(0, self.engine.run_once())
        self.clock.advance(seconds=1)
        self.assertEqual(1, self.engine.run_once())

        lease, events, _ = get_lease(lease_id)
        start = events[EventType.START_LEASE]
        self.assertEqual(EventStatus.ERROR, start['status'])
        self.assertEqual(3, start['attempts'])
        self.assertEqual(LeaseStatus.ERROR, lease['status'])
        self.assertEqual('on_start: on_start failed on purpose',
                         lease['status_reason'])
        # Once, when the last attempt failed, with the lease as it is now.
        self.assertEqual(
            [('lease.event.start_lease.error', lease_id, LeaseStatus.ERROR)],
            self._notified())
        _ctx, message, _priority, _retry = test_notifier.NOTIFICATIONS[-1]
        self.assertEqual('on_start: on_start failed on purpose',
                         message['payload']['status_reason'])

    def test_an_action_that_failed_for_good_is_not_retried(self):
        lease_id, reservation_id = create_lease(fail_start=-1)
        self.clock.set(T0)
        self.assertEqual(1, self.engine.run_once())
        lease, events, _ = get_lease(lease_id)
        start = events[EventType.START_LEASE]
        self.assertEqual((EventStatus.ERROR, 1, LeaseStatus.ERROR,
                          'on_start: on_start failed for good'),
                         (start['status'], start['attempts'],
                          lease['status'], lease['status_reason']))
        self.assertEqual(['attempt_on_start'], [
            action for action, rid in test_plugins.read_journal()
            if rid == reservation_id])

    def test_a_finally_failed_end_leaves_the_lease_in_error_not_terminating(
            self):
        lease_id, _ = create_lease(fail_end=5, before_end=T0 + HOUR / 2)
        self.conf.set_override('event_max_attempts', 1, group='reservation')
        self.clock.set(T0 + HOUR)
        while self.engine.run_once():
            pass
        lease, events, _ = get_lease(lease_id)
        self.assertEqual(EventStatus.ERROR,
                         events[EventType.END_LEASE]['status'])
        self.assertEqual(LeaseStatus.ERROR, lease['status'])
        self.assertEqual('on_end: on_end failed on purpose',
                         lease['status_reason'])
        self.assertEqual(
            ('lease.event.end_lease.error', lease_id, LeaseStatus.ERROR),
            self._notified()[-1])

    def test_an_event_that_fails_without_moving_its_lease_notifies_nothing(
            self):
        lease_id, _ = create_lease(status=LeaseStatus.TERMINATED,
                                   before_end=T0 + HOUR / 2)
        self.clock.set(T0)
        self.assertEqual(1, self.engine.run_once())
        self.assertEqual(LeaseStatus.TERMINATED,
                         get_lease(lease_id)[0]['status'])
        self.assertEqual([], self._notified())

    def test_end_runs_after_failed_start(self):
        lease_id, reservation_id = create_lease(fail_start=5)
        self.conf.set_override('event_max_attempts', 1, group='reservation')
        self.clock.set(T0 + HOUR)
        self.assertEqual(1, self.engine.run_once())
        self.assertEqual(LeaseStatus.ERROR, get_lease(lease_id)[0]['status'])
        self.assertEqual(1, self.engine.run_once())
        lease, events, _ = get_lease(lease_id)
        self.assertEqual(LeaseStatus.TERMINATED, lease['status'])
        self.assertIsNone(lease['status_reason'])
        self.assertEqual(EventStatus.DONE,
                         events[EventType.END_LEASE]['status'])
        self.assertIn(('on_end', reservation_id),
                      test_plugins.read_journal())

    def _set_event(self, lease_id, event_type, **values):
        ctx = context.get_admin_context()
        with db_api.writer(ctx, self.clock) as session:
            session.execute(sa.update(models.Event.__table__).where(
                models.Event.lease_id == lease_id,
                models.Event.event_type == event_type).values(**values))

    def test_checkpoints_follow_the_claim_precede_each_action_and_the_record(
            self):
        lease_id, reservation_id = create_lease()
        seen = []

        def checkpoint(point, event):
            _, events, _ = get_lease(lease_id)
            seen.append((point, event['event_type'],
                         events[EventType.START_LEASE]['status'],
                         len(test_plugins.read_journal())))

        engine = runner.Engine(
            self.conf, self.clock, plugins.load_plugins(self.conf, self.clock),
            notifications.get_notifier(self.conf), engine_id='test',
            checkpoint=checkpoint)
        self.clock.set(T0)
        self.assertEqual(1, engine.run_once())
        # The journal has attempt_on_start, then on_start once it is done.
        self.assertEqual(
            [(runner.CLAIMED, EventType.START_LEASE, EventStatus.IN_PROGRESS,
              0),
             (runner.PLUGIN_ACTION, EventType.START_LEASE,
              EventStatus.IN_PROGRESS, 0),
             (runner.RECORDING, EventType.START_LEASE,
              EventStatus.IN_PROGRESS, 2)], seen)
        self.assertEqual(EventStatus.DONE,
                         get_lease(lease_id)[1][EventType.START_LEASE][
                             'status'])

    def test_expired_claim_is_taken_over(self):
        lease_id, reservation_id = create_lease(status=LeaseStatus.STARTING)
        self.clock.set(T0)
        self._set_event(lease_id, EventType.START_LEASE,
                        status=EventStatus.IN_PROGRESS, claimed_by='dead',
                        claim_expires_at=T0 + datetime.timedelta(seconds=5))
        self.assertEqual(0, self.engine.run_once())
        self.clock.advance(seconds=6)
        self.assertEqual(1, self.engine.run_once())
        lease, events, _ = get_lease(lease_id)
        self.assertEqual(LeaseStatus.ACTIVE, lease['status'])
        self.assertEqual(EventStatus.DONE,
                         events[EventType.START_LEASE]['status'])
        self.assertTrue(
            events[EventType.START_LEASE]['claimed_by'].startswith('test:'))

    def test_a_renewal_moves_the_claims_still_held_and_tells_the_lost_ones(
            self):
        held, _ = create_lease(status=LeaseStatus.STARTING)
        lost, _ = create_lease(status=LeaseStatus.STARTING)
        recorded, _ = create_lease(status=LeaseStatus.ACTIVE)
        self.clock.set(T0)
        soon = T0 + datetime.timedelta(seconds=5)
        for lease_id, status, token in (
                (held, EventStatus.IN_PROGRESS, 'mine'),
                (lost, EventStatus.IN_PROGRESS, 'theirs'),
                (recorded, EventStatus.DONE, 'mine')):
            self._set_event(lease_id, EventType.START_LEASE, status=status,
                            claimed_by=token, claim_expires_at=soon)
        ids = {lease_id: get_lease(lease_id)[1][EventType.START_LEASE]['id']
               for lease_id in (held, lost, recorded)}
        later = T0 + datetime.timedelta(minutes=5)
        with db_api.writer(context.get_admin_context(),
                           self.clock) as session:
            self.assertEqual({ids[lost]}, store_leases.renew_claims(
                session, dict.fromkeys(ids.values(), 'mine'), later))
        self.assertEqual(
            {held: later, lost: soon, recorded: soon},
            {lease_id: get_lease(lease_id)[1][EventType.START_LEASE][
                'claim_expires_at'] for lease_id in ids})

    def test_events_wait_while_lease_is_deleted(self):
        lease_id, _ = create_lease(status=LeaseStatus.DELETING)
        self.clock.set(T0)
        self.assertEqual(0, self.engine.run_once())
        self.assertEqual(LeaseStatus.DELETING,
                         get_lease(lease_id)[0]['status'])

    def test_start_of_terminated_lease_is_an_error(self):
        lease_id, _ = create_lease(status=LeaseStatus.TERMINATED)
        self.clock.set(T0)
        self.assertEqual(1, self.engine.run_once())
        lease, events, _ = get_lease(lease_id)
        self.assertEqual(LeaseStatus.TERMINATED, lease['status'])
        self.assertEqual(EventStatus.ERROR,
                         events[EventType.START_LEASE]['status'])
        self.assertIn('is TERMINATED',
                      events[EventType.START_LEASE]['message'])
        self.assertEqual([], test_plugins.read_journal())


class EngineSQLiteTest(EngineTestMixin, base.DBTestCase):
    pass


class EnginePostgreSQLTest(EngineTestMixin, base.PostgreSQLTestCase):
    pass


class EngineMySQLTest(EngineTestMixin, base.MySQLTestCase):
    pass
