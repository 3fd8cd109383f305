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

"""The lease service: create, show, list, update and delete leases.

Requests are Blazar v1 lease bodies; results are Blazar lease views
(dicts). Every request is validated completely before the DB is touched,
and every change runs in one writer transaction, retried as a whole when
it loses a race (``ConcurrentUpdate``, deadlocks), so that a lease is
written together with its reservations, events and the resources the
plugins booked, or not at all.

Usage enforcement (:mod:`reservation_ext.enforcement`) runs outside the
writer transactions, as it may call an external service and Keystone: a
create or update is checked before its transaction, which then runs the
time-quota check after the plugins booked the resources (so that a refusal
rolls everything back); a lease that ends early by its deletion is told
to the filters after its plugins cleaned up.

Plugins get the lease as a dict of its columns (dates as datetimes) plus
``projects`` (and, when it is created, ``starts_later`` as the request
decided it), and each reservation as its view with the plugin's details.
Requests are parsed in :mod:`reservation_ext.leases.parsing`.
"""

import contextlib
import datetime
import json
import uuid

from oslo_db import exception as db_exc
from oslo_log import log as logging
import sqlalchemy as sa

from db import api as db_api
from db import tables
from reservation_ext import dates
from reservation_ext.enforcement import enforcer
from reservation_ext.enforcement import time_quotas
from reservation_ext import exceptions
from reservation_ext.leases import notifications
from reservation_ext.leases import parsing
from reservation_ext.leases import proposals
from reservation_ext.leases import views
from reservation_ext.planning import planner
from reservation_ext import policy
from reservation_ext.states import EventStatus
from reservation_ext.states import EventType
from reservation_ext.states import LeaseStatus
from reservation_ext.states import ReservationStatus
from reservation_ext import validation

LOG = logging.getLogger(__name__)

LEASES = tables.LEASES
LEASE_PROJECTS = tables.LEASE_PROJECTS
RESERVATIONS = tables.RESERVATIONS
LEASE_EVENTS = tables.LEASE_EVENTS

_retry = db_api.retry_on_conflict(exceptions.ConcurrentUpdate)


