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

What a new reservation shows from its creation on and Nova or Cinder
make (an instance-capacity reservation's flavor and server group) is made
before the create's transaction, so that no engine sees a lease half-made,
and undone when the create fails (``prepare_create`` and ``undo_create``
of :class:`~reservation_ext.plugins.base.ResourcePlugin`).

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
import json
import uuid

from oslo_db import exception as db_exc
from oslo_log import log as logging
import sqlalchemy as sa

from db import api as db_api
from db import tables
from reservation_ext.enforcement import enforcer
from reservation_ext.enforcement import time_quotas
from reservation_ext import exceptions
from reservation_ext.leases import lease_rows
from reservation_ext.leases import notifications
from reservation_ext.leases import parsing
from reservation_ext.leases import proposals
from reservation_ext.leases import updates
from reservation_ext.leases import views
from reservation_ext.planning import planner
from reservation_ext import policy
from reservation_ext.states import LeaseStatus
from reservation_ext.states import ReservationStatus
from reservation_ext.store import leases as store_leases
from reservation_ext import validation

LOG = logging.getLogger(__name__)

LEASES = tables.LEASES


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
        self.updates = updates.LeaseUpdates(conf, clock, plugins,
                                            self.enforcement)

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
        request = self._with_proposed(ctx, request)
        quota = self._check_create(ctx, request)
        request = self._prepare(ctx, request)
        try:
            with _unique_name(request['name']):
                view = self._insert(ctx, request, quota)
        except Exception:
            self._undo_prepared(ctx, request['reservation_ids'],
                                request['reservations'])
            raise
        self._notify(ctx, notifications.LEASE_CREATE, self._payload(ctx, view))
        return view

    def _with_proposed(self, ctx, request):
        """Return a create from a proposal with the proposal's reservations.

        Parsed before the transaction, so that their plugins'
        prepare_create runs as for any create (a stack's preview and
        trust, as the caller); the transaction checks that the proposal,
        taken then, proposes them. A request with reservations of its
        own (the server and volume hints') keeps them.
        """
        if not request.get('proposal_id') or request['reservations']:
            return request
        with db_api.context_manager.reader.using(ctx) as session:
            given = json.loads(proposals.find(
                session, ctx, request['proposal_id'],
                self.clock.now()).reservations)
        return dict(request, reservations=[
            parsing.reservation(self.plugins, values.pop('resource_type'),
                                values, 'reservations[%d]' % index)
            for index, values in enumerate(dict(values)
                                           for values in given)])

    def _prepare(self, ctx, request):
        """Give each reservation its id and run its plugin's prepare_create.

        Return the request with the prepared values and the ids
        (``reservation_ids``). What was made is undone when a plugin
        fails.
        """
        projects = list(dict.fromkeys([ctx.project_id,
                                       *request['projects']]))
        ids, prepared = [], []
        try:
            for item, (resource_type, values) in enumerate(
                    request['reservations']):
                ids.append(str(uuid.uuid4()))
                # Undone with the values it was given if it raises.
                prepared.append((resource_type, values))
                with validation.prefixed('reservations[%d].' % item):
                    prepared[-1] = (resource_type, self.plugins[
                        resource_type].prepare_create(ctx, ids[-1], values,
                                                      projects))
        except Exception:
            self._undo_prepared(ctx, ids, prepared)
            raise
        return dict(request, reservations=prepared, reservation_ids=ids)

    def _undo_prepared(self, ctx, reservation_ids, reservations):
        """Undo the plugins' prepare_create of a create that failed."""
        for reservation_id, (resource_type, values) in zip(reservation_ids,
                                                           reservations):
            try:
                self.plugins[resource_type].undo_create(
                    ctx, reservation_id, values)
            except Exception:
                # The create's own failure is what the caller must hear.
                LOG.exception('Undoing reservation %s of a failed lease '
                              'create failed', reservation_id)

    def proposal_window(self, ctx, proposal_id):
        """Get ``(start, end)`` of the caller's live proposal ``proposal_id``.

        For the server and volume hints, which decide from the window
        what to do before the lease is written (and the proposal taken).
        """
        with db_api.context_manager.reader.using(ctx) as session:
            row = proposals.find(session, ctx, proposal_id, self.clock.now())
            return row.start_date, row.end_date

    def get(self, ctx, lease_id):
        """Show a lease of the caller's project (any lease, for admins)."""
        with db_api.context_manager.reader.using(ctx) as session:
            return self._view(session, lease_rows.get_row(session, ctx,
                                                          lease_id, 'get'))

    def list(self, ctx, params=None):
        """List views of the leases the caller may list, filtered in SQL.

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
        """List the resource types leases may reserve, each with what it is."""
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
        status, and a ``Conflict`` says why. The steps are in
        :mod:`reservation_ext.leases.updates`.
        """
        request = parsing.parse_update(body, self.clock.now())
        quota = time_quotas.NO_QUOTA_CHECK
        # A rename alone needs neither the plugins nor the checks.
        if set(request) != {'name', 'reservations'} or \
                request['reservations']:
            quota = self.updates.check(ctx, lease_id, request)
        with _unique_name(request.get('name')):
            change = self.updates.write(ctx, lease_id, request, quota)
        view = self.updates.apply(ctx, change)
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
            lease_rows.set_error(ctx, self.clock, lease_id, reason)
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

    # Transactions.

    @lease_rows.retry
    def _insert(self, ctx, request, quota):
        with db_api.writer(ctx, self.clock) as session:
            lease_rows.check_name_free(session, ctx.project_id,
                                       request['name'])
            proposal = None
            if request.get('proposal_id'):
                proposal, request = self._proposed(session, ctx, request)
            lease = self._insert_lease(session, ctx, request)
            ids = request.get('reservation_ids') or [None] * len(
                request['reservations'])
            for item, (resource_type, values) in enumerate(
                    request['reservations']):
                hold = proposal and planner.Owner.hold(proposal.id, item,
                                                       None)
                with validation.prefixed('reservations[%d].' % item):
                    self._reserve(session, ctx, lease, resource_type,
                                  values, hold, ids[item])
            if proposal:
                proposals.release(session, proposal.request_id)
            self._insert_events(session, lease)
            quota.check(session, lease['id'])
            return self._view(session, lease_rows.get_row(
                session, ctx, lease['id'], 'get'))

    def _proposed(self, session, ctx, request):
        """Return the proposal taken and the request it makes.

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
        # The prepared ids go with the request's own reservations only.
        return row, dict(made, reservations=reservations,
                         reservation_ids=request['reservations'] and
                         request.get('reservation_ids'))

    def _insert_lease(self, session, ctx, request):
        lease = store_leases.add_lease(session, {
            'name': request['name'], 'user_id': ctx.user_id,
            'project_id': ctx.project_id, 'trust_id': request['trust_id'],
            'start_date': request['start_date'],
            'end_date': request['end_date'],
            'before_end_date': request['before_end_date']}, self.clock.now())
        store_leases.add_projects(session, lease['id'], request['projects'])
        return dict(lease, projects=request['projects'],
                    starts_later=request['starts_later'])

    def _reserve(self, session, ctx, lease, resource_type, values, hold,
                 reservation_id):
        reservation_id = store_leases.add_reservation(
            session, lease['id'], resource_type, self.clock.now(),
            reservation_id)
        # Only a create from a proposal passes a hold: plugins of other
        # types need not know of it.
        resource_id = self.plugins[resource_type].reserve(
            session, ctx, lease, reservation_id, values,
            **({'hold': hold} if hold else {}))
        store_leases.set_resource(session, reservation_id, resource_id)

    def _insert_events(self, session, lease):
        store_leases.add_events(session, lease['id'],
                                lease_rows.event_times(self.conf, lease),
                                self.clock.now())

    @lease_rows.retry
    def _begin_delete(self, ctx, lease_id):
        with db_api.writer(ctx, self.clock) as session:
            row = lease_rows.get_row(session, ctx, lease_id, 'delete')
            if row.status != LeaseStatus.DELETING:
                lease_rows.check_stable(row.status, 'deleted')
                lease_rows.move_status(session, row.id, row.status,
                                       LeaseStatus.DELETING, self.clock.now())
                row = lease_rows.get_row(session, ctx, lease_id, 'delete')
            return lease_rows.lease_dict(session, row), self._view(session,
                                                                   row)

    @lease_rows.retry
    def _remove(self, ctx, lease_id):
        with db_api.writer(ctx, self.clock) as session:
            return store_leases.delete_lease(session, lease_id)

    def _view(self, session, row):
        return views.lease_views(session, self.plugins, [row])[0]

    def _plugin(self, resource_type):
        return views.plugin_for(self.plugins, resource_type)

    def _payload(self, ctx, view):
        """Make the notification payload of ``view`` (None when none is sent).

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


def _authorize_create(ctx):
    if not ctx.project_id:
        raise exceptions.Forbidden(
            'Creating a lease needs a project-scoped request.')
    policy.authorize(ctx, 'create', ctx.project_id)


# Columns that a lease list's query compares for equality.
_LIST_EQUALS = {'status': LEASES.c.status, 'name': LEASES.c.name,
                'project_id': LEASES.c.project_id}


def _list_conditions(query):
    """Return the SQL conditions of a parsed lease-list query."""
    conditions = [column == query[key]
                  for key, column in _LIST_EQUALS.items() if key in query]
    if 'start' in query:
        conditions.append(LEASES.c.end_date > query['start'])
    if 'end' in query:
        conditions.append(LEASES.c.start_date < query['end'])
    return conditions


def _listed_project(ctx, all_projects):
    """Return the project whose leases ``ctx`` lists, None for every project.

    Without ``all_projects``, whoever may list every project's does.
    """
    if all_projects is None:
        all_projects = policy.allowed(ctx, 'list_all_projects',
                                      ctx.project_id)
    policy.authorize(ctx, 'list_all_projects' if all_projects else 'list',
                     ctx.project_id)
    return None if all_projects else ctx.project_id


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
        raise lease_rows.name_taken(name) from exc


def _ended(reservations):
    """Say whether the engine ended the lease of ``reservations``."""
    return bool(reservations) and all(
        reservation['status'] == ReservationStatus.DELETED
        for reservation in reservations)
