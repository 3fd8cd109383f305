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

"""Cinder scheduler filter: leased storage pools only serve their leases.

Cinder finds its scheduler filters by their entry points in the
``cinder.scheduler.filters`` namespace (it has no option naming filter
classes, as Nova's ``available_filters``): installing reservation-ext
where cinder-scheduler runs declares this one. Enable it in the
scheduler's cinder.conf, after Cinder's default filters (a value may go
on over indented lines)::

    [DEFAULT]
    scheduler_default_filters = AvailabilityZoneFilter,CapacityFilter,
        CapabilitiesFilter,ReservationFilter

    [reservation_database]
    connection = <the leases DB, as cinder-api's>

It reads the registered storage pools and the bookings of ``storage:pool``
reservations in the leases DB: one statement per scheduling request, not
per pool. Pools are named as Cinder names them, ``host@backend#pool``.
"""

from cinder.scheduler import filters
from oslo_log import log as logging

from db import api as db_api
from reservation_ext import clock as clock_mod
from reservation_ext import conf as conf_mod
from reservation_ext import context
from reservation_ext.leases import hints as lease_hints
from reservation_ext.planning import storage_pools

LOG = logging.getLogger(__name__)

HINT = lease_hints.RESERVATION
# Cinder asks its scheduler whether a volume's own pool has room for
# these; the volume is there already, whatever the pool became since.
IN_PLACE = frozenset(['create_snapshot', 'extend_volume',
                      'manage_existing_snapshot'])


class ReservationFilter(filters.BaseBackendFilter):
    """Keep the registered storage pools for the leases that hold them.

    A volume created with the hint ``reservation=<reservation id>`` passes
    only the pools that active ``storage:pool`` reservation holds now, and
    only when it comes from one of its lease's projects. Any other volume
    passes only the pools nobody registered as reservable. A request about
    a volume that exists (extend, snapshot, retype) passes the volume's
    own pool.
    """

    # The leases do not change between the volumes of one request.
    run_filter_once_per_request = True

    def __init__(self, clock=clock_mod.SYSTEM):
        db_api.configure(conf_mod.CONF)
        self._clock = clock

    def filter_all(self, filter_obj_list, filter_properties):
        """Return the backends that pass, reading the leases DB once.

        Cinder builds a filter for each request and would call
        :meth:`backend_passes` backend by backend.
        """
        passes = self._decide(filter_properties)
        return [backend for backend in filter_obj_list if passes(backend)]

    def backend_passes(self, backend_state, filter_properties):
        """Say whether one pool passes (Cinder calls :meth:`filter_all`)."""
        return self._decide(filter_properties)(backend_state)

    def _decide(self, filter_properties):
        """Return ``passes(backend_state)`` for one request."""
        spec = filter_properties.get('request_spec') or {}
        if spec.get('operation') in IN_PLACE:
            return lambda backend_state: True
        volume = spec.get('volume_properties') or {}
        own = volume.get('cluster_name') or volume.get('host')
        hints = filter_properties.get('scheduler_hints') or {}
        reservation_id = _single(hints.get(HINT))
        if reservation_id is None:
            reservable = self._read(storage_pools.reservable_names)
            return _Passing(own, reservable, 'it is reservable and the '
                            'volume has no "%s" hint' % HINT).passes
        project_id = volume.get('project_id')
        opened = self._read(storage_pools.open_to, reservation_id,
                            project_id, self._clock.now())
        return _Passing(own, opened, 'it is not a pool of reservation %s '
                        'that project %s may use now' % (reservation_id,
                                                         project_id),
                        excluded=False).passes

    @staticmethod
    def _read(query, *args):
        """Run ``query(session, *args)`` in a reader of the leases DB."""
        with db_api.context_manager.reader.using(
                context.get_admin_context()) as session:
            return query(session, *args)


class _Passing:
    """The pools of one request: all but ``names``, or only ``names``.

    The volume's own pool (``own``) passes whatever ``names`` are.
    """

    def __init__(self, own, names, reason, excluded=True):
        self.own = own
        self.names = names
        self.reason = reason
        self.excluded = excluded

    def passes(self, backend_state):
        """Say whether ``backend_state`` passes; log why it does not."""
        name = backend_state.backend_id
        if name == self.own or (name in self.names) != self.excluded:
            return True
        LOG.debug('ReservationFilter refuses pool %s: %s.', name,
                  self.reason)
        return False


def _single(value):
    """Return the hint's value, or None; a list of one is its value.

    Reservation ids are strings: any other value matches none.
    """
    if isinstance(value, list) and len(value) == 1:
        value = value[0]
    return None if value is None else str(value)
