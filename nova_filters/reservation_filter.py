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

"""Nova scheduler filter: reserved hosts only serve their leases.

Enable it in nova.conf::

    [filter_scheduler]
    available_filters = nova.scheduler.filters.all_filters
    available_filters = nova_filters.reservation_filter.ReservationFilter
    enabled_filters = <the usual ones>,ReservationFilter

It reads the reservation pools from the leases DB (``[reservation_database]
connection``) through a per-process cache that costs one small SELECT per
request while no pool changed. A preemptible request (flavor extra spec
``reservation:preemptible=true`` or hint ``preemptible=true``) passes the
hosts that are not closed to it
(:mod:`reservation_ext.planning.preemptible_placement`); one that declares
how long its work runs (flavor extra spec
``reservation:preemptible_runtime`` or hint ``preemptible_runtime``,
seconds; the hint wins) passes only those of them whose reclaim comes
that long from now or later, as the ReservationWeigher reckons it (a
runtime longer than ``[reservation] preemptible_weigher_horizon`` asks
for a host without a booking within the horizon). Both depend on the
bookings and the time: a per-process cache of its own
(:mod:`reservation_ext.planning.preemptible_view`) costs one small SELECT
per request while no booking changed and no booking's time came.
"""

from nova.scheduler import filters
from nova.scheduler import utils
from oslo_log import log as logging

from db import api as db_api
from reservation_ext import clock as clock_mod
from reservation_ext import conf as conf_mod
from reservation_ext import context
from reservation_ext import exceptions
from reservation_ext.leases import hints as lease_hints
from reservation_ext.planning import pool_snapshot
from reservation_ext.planning import preemptible_placement
from reservation_ext.planning import preemptible_view
from reservation_ext.planning import reserved_servers
from reservation_ext.planning import seats

LOG = logging.getLogger(__name__)

HINT = lease_hints.RESERVATION


class _Passing:
    """The hostnames one request may use: ``names``, or all but them."""

    def __init__(self, names, excluded=False):
        self.names = names
        self.excluded = excluded

    def __contains__(self, nodename):
        return (nodename in self.names) != self.excluded

    def select(self, hosts):
        """Return the hosts among ``hosts`` that pass: a set lookup each."""
        names = self.names
        if self.excluded:
            return [host for host in hosts if host.nodename not in names]
        return [host for host in hosts if host.nodename in names]


class ReservationFilter(filters.BaseHostFilter):
    """Keep reserved hosts for the leases that hold them.

    A reserved server (``reserved`` or ``lease_params`` hint) that the
    planner booked a host for passes only that host. Otherwise, a request
    without a ``reservation`` hint passes only hosts outside every
    reservation pool (neither in the free pool nor in a lease). A
    request with ``reservation=<id>`` passes only the hosts of that active
    reservation, and only when it comes from the lease's project or a
    project the lease is shared with. A server booted with an
    instance-capacity reservation's flavor passes only the hosts of the
    seats its boot took. A preemptible request without reservation hints
    passes every host that is not closed to preemptibles, and when it
    declares a runtime only those where it would end before its reclaim.
    A host that recycles passes no request.

    A rebuild keeps its host whatever the pools became since the build
    (``RUN_ON_REBUILD``): the server is there already.
    """

    # Reservations do not change between the instances of one request.
    run_filter_once_per_request = True
    RUN_ON_REBUILD = False

    def __init__(self, clock=clock_mod.SYSTEM):
        db_api.configure(conf_mod.CONF)
        self._pools = pool_snapshot.SnapshotCache()
        self._open = preemptible_view.ViewCache(preemptible_view.open_now)
        self._clock = clock

    def filter_all(self, filter_obj_list, spec_obj):
        """Return the hosts that pass, deciding once for the whole request.

        Nova's ``BaseHostFilter.filter_all`` would check for a rebuild and
        call :meth:`host_passes` host by host (about 2 µs a host); this
        makes the same rebuild check (``RUN_ON_REBUILD``, as Nova's
        ``_filter_one`` does) and the decision once, then one set lookup
        per host.
        """
        if not self.RUN_ON_REBUILD and utils.request_is_rebuild(spec_obj):
            return list(filter_obj_list)
        return self._decide(spec_obj).select(filter_obj_list)

    def host_passes(self, host_state, spec_obj):
        """Say whether one host passes (Nova calls :meth:`filter_all`)."""
        return host_state.nodename in self._decide(spec_obj)

    def _decide(self, spec_obj):
        """Return the :class:`_Passing` hosts of one request."""
        if is_preemptible_request(spec_obj):
            return self._open_to_preemptibles(_runtime(spec_obj))
        booked = _booked_host(spec_obj)
        snapshot = self._pools.get()
        seated = _seat_hosts(spec_obj)
        if seated is not None:
            return _Passing(frozenset(seated) - snapshot.recycling)
        if booked is not None:
            return _Passing(frozenset([booked]) - snapshot.recycling)
        reservation_id = spec_obj.get_scheduler_hint(HINT)
        if reservation_id is None:
            return _Passing(snapshot.reservable, excluded=True)
        allowed = snapshot.hosts_for(reservation_id, spec_obj.project_id)
        if not allowed:
            LOG.debug('Reservation %s is not active or not usable by '
                      'project %s.', reservation_id, spec_obj.project_id)
        return _Passing(allowed)

    def _open_to_preemptibles(self, runtime):
        """The hosts open to a preemptible that runs ``runtime`` seconds.

        None: as long as it may. A host missing from ``left`` has no
        reclaim within the horizon: it holds any runtime.
        """
        now = self._clock.now()
        options = preemptible_view.settings(conf_mod.CONF.reservation)
        view = self._open.get(now, options)
        if runtime is None:
            return _Passing(view.closed, excluded=True)
        # The seconds left were counted at the answer's time; a runtime
        # longer than the horizon needs no reclaim within it.
        need = min(runtime + (now - view.taken_at).total_seconds(),
                   options.horizon)
        short = {name for name, left in view.left.items() if left < need}
        return _Passing(view.closed | short, excluded=True)


