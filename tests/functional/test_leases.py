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

"""The lease service on a real DB with the real test plugin."""

import datetime

from oslo_messaging.notify import _impl_test
import sqlalchemy as sa

from db import api as db_api
from db import models
from db import tables
from reservation_ext import clock as clock_mod
from reservation_ext import context
from reservation_ext import exceptions
from reservation_ext.leases import notifications
from reservation_ext.leases import service as lease_service
from reservation_ext import plugins as plugins_mod
from reservation_ext.states import EventStatus
from reservation_ext.states import LeaseStatus
from tests import base
from tests import fixtures
from tests import payloads
from tests import plugins as test_plugins

NOW = datetime.datetime(2027, 1, 10, 9, 0, 0)
D = datetime.datetime
JOURNAL = test_plugins.RESOURCE_TYPE
SCARCE = 'test:scarce'
DROP = object()
# The roles of a project member's token (Keystone's implied roles).
MEMBER = ['member', 'reader']
# The generation counters' tables.
COUNTERS = ('pool_state', 'booking_state')

LEASE_KEYS = {'id', 'name', 'start_date', 'end_date', 'status',
              'status_reason', 'degraded', 'user_id', 'project_id',
              'trust_id', 'created_at', 'updated_at', 'reservations',
              'events', 'projects'}
RESERVATION_KEYS = {'id', 'lease_id', 'status', 'missing_resources',
                    'resources_changed', 'resource_id', 'resource_type',
                    'created_at', 'updated_at', 'failed_hosts'}
EVENT_KEYS = {'id', 'lease_id', 'status', 'event_type', 'time',
              'created_at', 'updated_at'}


class ScarcePlugin(test_plugins.JournalPlugin):
    """The journal plugin, but with room for nothing once ``full``."""

    full = False

    def reserve(self, session, ctx, lease, reservation_id, values):
        if self.full:
            raise exceptions.NotEnoughResources()
        return super().reserve(session, ctx, lease, reservation_id, values)

    def update(self, session, ctx, lease, reservation, values):
        self.validate(values)
        if self.full:
            raise exceptions.NotEnoughResources()
        super().update(session, ctx, lease, reservation, values)


def lease_body(**changes):
    """A valid create request for a test:journal lease, with ``changes``."""
    body = {
        'name': 'lease1',
        'start_date': '2027-01-10 10:00',
        'end_date': '2027-01-12 10:00',
        'reservations': [{'resource_type': JOURNAL}],
        'events': [],
    }
    body.update(changes)
    return {key: value for key, value in body.items() if value is not DROP}