class LeaseService:
    """Lease operations on behalf of a request context.

    ``plugins`` is ``{resource_type: ResourcePlugin}``; ``notifier`` is
    what :func:`reservation_ext.leases.notifications.get_notifier` returns;
    ``enforcement`` an :class:`~reservation_ext.enforcement.enforcer.
    Enforcement` (by default one that allows everything).
    """

    def __init__(self, conf, clock, plugins, notifier, enforcement=None):
        self.conf = conf
        self.clock = clock
        self.plugins = plugins
        self.notifier = notifier
        self.enforcement = enforcement or enforcer.disabled(conf)

    def create(self, ctx, body):
        """Create the lease that ``body`` (Blazar's request) describes."""
        _authorize_create(ctx)
        return self._create(ctx, parsing.parse_create(
            body, self.plugins, self.clock.now()))

    def create_parsed(self, ctx, request):
        """Create the lease of a request parsed already.

        The server and volume hints are parsed where they arrive
        (:mod:`reservation_ext.leases.hints`); see
        :mod:`reservation_ext.leases.parsing` for the request.
        """
        _authorize_create(ctx)
        return self._create(ctx, request)

    def _create(self, ctx, request):
        quota = self._check_create(ctx, request)
        with _unique_name(request['name']):
            view = self._insert(ctx, request, quota)
        self._notify(ctx, notifications.LEASE_CREATE, self._payload(ctx, view))
        return view

    def proposal_window(self, ctx, proposal_id):
        """``(start, end)`` of the caller's live proposal ``proposal_id``.

        For the server and volume hints, which decide from the window
        what to do before the lease is written (and the proposal taken).
        """
        with db_api.context_manager.reader.using(ctx) as session:
            row = proposals.find(session, ctx, proposal_id, self.clock.now())
            return row.start_date, row.end_date

    def get(self, ctx, lease_id):
        """The view of a lease of the caller's project (any, for admins)."""
        with db_api.context_manager.reader.using(ctx) as session:
            return self._view(session, _get_row(session, ctx, lease_id, 'get'))

    def list(self, ctx, params=None):
        """Views of the leases the caller may list, filtered in SQL.

        An administrator (rule ``list_all_projects``) lists every
        project's leases, as in Blazar, the others their own project's;
        ``all_projects`` in ``params`` asks for one or the other.
        ``params`` (the query string) narrows the list by ``status``,
        ``name``, ``project_id`` and the window ``start``..``end`` the
        leases overlap (:func:`parsing.parse_list`).
        """
        query = parsing.parse_list(params or {}, self.clock.now())
        conditions = _list_conditions(query)
        project = _listed_project(ctx, query.get('all_projects'))
        if project is not None:
            # A member's project_id of another project finds nothing.
            conditions.append(LEASES.c.project_id == project)
        statement = sa.select(LEASES).where(*conditions).order_by(
            LEASES.c.created_at, LEASES.c.id)
        with db_api.context_manager.reader.using(ctx) as session:
            return views.lease_views(session, self.plugins,
                                     session.execute(statement).all())

    def list_plugins(self, ctx):
        """The resource types leases may reserve, each with what it is."""
        policy.authorize(ctx, 'get', ctx.project_id, policy.PLUGINS)
        return [views.plugin_view(resource_type, plugin)
                for resource_type, plugin in sorted(self.plugins.items())]

    def update(self, ctx, lease_id, body):
        """Apply ``body`` (Blazar's lease-update request) to a lease.

        The name may always change. A PENDING lease's window may move (its
        start not into the past), an ACTIVE lease's end and before-end
        only; the dates of leases in other statuses stay. The end stays
        after the start and after now. The plugins re-book, in the same
        transaction, every reservation whose window moved or that the
        body names; a refusal changes nothing.

        A change that Nova or Cinder must also make (hosts joining an
        active lease's aggregate, a held-back server's flavor, a reserved
        volume's size) is made after that transaction, with the lease
        UPDATING; if it fails, the lease is changed back and keeps its
        status, and a ``Conflict`` says why.
        """
        request = parsing.parse_update(body, self.clock.now())
        quota = time_quotas.NO_QUOTA_CHECK
        # A rename alone needs neither the plugins nor the checks.
        if set(request) != {'name', 'reservations'} or \
                request['reservations']:
            current, reservations = self._read_for_update(ctx, lease_id)
            self._prepare(ctx, reservations, request['reservations'])
            quota = self._check_update(ctx, current, reservations, request)
        with _unique_name(request.get('name')):
            change = self._update(ctx, lease_id, request, quota)
        view = self._apply(ctx, change)
        self._notify(ctx, notifications.LEASE_UPDATE, self._payload(ctx, view))
        return view

    def delete(self, ctx, lease_id):
        """Delete a lease after its plugins cleaned up.

        The lease is DELETING while the plugins act (outside any
        transaction: they call Nova and Cinder). If one fails, the lease
        goes to ERROR with the reason and a ``PluginError`` is raised.

        A lease found DELETING is one whose delete died half-way (or is
        still under way: the two cannot be told apart): the plugins' clean-up,
        idempotent, runs again. Of two deletes that race, both clean up and
        the one that removes the lease notifies.
        """
        lease, view = self._begin_delete(ctx, lease_id)
        # Read while the lease's rows, which the delete removes, are there.
        payload = self._payload(ctx, view)
        try:
            for reservation in view['reservations']:
                self._plugin(reservation['resource_type']).on_delete(
                    ctx, lease, reservation)
        except Exception as exc:
            reason = 'Deleting the lease failed: %s' % exc
            self._set_error(ctx, lease_id, reason)
            if isinstance(exc, exceptions.PluginError):
                raise
            raise exceptions.PluginError(reason) from exc
        if not _ended(view['reservations']):
            # As in Blazar: the filters hear of a lease that will not
            # reach its end (it may not have started).
            self.enforcement.on_end(ctx, lease, view['reservations'])
        if self._remove(ctx, lease_id):
            self._notify(ctx, notifications.LEASE_DELETE, payload)

    # Enforcement, before the transactions.

    def _check_create(self, ctx, request):
        """Run the create checks; return the transaction's quota check.

        A create from a proposal is checked with the proposal's window
        and reservations.
        """
        if request.get('proposal_id'):
            request = self._proposed_request(ctx, request)
        return self.enforcement.check_create(ctx, request,
                                             request['reservations'])

    def _proposed_request(self, ctx, request):
        with db_api.context_manager.reader.using(ctx) as session:
            row = proposals.find(session, ctx, request['proposal_id'],
                                 self.clock.now())
            given = json.loads(row.reservations)
        reservations = request['reservations'] or [
            (values.pop('resource_type'), values)
            for values in (dict(values) for values in given)]
        return dict(request, start_date=row.start_date,
                    end_date=row.end_date, before_end_date=None,
                    reservations=reservations)

    def _read_for_update(self, ctx, lease_id):
        """The lease (as plugins get it) and its reservation views.

        Read before the update's transaction, for what must not run in
        it: the plugins' lookups and the enforcement checks. The lease is
        as the update will find it unless another change comes first.
        """
        with db_api.context_manager.reader.using(ctx) as session:
            row = _get_row(session, ctx, lease_id, 'update')
            _check_stable(row.status, 'updated')
            return (_lease_dict(session, row),
                    self._view(session, row)['reservations'])

    def _check_update(self, ctx, current, reservations, request):
        """Run the update checks; return the transaction's quota check.

        The quota check runs again in the update's transaction, the
        filters do not. A rename alone is not checked, as in Blazar (the
        caller does not call this for one).
        """
        new = dict(current, **self._new_dates(current, request),
                   name=request.get('name', current['name']))
        changes = {reservation_id: change['values'] for reservation_id,
                   change in request['reservations'].items()}
        return self.enforcement.check_update(ctx, current, new,
                                             reservations, changes)

    # Transactions.

    @_retry
    def _insert(self, ctx, request, quota):
        with db_api.writer(ctx, self.clock) as session:
            _check_name_free(session, ctx.project_id, request['name'])
            proposal = None
            if request.get('proposal_id'):
                proposal, request = self._proposed(session, ctx, request)
            lease = self._insert_lease(session, ctx, request)
            for item, (resource_type, values) in enumerate(
                    request['reservations']):
                hold = proposal and planner.Owner.hold(proposal.id, item,
                                                       None)
                with validation.prefixed('reservations[%d].' % item):
                    self._reserve(session, ctx, lease, resource_type,
                                  values, hold)
            if proposal:
                proposals.release(session, proposal.request_id)
            self._insert_events(session, lease)
            quota.check(session, lease['id'])
            return self._view(session,
                              _get_row(session, ctx, lease['id'], 'get'))

    def _proposed(self, session, ctx, request):
        """The proposal taken and the request it makes.

        The window is the proposal's; so are the reservations when the
        request has none (the lease API's), and those it has (from the
        server and volume hints) must be of the proposal's types.
        """
        now = self.clock.now()
        row, given = proposals.take(session, ctx, request['proposal_id'],
                                    now)
        reservations = request['reservations'] or [
            parsing.reservation(self.plugins, values.pop('resource_type'),
                                values, 'reservations[%d]' % index)
            for index, values in enumerate(dict(values) for values in given)]
        proposed = [values['resource_type'] for values in given]
        wanted = [resource_type for resource_type, _values in reservations]
        if proposed != wanted:
            raise exceptions.InvalidInput(
                'proposal_id', 'proposes %s, not %s'
                % (', '.join(proposed), ', '.join(wanted)))
        made = parsing.lease(request['name'], row.start_date, row.end_date,
                             None, now, request['projects'],
                             request['trust_id'])
        return row, dict(made, reservations=reservations)

    def _insert_lease(self, session, ctx, request):
        now = self.clock.now()
        lease = {
            'id': str(uuid.uuid4()), 'name': request['name'],
            'user_id': ctx.user_id, 'project_id': ctx.project_id,
            'trust_id': request['trust_id'],
            'start_date': request['start_date'],
            'end_date': request['end_date'],
            'before_end_date': request['before_end_date'],
            'status': LeaseStatus.PENDING, 'status_reason': None,
            'degraded': False, 'created_at': now, 'updated_at': None,
        }
        session.execute(LEASES.insert().values(**lease))
        if request['projects']:
            session.execute(LEASE_PROJECTS.insert(), [
                {'lease_id': lease['id'], 'project_id': project}
                for project in request['projects']])
        return dict(lease, projects=request['projects'],
                    starts_later=request['starts_later'])

    def _reserve(self, session, ctx, lease, resource_type, values, hold):
        reservation_id = str(uuid.uuid4())
        session.execute(RESERVATIONS.insert().values(
            id=reservation_id, lease_id=lease['id'],
            resource_type=resource_type, status=ReservationStatus.PENDING,
            missing_resources=False, resources_changed=False,
            created_at=self.clock.now()))
        # Only a create from a proposal passes a hold: plugins of other
        # types need not know of it.
        resource_id = self.plugins[resource_type].reserve(
            session, ctx, lease, reservation_id, values,
            **({'hold': hold} if hold else {}))
        # Still the creation of the row: not an update to be timestamped.
        session.execute(RESERVATIONS.update().where(
            RESERVATIONS.c.id == reservation_id).values(
                resource_id=resource_id, updated_at=None))

    def _insert_events(self, session, lease):
        now = self.clock.now()
        session.execute(LEASE_EVENTS.insert(), [
            {'id': str(uuid.uuid4()), 'lease_id': lease['id'],
             'event_type': event_type, 'time': time,
             'status': EventStatus.UNDONE, 'attempts': 0,
             'created_at': now}
            for event_type, time in self._event_times(lease).items()])

    def _event_times(self, lease):
        """When each event of ``lease`` (a dict of its dates) is due."""
        default_before_end = max(
            lease['start_date'], lease['end_date'] - datetime.timedelta(
                minutes=self.conf.reservation.minutes_before_end_lease))
        return {
            EventType.START_LEASE: lease['start_date'],
            EventType.BEFORE_END_LEASE: (lease['before_end_date'] or
                                         default_before_end),
            EventType.END_LEASE: lease['end_date'],
        }

    def _prepare(self, ctx, reservations, changes):
        """Let the plugins complete the reservation changes (no DB lock).

        What they look up in Nova or Cinder (a flavor's size) is read
        before the writer transaction, which must not wait on them.
        """
        reservations = {reservation['id']: reservation
                        for reservation in reservations}
        for reservation_id, change in changes.items():
            if reservation_id in reservations:
                reservation = reservations[reservation_id]
                with validation.prefixed('reservations[%d].'
                                         % change['index']):
                    change['values'] = self._plugin(
                        reservation['resource_type']).prepare_update(
                            ctx, reservation, change['values'])

    @_retry
    def _update(self, ctx, lease_id, request, quota, undo=False):
        """Write an update; return the :class:`_Change` left to apply.

        :param quota: the update's time-quota check, run in the
            transaction once the plugins re-booked.
        :param undo: the update puts back what an update that failed
            half-way changed: the lease is UPDATING, and its old dates
            need no check against now.
        """
        with db_api.writer(ctx, self.clock) as session:
            row = _get_row(session, ctx, lease_id, 'update')
            if not undo:
                _check_stable(row.status, 'updated')
            old = _lease_dict(session, row)
            reservations = self._view(session, row)['reservations']
            lease = dict(old, **self._new_dates(old, request, undo))
            lease['name'] = request.get('name', old['name'])
            if lease['name'] != old['name']:
                _check_name_free(session, old['project_id'], lease['name'])
            self._write_update(session, old, lease)
            steps = self._rebook(session, ctx, old, lease, reservations,
                                 request['reservations'], undo)
            quota.check(session, lease_id)
            if steps and not undo:
                _set_status(session, row.id, row.status,
                            LeaseStatus.UPDATING, self.clock.now())
            return _Change(
                self._view(session, _get_row(session, ctx, lease_id, 'get')),
                row.status, steps, _undo_request(old, reservations, request))

    def _apply(self, ctx, change):
        """Make the Nova and Cinder side of an update; its final view."""
        if not change.steps:
            return change.view
        lease_id = change.view['id']
        try:
            _run(ctx, change.steps)
        except Exception as exc:
            self._undo(ctx, change, exc)
        return self._settle(ctx, lease_id, change.status)

    def _undo(self, ctx, change, exc):
        """Put a lease back as it was before a failed update; raise."""
        lease_id = change.view['id']
        reason = 'Updating the lease failed: %s' % exc
        LOG.warning('Lease %s: %s; changing it back', lease_id, reason)
        try:
            _run(ctx, self._update(ctx, lease_id, change.undo,
                                   time_quotas.NO_QUOTA_CHECK,
                                   undo=True).steps)
            self._settle(ctx, lease_id, change.status)
        except Exception as undo_exc:
            LOG.exception('Lease %s could not be changed back', lease_id)
            self._set_error(ctx, lease_id, '%s; changing it back failed: %s'
                            % (reason, undo_exc))
            raise exceptions.PluginError(reason) from exc
        # Nova or Cinder refused the change as things are there now.
        raise exceptions.Conflict(reason + '; the lease is unchanged') from exc

    @_retry
    def _settle(self, ctx, lease_id, status):
        """The lease back from UPDATING to ``status``; its view."""
        with db_api.writer(ctx, self.clock) as session:
            _set_status(session, lease_id, LeaseStatus.UPDATING, status,
                        self.clock.now())
            return self._view(session, _get_row(session, ctx, lease_id,
                                                'get'))

    def _new_dates(self, lease, request, undo=False):
        """The lease's dates after ``request``, checked against now.

        An undo puts back dates that were checked when they were set.
        """
        now = self.clock.now()
        window = {key: lease[key] for key in
                  ('start_date', 'end_date', 'before_end_date')}
        if 'start_date' in request:
            window['start_date'] = request['start_date']
        end_field = request.get('end_field', 'end_date')
        window['end_date'] = _shifted_end(lease['end_date'], request)
        if 'before_end_date' in request:
            window['before_end_date'] = request['before_end_date']
        elif window['end_date'] != lease['end_date']:
            # As in Blazar: moving the end resets the before-end event to
            # its default unless the request sets it again.
            window['before_end_date'] = None
        if not undo:
            _check_date_changes(lease, window, now, end_field)
        dates.check_window(
            window['start_date'], window['end_date'],
            window['before_end_date'],
            fields=('start_date', end_field, 'before_end_date'))
        return window

    def _write_update(self, session, old, lease):
        now = self.clock.now()
        result = session.execute(LEASES.update().where(
            LEASES.c.id == old['id'], LEASES.c.status == old['status']
        ).values(name=lease['name'], start_date=lease['start_date'],
                 end_date=lease['end_date'],
                 before_end_date=lease['before_end_date'], updated_at=now))
        if not result.rowcount:
            # The engine moved the lease on since we read it.
            raise exceptions.ConcurrentUpdate()
        for event_type, time in self._event_times(lease).items():
            session.execute(LEASE_EVENTS.update().where(
                LEASE_EVENTS.c.lease_id == old['id'],
                LEASE_EVENTS.c.event_type == event_type,
                LEASE_EVENTS.c.status == EventStatus.UNDONE,
                LEASE_EVENTS.c.time != time).values(time=time, updated_at=now))

    def _rebook(self, session, ctx, old, lease, reservations, changes,
                undo=False):
        """Let the plugins re-book changed reservations or windows.

        Return the steps they left for after the transaction.
        """
        action = 'undo_update' if undo else 'update'
        _check_reservation_ids(reservations, changes)
        window_moved = any(lease[key] != old[key]
                           for key in ('start_date', 'end_date'))
        steps = []
        for reservation in reservations:
            change = changes.get(reservation['id'])
            if change is None and not window_moved:
                continue
            prefix = 'reservations[%d].' % change['index'] if change else ''
            with validation.prefixed(prefix):
                step = getattr(self._plugin(reservation['resource_type']),
                               action)(session, ctx, lease, reservation,
                                       change['values'] if change else {})
            if step is not None:
                steps.append(step)
        return steps

    @_retry
    def _begin_delete(self, ctx, lease_id):
        with db_api.writer(ctx, self.clock) as session:
            row = _get_row(session, ctx, lease_id, 'delete')
            if row.status != LeaseStatus.DELETING:
                _check_stable(row.status, 'deleted')
                _set_status(session, row.id, row.status,
                            LeaseStatus.DELETING, self.clock.now())
                row = _get_row(session, ctx, lease_id, 'delete')
            return _lease_dict(session, row), self._view(session, row)

    @_retry
    def _set_error(self, ctx, lease_id, reason):
        with db_api.writer(ctx, self.clock) as session:
            session.execute(LEASES.update().where(
                LEASES.c.id == lease_id).values(
                    status=LeaseStatus.ERROR, status_reason=reason,
                    updated_at=self.clock.now()))

    @_retry
    def _remove(self, ctx, lease_id):
        with db_api.writer(ctx, self.clock) as session:
            return _delete_rows(session, lease_id)

    def _view(self, session, row):
        return views.lease_views(session, self.plugins, [row])[0]

    def _plugin(self, resource_type):
        return views.plugin_for(self.plugins, resource_type)

    def _payload(self, ctx, view):
        """The notification payload of ``view`` (None when none is sent).

        Read in a transaction of its own: after a create or update was
        committed, before a delete removes the rows.
        """
        if not self.notifier.is_enabled():
            return None
        with db_api.context_manager.reader.using(ctx) as session:
            return notifications.read_payloads(session, self.plugins,
                                               [view])[0]

    def _notify(self, ctx, event_type, payload):
        notifications.notify(self.notifier, ctx, event_type, payload,
                             self.clock.now())


