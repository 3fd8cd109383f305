"""Nova scheduler filter: reserved hosts only serve their leases.

Enable it in nova.conf::

    [filter_scheduler]
    available_filters = nova.scheduler.filters.all_filters
    available_filters = nova_filters.reservation_filter.ReservationFilter
    enabled_filters = <the usual ones>,ReservationFilter

It reads the reservation pools from the leases DB (``[reservation_database]
connection``) through a per-process cache that costs one small SELECT per
request while no pool changed.
"""

from nova.scheduler import filters
from oslo_log import log as logging

from db import api as db_api
from reservation_ext import conf as conf_mod
from reservation_ext import context
from reservation_ext.leases import hints as lease_hints
from reservation_ext.nova_api import server_records
from reservation_ext.planning import pool_snapshot

LOG = logging.getLogger(__name__)

HINT = 'reservation'


class ReservationFilter(filters.BaseHostFilter):
    """Keep reserved hosts for the leases that hold them.

    A reserved server (``reserved`` or ``lease_params`` hint) that the
    planner booked a host for passes only that host. Otherwise, a request
    without a ``reservation`` hint passes only hosts outside every
    reservation pool (neither in the free pool nor in a lease). A
    request with ``reservation=<id>`` passes only the hosts of that active
    reservation, and only when it comes from the lease's project or a
    project the lease is shared with.
    """

    # Reservations do not change between the instances of one request.
    run_filter_once_per_request = True
    RUN_ON_REBUILD = False

    def __init__(self):
        db_api.configure(conf_mod.CONF)
        self._pools = pool_snapshot.SnapshotCache()

    def filter_all(self, filter_obj_list, spec_obj):
        """The hosts that pass, deciding once for the whole request."""
        booked = _booked_host(spec_obj)
        if booked is not None:
            return [host for host in filter_obj_list
                    if host.nodename == booked]
        snapshot = self._pools.get()
        reservation_id = spec_obj.get_scheduler_hint(HINT)
        if reservation_id is None:
            reserved = snapshot.reservable
            return [host for host in filter_obj_list
                    if host.nodename not in reserved]
        allowed = snapshot.hosts_for(reservation_id, spec_obj.project_id)
        if not allowed:
            LOG.info('Reservation %s is not active or not usable by '
                     'project %s.', reservation_id, spec_obj.project_id)
        return [host for host in filter_obj_list if host.nodename in allowed]

    def host_passes(self, host_state, spec_obj):
        """Whether one host passes (Nova calls :meth:`filter_all`)."""
        return bool(self.filter_all([host_state], spec_obj))


def _booked_host(spec_obj):
    """The host booked for a reserved server, or None.

    Only servers booted with reservation hints can have one, so other
    requests cost no query.
    """
    if all(spec_obj.get_scheduler_hint(hint) is None
           for hint in (lease_hints.RESERVED, lease_hints.LEASE_PARAMS)):
        return None
    return server_records.booked_host(context.get_admin_context(),
                                      spec_obj.instance_uuid)