class _LeaseServiceTests:

    def setUp(self):
        super().setUp()
        self.plugin_fixture = self.useFixture(fixtures.TestPlugins())
        self.conf = self.useFixture(fixtures.ReservationConf({
            ('oslo_messaging_notifications', 'driver'): ['test']})).conf
        _impl_test.reset()
        self.addCleanup(_impl_test.reset)
        self.clock = clock_mod.ManualClock(NOW)
        self.plugins = plugins_mod.load_plugins(self.conf, self.clock)
        self.scarce = self.plugins[SCARCE] = ScarcePlugin(self.conf,
                                                          self.clock)
        self.service = lease_service.LeaseService(
            self.conf, self.clock, self.plugins,
            notifications.get_notifier(self.conf))
        self.user = context.RequestContext(project_id='p1', user_id='u1',
                                           roles=MEMBER)
        self.other = context.RequestContext(project_id='p2', user_id='u2',
                                            roles=MEMBER)
        self.admin = context.RequestContext(project_id='adm', user_id='a',
                                            roles=['admin'] + MEMBER,
                                            is_admin=True)

    # Helpers.

    def _rows(self):
        """Every row of every table, to show that nothing changed.

        But the generation counters (test_db_writer tests them): they
        are no lease's rows, and an undone change may move them.
        """
        with self.engine.connect() as conn:
            return {table.name: sorted(
                tuple(str(value) for value in row)
                for row in conn.execute(sa.select(table)))
                for table in models.Base.metadata.sorted_tables
                if table.name not in COUNTERS}

    def assertNoRows(self):
        self.assertEqual({name: [] for name in models.Base.metadata.tables
                          if name not in COUNTERS}, self._rows())

    def _notifications(self):
        """``(event type, lease view)`` of each notification sent.

        Each payload is checked against the schema first; the view is what
        it adds billing fields to.
        """
        return [(message['event_type'], payloads.as_view(message['payload']))
                for _ctx, message, _priority, _retry
                in _impl_test.NOTIFICATIONS]

    def _set_status(self, lease_id, status):
        with db_api.writer(self.ctx, self.clock) as session:
            session.execute(tables.LEASES.update().where(
                tables.LEASES.c.id == lease_id).values(status=status))

    def _activate(self, lease):
        """Put ``lease`` where the engine leaves it after start_lease."""
        self._set_status(lease['id'], LeaseStatus.ACTIVE)
        with db_api.writer(self.ctx, self.clock) as session:
            session.execute(tables.RESERVATIONS.update().where(
                tables.RESERVATIONS.c.lease_id == lease['id']).values(
                    status='active'))
            session.execute(tables.LEASE_EVENTS.update().where(
                tables.LEASE_EVENTS.c.lease_id == lease['id'],
                tables.LEASE_EVENTS.c.event_type == 'start_lease').values(
                    status=EventStatus.DONE))

    def _times(self, view):
        return {event['event_type']: event['time']
                for event in view['events']}

    def assertInvalid(self, field, func, *args):
        exc = self.assertRaises(exceptions.InvalidInput, func, *args)
        self.assertEqual(field, exc.field)
        self.assertEqual(400, exc.code)
        return exc

    # Create and show.

    def test_create_returns_a_blazar_view(self):
        view = self.service.create(self.user, lease_body(
            before_end_date='2027-01-12 09:00', projects=['p3'],
            trust_id='t1'))

        self.assertEqual(LEASE_KEYS, set(view))
        self.assertEqual('lease1', view['name'])
        self.assertEqual('2027-01-10T10:00:00.000000', view['start_date'])
        self.assertEqual('2027-01-12T10:00:00.000000', view['end_date'])
        self.assertEqual((LeaseStatus.PENDING, None, False),
                         (view['status'], view['status_reason'],
                          view['degraded']))
        self.assertEqual(('u1', 'p1', 't1', ['p3']),
                         (view['user_id'], view['project_id'],
                          view['trust_id'], view['projects']))
        self.assertEqual(('2027-01-10 09:00:00', None),
                         (view['created_at'], view['updated_at']))
        [reservation] = view['reservations']
        self.assertEqual(RESERVATION_KEYS, set(reservation))
        self.assertEqual(
            (view['id'], 'pending', JOURNAL, '0,0,0', False, False),
            (reservation['lease_id'], reservation['status'],
             reservation['resource_type'], reservation['resource_id'],
             reservation['missing_resources'],
             reservation['resources_changed']))
        self.assertEqual(('2027-01-10 09:00:00', None),
                         (reservation['created_at'],
                          reservation['updated_at']))
        self.assertEqual(view, self.service.get(self.user, view['id']))

    def made(self):
        return [line for line in test_plugins.read_journal()
                if line[0] in ('made', 'unmade')]

    def test_what_a_plugin_makes_is_made_with_the_reservation_id(self):
        view = self.service.create(self.user, lease_body(reservations=[
            {'resource_type': JOURNAL, 'make': 1}]))
        self.assertEqual([('made', view['reservations'][0]['id'])],
                         self.made())

    def test_what_was_made_for_a_refused_create_is_undone(self):
        self.scarce.full = True
        self.assertRaises(exceptions.NotEnoughResources, self.service.create,
                          self.user, lease_body(reservations=[
                              {'resource_type': JOURNAL, 'make': 1},
                              {'resource_type': SCARCE}]))
        [(_made, made), (_unmade, unmade)] = self.made()
        self.assertEqual(('made', 'unmade', made), (_made, _unmade, unmade))
        self.assertNoRows()

    def test_a_plugin_that_fails_to_make_leaves_nothing_made(self):
        self.assertRaises(exceptions.PluginError, self.service.create,
                          self.user, lease_body(reservations=[
                              {'resource_type': JOURNAL, 'make': 1},
                              {'resource_type': JOURNAL, 'make': 2}]))
        # The failed one is undone too: it may have made part of its work.
        [(_made, made), (_unmade, unmade), (_failed, failed)] = self.made()
        self.assertEqual(('made', 'unmade', made, 'unmade'),
                         (_made, _unmade, unmade, _failed))
        self.assertNotEqual(made, failed)
        self.assertNoRows()
        self.assertEqual([], self._notifications())

    def test_create_books_through_the_plugin(self):
        view = self.service.create(self.user, lease_body())
        [reservation] = view['reservations']
        self.assertEqual([('reserve', reservation['id'])],
                         test_plugins.read_journal())

    def test_create_makes_the_three_events(self):
        view = self.service.create(self.user, lease_body(
            before_end_date='2027-01-11 10:00'))
        for event in view['events']:
            self.assertEqual(EVENT_KEYS, set(event))
            self.assertEqual((view['id'], EventStatus.UNDONE),
                             (event['lease_id'], event['status']))
        self.assertEqual(
            ['start_lease', 'before_end_lease', 'end_lease'],
            [event['event_type'] for event in view['events']])
        self.assertEqual({'start_lease': '2027-01-10T10:00:00.000000',
                          'before_end_lease': '2027-01-11T10:00:00.000000',
                          'end_lease': '2027-01-12T10:00:00.000000'},
                         self._times(view))

    def test_before_end_defaults_to_minutes_before_end(self):
        view = self.service.create(self.user, lease_body())
        self.assertEqual('2027-01-12T09:00:00.000000',
                         self._times(view)['before_end_lease'])
        self.conf.set_override('minutes_before_end_lease', 10,
                               group='reservation')
        view = self.service.create(self.user, lease_body(name='l2'))
        self.assertEqual('2027-01-12T09:50:00.000000',
                         self._times(view)['before_end_lease'])

    def test_before_end_of_a_short_lease_is_at_start(self):
        view = self.service.create(self.user, lease_body(
            end_date=DROP, duration='30m'))
        self.assertEqual(self._times(view)['start_lease'],
                         self._times(view)['before_end_lease'])

    def test_create_now_with_a_duration(self):
        view = self.service.create(self.user, lease_body(
            start_date='now', end_date=DROP, duration='1d12h'))
        self.assertEqual(('2027-01-10T09:00:00.000000',
                          '2027-01-11T21:00:00.000000'),
                         (view['start_date'], view['end_date']))

    def test_create_accepts_iso_dates_with_offsets(self):
        view = self.service.create(self.user, lease_body(
            start_date='2027-01-10T12:00:00+02:00',
            end_date='2027-01-11T10:00:00Z'))
        self.assertEqual(('2027-01-10T10:00:00.000000',
                          '2027-01-11T10:00:00.000000'),
                         (view['start_date'], view['end_date']))

    def test_start_a_few_seconds_ago_is_accepted(self):
        self.clock.advance(seconds=50)
        view = self.service.create(self.user, lease_body(
            start_date='2027-01-10 09:00'))
        self.assertEqual('2027-01-10T09:00:00.000000', view['start_date'])

    def test_create_notifies(self):
        view = self.service.create(self.user, lease_body())
        self.assertEqual([(notifications.LEASE_CREATE, view)],
                         self._notifications())

    def test_bad_input_creates_nothing(self):
        for changes, field in [
                ({'name': DROP}, 'name'),
                ({'name': ''}, 'name'),
                ({'name': 'x' * 81}, 'name'),
                ({'name': 'a\nb'}, 'name'),
                ({'colour': 'red'}, 'colour'),
                ({'start_date': 'soon'}, 'start_date'),
                ({'start_date': '2027-01-10 08:58'}, 'start_date'),
                ({'end_date': '2027-13-01 10:00'}, 'end_date'),
                ({'end_date': '2027-01-10 10:00'}, 'end_date'),
                ({'end_date': '2027-01-10 09:30'}, 'end_date'),
                ({'end_date': DROP}, 'end_date'),
                ({'duration': '1d'}, 'end_date'),
                ({'end_date': DROP, 'duration': '0'}, 'duration'),
                ({'end_date': DROP, 'duration': 'long'}, 'duration'),
                ({'end_date': DROP, 'duration': 10 ** 12}, 'duration'),
                ({'before_end_date': '2027-01-12 10:01'}, 'before_end_date'),
                ({'before_end_date': '2027-01-10 09:59'}, 'before_end_date'),
                ({'events': [{'event_type': 'start_lease'}]}, 'events'),
                ({'projects': 'p3'}, 'projects'),
                ({'projects': ['p3', '']}, 'projects[1]'),
                ({'trust_id': 5}, 'trust_id'),
                ({'reservations': {}}, 'reservations'),
                ({'reservations': ['x']}, 'reservations[0]'),
                ({'reservations': [{}]}, 'reservations[0].resource_type'),
                ({'reservations': [{'resource_type': JOURNAL},
                                   {'resource_type': 'physical:nope'}]},
                 'reservations[1].resource_type'),
                ({'reservations': [{'resource_type': JOURNAL, 'x': 1}]},
                 'reservations[0].x'),
                ({'reservations': [{'resource_type': JOURNAL,
                                    'sleep': -1}]},
                 'reservations[0].sleep'),
        ]:
            self.assertInvalid(field, self.service.create, self.user,
                               lease_body(**changes))
        self.assertNoRows()
        self.assertEqual([], test_plugins.read_journal())
        self.assertEqual([], self._notifications())

    def test_body_must_be_an_object(self):
        self.assertInvalid('body', self.service.create, self.user, [])
        self.assertNoRows()

    def test_duplicate_name_in_a_project_conflicts(self):
        self.service.create(self.user, lease_body())
        rows = self._rows()
        exc = self.assertRaises(exceptions.Conflict, self.service.create,
                                self.user, lease_body(name=' lease1 '))
        self.assertEqual(409, exc.code)
        self.assertIn('lease1', str(exc))
        self.assertEqual(rows, self._rows())
        self.service.create(self.other, lease_body())

    def test_not_enough_resources_writes_nothing(self):
        self.scarce.full = True
        self.assertRaises(exceptions.NotEnoughResources,
                          self.service.create, self.user, lease_body(
                              reservations=[{'resource_type': JOURNAL},
                                            {'resource_type': SCARCE}]))
        self.assertNoRows()
        self.assertEqual([], self._notifications())

    def test_create_needs_a_project(self):
        self.assertRaises(exceptions.Forbidden, self.service.create,
                          context.get_admin_context(), lease_body())
        self.assertNoRows()

    # Project scoping.

    def test_other_projects_leases_are_not_found(self):
        view = self.service.create(self.user, lease_body())
        for call, args in [(self.service.get, ()),
                           (self.service.update, ({'name': 'x'},)),
                           (self.service.delete, ())]:
            exc = self.assertRaises(exceptions.NotFound, call, self.other,
                                    view['id'], *args)
            self.assertEqual(404, exc.code)
        self.assertEqual(view, self.service.get(self.user, view['id']))
        self.assertRaises(exceptions.NotFound, self.service.get,
                          self.user, 'no-such-lease')

    def test_a_reader_sees_its_projects_leases_but_may_not_change_them(self):
        view = self.service.create(self.user, lease_body())
        reader = context.RequestContext(project_id='p1', user_id='r1',
                                        roles=['reader'])
        self.assertEqual(view, self.service.get(reader, view['id']))
        self.assertEqual([view], self.service.list(reader))
        for call, args in [(self.service.create, (lease_body(name='x'),)),
                           (self.service.update, (view['id'], {'name': 'x'})),
                           (self.service.delete, (view['id'],))]:
            exc = self.assertRaises(exceptions.Forbidden, call, reader, *args)
            self.assertEqual(403, exc.code)
        self.assertEqual(view, self.service.get(self.user, view['id']))

    def test_admin_sees_every_lease(self):
        view = self.service.create(self.user, lease_body())
        self.assertEqual(view, self.service.get(self.admin, view['id']))

    def test_list_is_scoped_to_the_project(self):
        mine = self.service.create(self.user, lease_body())
        theirs = self.service.create(self.other, lease_body())
        self.assertEqual([mine], self.service.list(self.user))
        self.assertEqual([theirs], self.service.list(self.other))
        self.assertRaises(exceptions.Forbidden, self.service.list,
                          self.user, {'all_projects': 'true'})

    def test_an_admin_lists_every_projects_leases(self):
        mine = self.service.create(self.user, lease_body())
        theirs = self.service.create(self.other, lease_body())
        for params in (None, {'all_projects': 'true'}):
            self.assertEqual(
                {mine['id'], theirs['id']},
                {lease['id'] for lease in self.service.list(
                    self.admin, params)})
        self.assertEqual([], self.service.list(
            self.admin, {'all_projects': 'false'}))

    # Update.

    def test_update_moves_the_end_and_retimes_events(self):
        view = self.service.create(self.user, lease_body())
        self.clock.advance(minutes=5)
        updated = self.service.update(self.user, view['id'], {
            'end_date': '2027-01-13 10:00', 'events': []})
        self.assertEqual('2027-01-13T10:00:00.000000', updated['end_date'])
        self.assertEqual({'start_lease': '2027-01-10T10:00:00.000000',
                          'before_end_lease': '2027-01-13T09:00:00.000000',
                          'end_lease': '2027-01-13T10:00:00.000000'},
                         self._times(updated))
        self.assertEqual('2027-01-10 09:05:00', updated['updated_at'])
        [reservation] = view['reservations']
        self.assertEqual(('update', reservation['id']),
                         test_plugins.read_journal()[-1])
        self.assertEqual((notifications.LEASE_UPDATE, updated),
                         self._notifications()[-1])

    def test_prolong_and_reduce(self):
        view = self.service.create(self.user, lease_body())
        view = self.service.update(self.user, view['id'],
                                   {'prolong_for': '1d'})
        self.assertEqual('2027-01-13T10:00:00.000000', view['end_date'])
        view = self.service.update(self.user, view['id'],
                                   {'reduce_by': '2d12h'})
        self.assertEqual('2027-01-10T22:00:00.000000', view['end_date'])

    def test_update_a_pending_lease_start(self):
        view = self.service.create(self.user, lease_body())
        view = self.service.update(self.user, view['id'], {
            'start_date': '2027-01-11 10:00',
            'before_end_date': '2027-01-11 11:00'})
        self.assertEqual({'start_lease': '2027-01-11T10:00:00.000000',
                          'before_end_lease': '2027-01-11T11:00:00.000000',
                          'end_lease': '2027-01-12T10:00:00.000000'},
                         self._times(view))

    def test_explicit_before_end_is_kept_until_the_end_moves(self):
        view = self.service.create(self.user, lease_body(
            before_end_date='2027-01-11 10:00'))
        view = self.service.update(self.user, view['id'], {'name': 'new'})
        self.assertEqual('2027-01-11T10:00:00.000000',
                         self._times(view)['before_end_lease'])
        view = self.service.update(self.user, view['id'],
                                   {'prolong_for': '1h'})
        self.assertEqual('2027-01-12T10:00:00.000000',
                         self._times(view)['before_end_lease'])

    def test_rename(self):
        view = self.service.create(self.user, lease_body())
        view = self.service.update(self.user, view['id'], {'name': ' new '})
        self.assertEqual('new', view['name'])
        self.assertEqual([('reserve', view['reservations'][0]['id'])],
                         test_plugins.read_journal())

    def test_rename_to_a_taken_name_conflicts(self):
        self.service.create(self.user, lease_body())
        view = self.service.create(self.user, lease_body(name='lease2'))
        self.assertRaises(exceptions.Conflict, self.service.update,
                          self.user, view['id'], {'name': 'lease1'})

    def test_update_passes_reservation_values_to_the_plugin(self):
        view = self.service.create(self.user, lease_body())
        [reservation] = view['reservations']
        self.service.update(self.user, view['id'], {
            'reservations': [{'id': reservation['id'], 'amount': 2}]})
        self.assertEqual(('update', reservation['id']),
                         test_plugins.read_journal()[-1])

    def test_active_lease_end_moves_but_not_its_start(self):
        view = self.service.create(self.user, lease_body(start_date='now'))
        self._activate(view)
        self.clock.advance(hours=1)
        self.assertInvalid('start_date', self.service.update, self.user,
                           view['id'], {'start_date': '2027-01-11 10:00'})
        view = self.service.update(self.user, view['id'],
                                   {'end_date': '2027-01-11 10:00'})
        self.assertEqual(LeaseStatus.ACTIVE, view['status'])
        self.assertEqual({'start_lease': '2027-01-10T09:00:00.000000',
                          'before_end_lease': '2027-01-11T09:00:00.000000',
                          'end_lease': '2027-01-11T10:00:00.000000'},
                         self._times(view))

    def test_bad_update_changes_nothing(self):
        view = self.service.create(self.user, lease_body())
        self.clock.advance(hours=2)
        rows = self._rows()
        for body, field in [
                ({'colour': 'red'}, 'colour'),
                ({'name': ''}, 'name'),
                ({'start_date': 'soon'}, 'start_date'),
                ({'start_date': '2027-01-10 10:30'}, 'start_date'),
                ({'end_date': '2027-01-10 09:00'}, 'end_date'),
                ({'end_date': '2027-01-10 10:30'}, 'end_date'),
                ({'before_end_date': '2027-01-13 10:00'},
                 'before_end_date'),
                ({'reduce_by': '2d'}, 'reduce_by'),
                # To 10:59 at 11:00 (an end in the current minute is now).
                ({'reduce_by': '1d23h1m'}, 'reduce_by'),
                ({'prolong_for': '0'}, 'prolong_for'),
                ({'end_date': '2027-01-13 10:00', 'prolong_for': '1d'},
                 'prolong_for'),
                ({'events': [{}]}, 'events'),
                ({'reservations': [{'amount': 2}]}, 'reservations[0].id'),
                ({'reservations': [{'id': 'nope'}]}, 'reservations[0].id'),
        ]:
            self.assertInvalid(field, self.service.update, self.user,
                               view['id'], body)
        self.assertEqual(rows, self._rows())
        self.assertEqual(1, len(self._notifications()))

    def test_plugin_input_errors_name_the_reservation(self):
        view = self.service.create(self.user, lease_body(
            reservations=[{'resource_type': JOURNAL},
                          {'resource_type': SCARCE}]))
        [scarce] = [reservation for reservation in view['reservations']
                    if reservation['resource_type'] == SCARCE]
        rows = self._rows()
        self.assertInvalid(
            'reservations[0].colour', self.service.update, self.user,
            view['id'], {'reservations': [{'id': scarce['id'],
                                           'colour': 'red'}]})
        self.assertEqual(rows, self._rows())

    def test_no_room_for_the_new_window_changes_nothing(self):
        view = self.service.create(self.user, lease_body(
            reservations=[{'resource_type': JOURNAL},
                          {'resource_type': SCARCE}]))
        self.scarce.full = True
        rows = self._rows()
        self.assertRaises(exceptions.NotEnoughResources, self.service.update,
                          self.user, view['id'], {'prolong_for': '1d'})
        self.assertEqual(rows, self._rows())

    def test_an_update_is_updating_while_nova_or_cinder_apply_it(self):
        view = self.service.create(self.user, lease_body())
        [reservation] = view['reservations']
        view = self.service.update(self.user, view['id'], {
            'prolong_for': '1d',
            'reservations': [{'id': reservation['id'], 'step': 'ok'}]})
        self.assertEqual(('step_UPDATING', reservation['id']),
                         test_plugins.read_journal()[-1])
        self.assertEqual(LeaseStatus.PENDING, view['status'])
        self.assertEqual('2027-01-13T10:00:00.000000', view['end_date'])
        self.assertEqual(view, self.service.get(self.user, view['id']))
        self.assertEqual((notifications.LEASE_UPDATE, view),
                         self._notifications()[-1])

    def test_an_update_that_nova_or_cinder_refuse_is_undone(self):
        view = self.service.create(self.user, lease_body(start_date='now'))
        self._activate(view)
        view = self.service.get(self.user, view['id'])
        [reservation] = view['reservations']
        rows = self._rows()
        exc = self.assertRaises(
            exceptions.Conflict, self.service.update, self.user,
            view['id'], {'name': 'new', 'prolong_for': '1d', 'reservations': [
                {'id': reservation['id'], 'step': 'fail'}]})
        self.assertIn('the step failed on purpose', exc.message)
        self.assertIn('the lease is unchanged', exc.message)
        after = self.service.get(self.user, view['id'])
        self.assertEqual(LeaseStatus.ACTIVE, after['status'])
        self.assertEqual((view['name'], view['end_date'], self._times(view)),
                         (after['name'], after['end_date'],
                          self._times(after)))
        self.assertEqual(1, len(self._notifications()))
        # The lease and event rows were written twice (their updated_at
        # moved).
        changed = ('leases', 'events')
        self.assertEqual(
            {key: value for key, value in rows.items()
             if key not in changed},
            {key: value for key, value in self._rows().items()
             if key not in changed})

    def test_an_end_date_of_now_ends_an_active_lease_now(self):
        view = self.service.create(self.user, lease_body(start_date='now'))
        self._activate(view)
        self.clock.advance(hours=3, seconds=20)
        view = self.service.update(self.user, view['id'],
                                   {'end_date': 'now'})
        self.assertEqual(LeaseStatus.ACTIVE, view['status'])
        self.assertEqual('2027-01-10T12:00:20.000000', view['end_date'])
        self.assertEqual('2027-01-10T12:00:20.000000',
                         self._times(view)['end_lease'])

    def test_an_updating_lease_refuses_other_changes(self):
        view = self.service.create(self.user, lease_body())
        self._set_status(view['id'], LeaseStatus.UPDATING)
        for call, args in [(self.service.update, ({'name': 'x'},)),
                           (self.service.delete, ())]:
            exc = self.assertRaises(exceptions.InvalidState, call,
                                    self.user, view['id'], *args)
            self.assertEqual(409, exc.code)

    def test_update_is_guarded_by_status(self):
        view = self.service.create(self.user, lease_body())
        for status in (LeaseStatus.STARTING, LeaseStatus.TERMINATING,
                       LeaseStatus.DELETING):
            self._set_status(view['id'], status)
            exc = self.assertRaises(exceptions.InvalidState,
                                    self.service.update, self.user,
                                    view['id'], {'name': 'new'})
            self.assertEqual(409, exc.code)

    def test_a_terminated_lease_keeps_its_dates(self):
        view = self.service.create(self.user, lease_body())
        self._set_status(view['id'], LeaseStatus.TERMINATED)
        self.assertRaises(exceptions.InvalidState, self.service.update,
                          self.user, view['id'], {'prolong_for': '1d'})
        view = self.service.update(self.user, view['id'], {'name': 'old'})
        self.assertEqual('old', view['name'])

    # Delete.

    def test_delete_removes_every_row(self):
        view = self.service.create(self.user, lease_body(projects=['p3']))
        self.assertIsNone(self.service.delete(self.user, view['id']))
        self.assertNoRows()
        self.assertRaises(exceptions.NotFound, self.service.get, self.user,
                          view['id'])
        self.assertEqual(notifications.LEASE_DELETE,
                         self._notifications()[-1][0])
        self.assertEqual(LeaseStatus.DELETING,
                         self._notifications()[-1][1]['status'])

    def test_delete_removes_the_plugins_rows(self):
        view = self.service.create(self.user, lease_body())
        with self.engine.begin() as conn:
            conn.execute(models.HostReservation.__table__.insert().values(
                id='h1', reservation_id=view['reservations'][0]['id'],
                min=1, max=1))
        self.service.delete(self.user, view['id'])
        self.assertNoRows()

    def test_delete_of_an_active_lease_ends_it(self):
        view = self.service.create(self.user, lease_body(start_date='now'))
        self._activate(view)
        self.service.delete(self.user, view['id'])
        [reservation] = view['reservations']
        self.assertEqual(('on_end', reservation['id']),
                         test_plugins.read_journal()[-1])
        self.assertNoRows()

    def test_failed_plugin_puts_the_lease_in_error(self):
        view = self.service.create(self.user, lease_body(
            start_date='now',
            reservations=[{'resource_type': JOURNAL, 'fail_end': 1}]))
        self._activate(view)
        exc = self.assertRaises(exceptions.PluginError, self.service.delete,
                                self.user, view['id'])
        self.assertEqual(500, exc.code)
        failed = self.service.get(self.user, view['id'])
        self.assertEqual(LeaseStatus.ERROR, failed['status'])
        self.assertIn('on_end failed on purpose', failed['status_reason'])
        # ERROR is stable: deleting again retries the plugin.
        self.service.delete(self.user, view['id'])
        self.assertNoRows()

    def test_delete_is_guarded_by_status(self):
        view = self.service.create(self.user, lease_body())
        # A DELETING lease may be deleted again: test_interrupted_delete.
        for status in (LeaseStatus.STARTING, LeaseStatus.TERMINATING):
            self._set_status(view['id'], status)
            self.assertRaises(exceptions.InvalidState, self.service.delete,
                              self.user, view['id'])
        self.assertEqual(1, len(self.service.list(self.user)))

    def test_terminated_lease_can_be_deleted(self):
        view = self.service.create(self.user, lease_body())
        self._set_status(view['id'], LeaseStatus.TERMINATED)
        self.service.delete(self.admin, view['id'])
        self.assertNoRows()


class LeaseServiceSQLiteTest(_LeaseServiceTests, base.DBTestCase):
    pass


class LeaseServicePostgreSQLTest(_LeaseServiceTests, base.PostgreSQLTestCase):
    pass


class LeaseServiceMySQLTest(_LeaseServiceTests, base.MySQLTestCase):
    pass