class _Change:
    """An update written: its view, and what is left to do after it.

    :param status: the lease's status before the update.
    :param steps: callables of a context that make the update's Nova and
        Cinder side; idempotent.
    :param undo: the parsed update request that puts the lease back.
    """

    def __init__(self, view, status, steps, undo):
        self.view = view
        self.status = status
        self.steps = steps
        self.undo = undo


def _run(ctx, steps):
    for step in steps:
        step(ctx)


def _undo_request(old, reservations, request):
    """The update request that puts back what ``request`` changes."""
    by_id = {reservation['id']: reservation for reservation in reservations}
    changes = {
        reservation_id: {'index': change['index'], 'values': {
            key: by_id[reservation_id].get(key) for key in change['values']}}
        for reservation_id, change in request['reservations'].items()
        if reservation_id in by_id}
    return dict({key: old[key] for key in
                 ('name', 'start_date', 'end_date', 'before_end_date')},
                reservations=changes)


def _authorize_create(ctx):
    if not ctx.project_id:
        raise exceptions.Forbidden(
            'Creating a lease needs a project-scoped request.')
    policy.authorize(ctx, 'create', ctx.project_id)


# Columns that a lease list's query compares for equality.
_LIST_EQUALS = {'status': LEASES.c.status, 'name': LEASES.c.name,
                'project_id': LEASES.c.project_id}


