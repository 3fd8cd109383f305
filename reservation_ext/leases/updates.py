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

"""The steps of a lease update, and of its undo when Nova or Cinder refuse.

:meth:`LeaseService.update <reservation_ext.leases.service.LeaseService.
update>` runs them in order:

1. :meth:`LeaseUpdates.check`, before any transaction: the plugins
   complete the reservation changes (what they look up in Nova or
   Cinder), and the enforcement checks the new lease.
2. :meth:`LeaseUpdates.write`, one writer transaction: the lease's name
   and dates, its events' times, and the plugins re-booking every
   reservation whose window moved or that the request names. If the
   plugins left steps for Nova or Cinder, the lease is UPDATING.
3. :meth:`LeaseUpdates.apply`, after it: the steps run; if one fails,
   the update is undone (written again with the old values, its steps
   run) and the lease settles back in its status with a ``Conflict``
   (an ERROR, if the undo fails too).
"""

from oslo_log import log as logging

from db import api as db_api
from reservation_ext import dates
from reservation_ext.enforcement import time_quotas
from reservation_ext import exceptions
from reservation_ext.leases import lease_rows
from reservation_ext.leases import views
from reservation_ext.states import LeaseStatus
from reservation_ext.store import leases as store_leases
from reservation_ext import validation

LOG = logging.getLogger(__name__)


class LeaseUpdates:
    """The update steps of the leases, with the service's collaborators.

    ``plugins`` is ``{resource_type: ResourcePlugin}``; ``enforcement``
    the :class:`~reservation_ext.enforcement.enforcer.Enforcement` that
    checks every update but a rename.
    """

    def __init__(self, conf, clock, plugins, enforcement):
        self.conf = conf
        self.clock = clock
        self.plugins = plugins
        self.enforcement = enforcement

    # Before the transaction.

    def check(self, ctx, lease_id, request):
        """Complete and check ``request``; return the transaction's quota.

        The plugins complete the reservation changes in ``request``
        (no DB lock is held while they look things up); the quota check
        runs again in the update's transaction, the filters do not. A
        rename alone is not checked, as in Blazar (the caller does not
        call this for one).
        """
        current, reservations = self._read(ctx, lease_id)
        self._prepare(ctx, reservations, request['reservations'])
        new = dict(current, **self._new_dates(current, request),
                   name=request.get('name', current['name']))
        changes = {reservation_id: change['values'] for reservation_id,
                   change in request['reservations'].items()}
        return self.enforcement.check_update(ctx, current, new,
                                             reservations, changes)

    def _read(self, ctx, lease_id):
        """Read the lease (as plugins get it) and its reservation views.

        Read before the update's transaction, for what must not run in
        it: the plugins' lookups and the enforcement checks. The lease is
        as the update will find it unless another change comes first.
        """
        with db_api.context_manager.reader.using(ctx) as session:
            row = lease_rows.get_row(session, ctx, lease_id, 'update')
            lease_rows.check_stable(row.status, 'updated')
            return (lease_rows.lease_dict(session, row),
                    self._view(session, row)['reservations'])

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

    # The transaction.

    @lease_rows.retry
    def write(self, ctx, lease_id, request, quota, undo=False):
        """Write an update; return the :class:`Change` left to apply.

        :param quota: the update's time-quota check, run in the
            transaction once the plugins re-booked.
        :param undo: the update puts back what an update that failed
            half-way changed: the lease is UPDATING, and its old dates
            need no check against now.
        """
        with db_api.writer(ctx, self.clock) as session:
            row = lease_rows.get_row(session, ctx, lease_id, 'update')
            if not undo:
                lease_rows.check_stable(row.status, 'updated')
            old = lease_rows.lease_dict(session, row)
            reservations = self._view(session, row)['reservations']
            lease = dict(old, **self._new_dates(old, request, undo))
            lease['name'] = request.get('name', old['name'])
            if lease['name'] != old['name']:
                lease_rows.check_name_free(session, old['project_id'],
                                           lease['name'])
            self._write_lease(session, old, lease)
            steps = self._rebook(session, ctx, old, lease, reservations,
                                 request['reservations'], undo)
            quota.check(session, lease_id)
            if steps and not undo:
                lease_rows.move_status(session, row.id, row.status,
                                       LeaseStatus.UPDATING,
                                       self.clock.now())
            return Change(
                self._view(session, lease_rows.get_row(session, ctx,
                                                       lease_id, 'get')),
                row.status, steps, _undo_request(old, reservations, request))

    def _new_dates(self, lease, request, undo=False):
        """Return the lease's dates after ``request``, checked against now.

        An undo puts back dates that were checked when they were set.
        """
        now = self.clock.now()
        new = {key: lease[key] for key in
               ('start_date', 'end_date', 'before_end_date')}
        if 'start_date' in request:
            new['start_date'] = request['start_date']
        end_field = request.get('end_field', 'end_date')
        new['end_date'] = _shifted_end(lease['end_date'], request)
        if 'before_end_date' in request:
            new['before_end_date'] = request['before_end_date']
        elif new['end_date'] != lease['end_date']:
            # As in Blazar: moving the end resets the before-end event to
            # its default unless the request sets it again.
            new['before_end_date'] = None
        if not undo:
            _check_date_changes(lease, new, now, end_field)
        dates.check_window(
            new['start_date'], new['end_date'], new['before_end_date'],
            fields=('start_date', end_field, 'before_end_date'))
        return new

    def _write_lease(self, session, old, lease):
        """Write the lease's name and dates, and retime its events."""
        now = self.clock.now()
        if not store_leases.update_lease(session, old['id'], old['status'],
                                         lease, now):
            # The engine moved the lease on since we read it.
            raise exceptions.ConcurrentUpdate()
        store_leases.retime_events(
            session, old['id'], lease_rows.event_times(self.conf, lease), now)

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

    # After the transaction.

    def apply(self, ctx, change):
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
            _run(ctx, self.write(ctx, lease_id, change.undo,
                                 time_quotas.NO_QUOTA_CHECK,
                                 undo=True).steps)
            self._settle(ctx, lease_id, change.status)
        except Exception as undo_exc:
            LOG.exception('Lease %s could not be changed back', lease_id)
            lease_rows.set_error(ctx, self.clock, lease_id,
                                 '%s; changing it back failed: %s'
                                 % (reason, undo_exc))
            raise exceptions.PluginError(reason) from exc
        # Nova or Cinder refused the change as things are there now.
        raise exceptions.Conflict(reason + '; the lease is unchanged') from exc

    @lease_rows.retry
    def _settle(self, ctx, lease_id, status):
        """Move the lease back from UPDATING to ``status``; return its view."""
        with db_api.writer(ctx, self.clock) as session:
            lease_rows.move_status(session, lease_id, LeaseStatus.UPDATING,
                                   status, self.clock.now())
            return self._view(session, lease_rows.get_row(
                session, ctx, lease_id, 'get'))

    def _view(self, session, row):
        return views.lease_views(session, self.plugins, [row])[0]

    def _plugin(self, resource_type):
        return views.plugin_for(self.plugins, resource_type)


