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

"""The resource plugin interface.

A plugin owns one resource type: it validates the type's part of a lease
request, books the resources inside the lease-create transaction (so that
a lease is only created when its resources are guaranteed), shows the
type's fields in lease views, makes what the reservation shows from its
creation (:meth:`prepare_create`), and acts on Nova or Cinder when the engine
runs the lease's events.

Engine actions (:meth:`on_start`, :meth:`before_end`, :meth:`on_end`,
:meth:`on_delete`, :meth:`run_pending`, :meth:`on_heal`) run outside any
DB transaction and must be idempotent: an engine may die half-way and
another engine runs the same action again.
Raise :class:`reservation_ext.exceptions.PluginError` (or any exception) on
failure; the engine retries with backoff and records the reason.

``lease`` and ``reservation`` arguments are plain dicts: the lease's
columns (dates as naive UTC datetimes) plus ``projects`` (and in
:meth:`reserve` ``starts_later``: whether the lease starts after the
request); a reservation view with the type's fields from
:meth:`get_details` merged in.

Plugins act on Nova, Cinder and Neutron through the clients they are
built with
(:class:`reservation_ext.clients.plugin_clients.PluginClients`).
"""

import abc

from reservation_ext.clients import plugin_clients
from reservation_ext import dates
from reservation_ext import exceptions
from reservation_ext.planning import planner
from reservation_ext.states import ReservationStatus