def _list_conditions(query):
    """SQL conditions of a parsed lease-list query."""
    conditions = [column == query[key]
                  for key, column in _LIST_EQUALS.items() if key in query]
    if 'start' in query:
        conditions.append(LEASES.c.end_date > query['start'])
    if 'end' in query:
        conditions.append(LEASES.c.start_date < query['end'])
    return conditions


def _listed_project(ctx, all_projects):
    """The project whose leases ``ctx`` lists, None for every project.

    Without ``all_projects``, whoever may list every project's does.
    """
    if all_projects is None:
        all_projects = policy.allowed(ctx, 'list_all_projects',
                                      ctx.project_id)
    policy.authorize(ctx, 'list_all_projects' if all_projects else 'list',
                     ctx.project_id)
    return None if all_projects else ctx.project_id


def _name_taken(name):
    return exceptions.Conflict(
        'A lease named %r already exists in this project.' % name)


@contextlib.contextmanager
def _unique_name(name):
    """Report the unique (project_id, name) violation of a race as 409.

    The name is checked before writing; this covers a concurrent request
    that took it between the check and the commit.
    """
    try:
        yield
    except db_exc.DBDuplicateEntry as exc:
        if 'name' not in exc.columns:
            raise
        raise _name_taken(name) from exc


def _check_name_free(session, project_id, name):
    taken = session.execute(sa.select(LEASES.c.id).where(
        LEASES.c.project_id == project_id,
        LEASES.c.name == name)).first()
    if taken:
        raise _name_taken(name)