class Change:
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
    """Return the update request that puts back what ``request`` changes."""
    by_id = {reservation['id']: reservation for reservation in reservations}
    changes = {
        reservation_id: {'index': change['index'], 'values': {
            key: by_id[reservation_id].get(key) for key in change['values']}}
        for reservation_id, change in request['reservations'].items()
        if reservation_id in by_id}
    return dict({key: old[key] for key in
                 ('name', 'start_date', 'end_date', 'before_end_date')},
                reservations=changes)


def _shifted_end(end, request):
    if request.get('end_date') is not None:
        return request['end_date']
    if 'shift' in request:
        return dates.add(end, request['shift'], request['end_field'])
    return end


def _check_date_changes(lease, new, now, end_field):
    """Check which dates may move, given the lease's status and now.

    :param new: the lease's dates after the update.
    """
    moved = [key for key in ('start_date', 'end_date', 'before_end_date')
             if new[key] != lease[key]]
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
        dates.check_start(new['start_date'], now)
    if 'end_date' in moved:
        dates.check_end(new['end_date'], now, end_field)


def _check_reservation_ids(reservations, changes):
    known = {reservation['id'] for reservation in reservations}
    for reservation_id, change in changes.items():
        if reservation_id not in known:
            raise exceptions.InvalidInput(
                'reservations[%d].id' % change['index'],
                'no reservation %s in this lease' % reservation_id)