def is_preemptible_request(spec_obj):
    """Say whether a request is preemptible and asks for no reservation.

    A reservation hint wins: the server runs on what its lease holds.
    """
    hint = preemptible_placement.HINT
    return preemptible_placement.is_preemptible(
        spec_obj.flavor.extra_specs, {hint: spec_obj.get_scheduler_hint(hint)}
    ) and all(spec_obj.get_scheduler_hint(booking) is None
              for booking in lease_hints.BOOKING_HINTS)


def _runtime(spec_obj):
    """Return the runtime a preemptible request declares, or None.

    nova-api refuses a bad hint, and a bad extra spec when it is set; a
    flavor's value that came before that validation counts as none, as
    before runtimes were declared.
    """
    hint = preemptible_placement.RUNTIME_HINT
    try:
        return preemptible_placement.runtime(
            spec_obj.flavor.extra_specs,
            {hint: spec_obj.get_scheduler_hint(hint)})
    except exceptions.InvalidInput as exc:
        LOG.warning('A preemptible request declares no runtime: %s',
                    exc.message)
        return None


def _booked_host(spec_obj):
    """Return the host booked for a reserved server, or None.

    Only servers booted with reservation hints can have one, so other
    requests cost no query.
    """
    if all(spec_obj.get_scheduler_hint(hint) is None
           for hint in (lease_hints.RESERVED, lease_hints.LEASE_PARAMS)):
        return None
    with db_api.context_manager.reader.using(
            context.get_admin_context()) as session:
        return reserved_servers.booked_host(session, spec_obj.instance_uuid)


def _seat_hosts(spec_obj):
    """Return the hosts of the seats of a capacity-flavor boot, or None.

    Only a flavor with the extra spec ``reservation:id`` (or Blazar's,
    on a started reservation imported from Blazar), or a server of a
    stack reservation's stack (Heat's ``heat_path_in_stack`` hint names
    it), has seats, so other requests cost no query. The server's own
    seat, and those its boot took (several servers of one boot are
    scheduled with the first one's spec; Nova narrows the hosts from one
    to the next).
    """
    extra_specs = spec_obj.flavor.extra_specs or {}
    reservation_id = (extra_specs.get(seats.FLAVOR_SPEC) or
                      extra_specs.get(seats.BLAZAR_FLAVOR_SPEC) or
                      seats.stack_reservation_id(
                          spec_obj.get_scheduler_hint(seats.STACK_HINT)))
    if reservation_id is None:
        return None
    taken = spec_obj.get_scheduler_hint(seats.HINT) or []
    with db_api.context_manager.reader.using(
            context.get_admin_context()) as session:
        return seats.seat_hosts(
            session, reservation_id, spec_obj.instance_uuid,
            [taken] if isinstance(taken, str) else taken)