def _get_row(session, ctx, lease_id, action):
    """The lease row, if policy lets the caller do ``action`` on it.

    A lease the caller may not see is reported as not found, so that
    other projects' leases stay invisible; one it may see but not act on
    (a reader's update) is Forbidden.
    """
    row = session.execute(
        sa.select(LEASES).where(LEASES.c.id == lease_id)).first()
    if row is None or not policy.allowed(ctx, 'get', row.project_id):
        raise exceptions.NotFound(kind='Lease', id=lease_id)
    policy.authorize(ctx, action, row.project_id)
    return row


def _lease_dict(session, row):
    """The lease as plugins get it (:func:`views.lease_dicts`)."""
    return views.lease_dicts(session, [row])[row.id]


def _ended(reservations):
    """Whether the engine ended the lease of ``reservations``."""
    return bool(reservations) and all(
        reservation['status'] == ReservationStatus.DELETED
        for reservation in reservations)


def _check_stable(status, action):
    if status not in LeaseStatus.STABLE:
        raise exceptions.InvalidState(
            'A lease in status %s cannot be %s.' % (status, action))


def _set_status(session, lease_id, current, status, now):
    if not LeaseStatus.can_move(current, status):
        raise exceptions.InvalidState(
            'A lease cannot go from %s to %s.' % (current, status))
    result = session.execute(LEASES.update().where(
        LEASES.c.id == lease_id, LEASES.c.status == current).values(
            status=status, updated_at=now))
    if not result.rowcount:
        raise exceptions.ConcurrentUpdate()