class ResourcePlugin(metaclass=abc.ABCMeta):
    """Define what a resource plugin does; the base class of every plugin.

    ``clients`` has the ``nova`` and ``cinder`` clients to act through;
    by default the service user's.
    """

    def __init__(self, conf, clock, clients=None):
        self.conf = conf
        self.clock = clock
        self.clients = clients or plugin_clients.PluginClients(conf)

    @property
    def nova(self):
        """Return the Nova client the plugin was built with.

        In nova-api it acts in process
        (:class:`reservation_ext.nova_api.server_middleware.InProcessNova`).
        """
        return self.clients.nova

    @property
    def cinder(self):
        """Return the Cinder client the plugin was built with.

        In cinder-api it acts in process
        (:class:`cinder_ext.extension.InProcessCinder`).
        """
        return self.clients.cinder

    def busy(self, **ignore):
        """Return the planner's busy test as of now.

        A :class:`~reservation_ext.planning.planner.Busy` with
        ``[reservation] cleaning_time`` and the ``[power]`` preference;
        ``ignore`` names allocations not to count (``ignore_reservation``,
        ``ignore_proposal``).
        """
        return planner.Busy.from_conf(self.clock.now(), self.conf, **ignore)

    @abc.abstractmethod
    def validate(self, values):
        """Check a reservation request and return its normalized values.

        ``values`` is the request's reservation dict without
        ``resource_type``. Raise ``InvalidInput(field, reason)`` with the
        field's name as the user wrote it; the caller prefixes the
        reservation's position.
        """

    def validate_proposal(self, values):
        """Check a reservation of a schedule proposals request.

        As :meth:`validate`, for the fields that say what capacity is
        wanted. By default the type cannot be proposed.
        """
        raise exceptions.InvalidInput(
            'resource_type', 'no schedule proposals for this type')

    def prepare_proposal(self, ctx, values):
        """Complete a reservation of a proposals request before its search.

        ``values`` as :meth:`validate_proposal` returned them. Runs with
        the request context, outside any transaction, before the one that
        finds and holds the windows: what another service must say of the
        request, as the caller (Heat's preview of a stack), is asked
        here. Return the values :meth:`timeline` gets; by default
        ``values``.
        """
        return values

    def validate_query(self, values):
        """Check the fields of an availability query of the type.

        By default as :meth:`validate_proposal`.
        """
        return self.validate_proposal(values)

    def timeline(self, session, values, span, busy, for_update=False):
        """Return the timeline of the capacity a request may use.

        ``values`` are as :meth:`validate_proposal` returned them. A
        :mod:`reservation_ext.planning.timelines` timeline over the
        :class:`~reservation_ext.planning.timelines.Span` ``span``, read
        in ``session`` with the planner's ``busy`` test. Raise
        ``InvalidInput`` when the request can never fit, whenever it
        starts.

        :param for_update: holds will be written from it in this (writer)
            transaction: take the locks that serialize such writers.
        """
        raise NotImplementedError()

    @abc.abstractmethod
    def reserve(self, session, ctx, lease, reservation_id, values,
                hold=None):
        """Book the resources for the lease window, in ``session``.

        Runs inside the lease-create transaction, after the lease and
        reservation rows exist: write the type's record and its
        allocations. Raise ``NotEnoughResources`` (409) when the window
        cannot be served. Return the reservation's ``resource_id`` (or
        None).

        :param hold: when the lease is made from a schedule proposal, the
            :class:`~reservation_ext.planning.planner.Owner` of what the
            proposal holds for this reservation: book exactly that,
            ignoring the proposal's holds. The caller deletes them.
        """

    @abc.abstractmethod
    def get_details(self, session, reservation_ids):
        """Return ``{reservation_id: {field: value}}`` for lease views."""

    def prepare_update(self, ctx, reservation, values):
        """Complete an update's ``values`` before the DB is locked.

        What the update needs from Nova or Cinder (a flavor's size) is
        looked up here. Return the values :meth:`update` gets.
        """
        return values

    def update(self, session, ctx, lease, reservation, values):
        """Re-book for a changed window (``lease`` has the new dates).

        ``values`` holds the changed fields of this reservation (possibly
        empty), as :meth:`prepare_update` returned them. Raise
        ``NotEnoughResources`` when the new window cannot be served; the
        caller rolls everything back.

        Return None, or the step (a callable of a request context) that
        makes the change in Nova or Cinder once the transaction is
        committed; the lease is UPDATING meanwhile. A step must be
        idempotent: when one fails, the lease is updated back to its old
        values and their steps run.
        """

    def undo_update(self, session, ctx, lease, reservation, values):
        """Put back the old ``values`` after an update's step failed.

        As :meth:`update`, with the reservation as the update left it;
        by default the same re-booking.
        """
        return self.update(session, ctx, lease, reservation, values)

    def prepare_create(self, ctx, reservation_id, values, projects):
        """Make what the reservation shows from its creation; return values.

        Runs before the create's transaction, outside any transaction,
        with the reservation's id (what is made may be named after it):
        what Nova or Cinder makes here exists before anyone can see the
        lease, so that an engine never starts a lease half-made. Return
        the values :meth:`reserve` gets (with the ids of what was made).
        Must be idempotent. If the create fails later, or this raises,
        :meth:`undo_create` undoes it. By default nothing is made.

        :param projects: the lease's projects, its owner's first.
        """
        return values

    def undo_create(self, ctx, reservation_id, values):
        """Undo :meth:`prepare_create` (``values`` as it returned them).

        Also called with the values it was given when it raised. What is
        gone already is fine. By default nothing.
        """

    @abc.abstractmethod
    def on_start(self, ctx, lease, reservation):
        """Make the reserved resources available to the lease's owner."""

    def before_end(self, ctx, lease, reservation):
        """Act shortly before the end (the notification is sent anyway)."""

    @abc.abstractmethod
    def on_end(self, ctx, lease, reservation):
        """Reclaim the resources as the reservation's ``on_end`` says.

        May return the names of the lease events that the end began (e.g.
        ``['grace_period_start']``): the engine then sends a
        ``lease.event.<name>`` notification for each, after
        ``lease.event.end_lease``.
        """

    def run_pending(self, ctx):
        """Do the work that is due outside of the lease events.

        Every engine calls it at every poll, so any number of engines may
        run it at once: an implementation claims what it works on in the
        DB, and leaves what fails to a later poll. Return how many pieces
        of work it finished (the engine polls again at once while there
        is work). By default there is none.
        """
        return 0

    def heal_request(self, reservation):
        """Return what replaces the reservation's bookings on a failed host.

        A :class:`~reservation_ext.planning.healing.Request` (the request's
        conditions and sizes) with which the engine's host monitor looks
        for a free replacement host, or None when the type cannot move
        its bookings: the reservation then misses what the failed host
        held, and its lease is degraded. By default None.
        """
        return None

    def on_heal(self, ctx, lease, reservation, moves):
        """Show Nova the moved bookings of a started reservation.

        ``moves``: ``(failed, replacement)`` compute service hosts, one
        pair per booking moved. Called outside any transaction after the
        move was committed, again by a later poll if it fails: it must be
        idempotent. By default nothing.
        """

    def on_delete(self, ctx, lease, reservation):
        """Clean up when a lease is deleted (its rows go afterwards).

        By default a started, unfinished lease is ended as at its end.
        """
        if reservation['status'] == ReservationStatus.ACTIVE:
            self.on_end(ctx, lease, reservation)

    def billing_resources(self, session, reservations):
        """Return what each reservation holds, with the sizes to rate it by.

        ``reservations`` are views of this type's reservations, of any
        number of leases. Return ``{reservation_id: [resource, ...]}``,
        each resource a dict with the fields that
        :data:`reservation_ext.leases.notification_schema.RESOURCES` lists
        for the type, read in one query (or none) whatever the number of
        reservations: the lease notifications carry them. By default a
        type has nothing to rate.
        """
        return {}


def check_unchanged(values, resource_type):
    """Refuse an update that changes a reservation's own fields.

    :param values: the fields of the reservation that an update changes.
    :raises InvalidInput: naming the first of them.
    """
    if values:
        raise exceptions.InvalidInput(
            sorted(values)[0], 'cannot be changed on a %s reservation; '
            'create a new lease instead' % resource_type)


def blocked_extension(exc, latest, lease):
    """Return ``exc``, saying how far the lease could be extended, if at all.

    :param latest: the latest end the lease's resources allow (None: no
        limit); said when it lies between the lease's start and the end
        the update asked for.
    """
    if latest is None or not lease['start_date'] < latest < lease[
            'end_date']:
        return exc
    return exceptions.NotEnoughResources(
        '%s The lease can be extended until %s at the latest.'
        % (exc.message, latest.strftime(dates.BLAZAR_DATE_FORMAT)))