def _delete_rows(session, lease_id):
    """Delete the lease; the schema cascades to every row under it.

    Return whether it was still there.
    """
    result = session.execute(LEASES.delete().where(LEASES.c.id == lease_id))
    return bool(result.rowcount)


def _shifted_end(end, request):
    if request.get('end_date') is not None:
        return request['end_date']
    if 'shift' in request:
        return dates.add(end, request['shift'], request['end_field'])
    return end


def _check_date_changes(lease, window, now, end_field):
    """Which dates may move, given the lease's status and now."""
    moved = [key for key in ('start_date', 'end_date', 'before_end_date')
             if window[key] != lease[key]]
    if not moved:
        return
    if lease['status'] not in (LeaseStatus.PENDING, LeaseStatus.ACTIVE):
        # Blazar's words for its terminated leases, for every status.
        raise exceptions.InvalidState(
            'Terminated leases can only be renamed: the dates of a lease '
            'in status %s cannot change.' % lease['status'])
    if 'start_date' in moved:
        if lease['status'] != LeaseStatus.PENDING:
            raise exceptions.InvalidInput(
                'start_date', 'Cannot modify the start date of already '
                'started leases')
        dates.check_start(window['start_date'], now)
    if 'end_date' in moved:
        dates.check_end(window['end_date'], now, end_field)


def _check_reservation_ids(reservations, changes):
    known = {reservation['id'] for reservation in reservations}
    for reservation_id, change in changes.items():
        if reservation_id not in known:
            raise exceptions.InvalidInput(
                'reservations[%d].id' % change['index'],
                'no reservation %s in this lease' % reservation_id)
