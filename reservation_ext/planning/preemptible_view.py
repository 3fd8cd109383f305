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

"""What the scheduler knows of preemptible servers' hosts, kept per process.

For every preemptible request the ReservationFilter asks which hosts are
closed to preemptibles and how long a preemptible would run on the others
(:func:`open_now`, the latter for a request that declares its runtime),
and the ReservationWeigher how long a preemptible would run on each host
(:func:`time_left`): at 10,000 hosts, about 5 ms of SQL each. The
answers change only with the bookings and with the time:

* the bookings: a writer that makes one of
  :data:`db.models.BOOKING_WRITES` bumps the ``booking_state``
  generation when it commits (:mod:`db.api`);
* the time: the first moment after which an answer may differ is read
  with it (:func:`preemptible_placement.next_change`).

:class:`ViewCache` keeps one answer, as of one time, until the first of:
the generation moved, that moment came, :data:`MAX_AGE` passed, or the
options changed. Otherwise a request costs one small SELECT (the
generation) and set or dict lookups.

The weights are those of the answer's time, at most :data:`MAX_AGE` old.
Nova scales a weigher's weights from the request's lightest host to its
heaviest, so an age that every host's weight shares changes nothing; it
only blurs the hosts whose reclaim is within that age of the horizon's
end, which then weigh as much as those with no booking in the horizon.
The filter counts the age off the seconds left (:class:`Open` keeps the
answer's time); the hosts whose reclaim is within that age past the
horizon's end count as having no booking in it.
"""

import collections
import datetime
import threading

from db import api as db_api
from db import tables
from reservation_ext import context
from reservation_ext.planning import preemptible_placement

BOOKING_STATE = tables.BOOKING_STATE

# How long an answer may be kept when nothing changes: it bounds the age
# of the weights (above), and costs one reading a minute on a quiet cloud.
MAX_AGE = datetime.timedelta(seconds=60)

Settings = collections.namedtuple(
    'Settings', 'lead_time cleaning_time horizon')
Settings.__doc__ = """The ``[reservation]`` options the answers depend on.

``preemption_lead_time`` (seconds), ``cleaning_time`` (minutes) and
``preemptible_weigher_horizon`` (seconds).
"""


def settings(conf):
    """Return the :class:`Settings` of a ``[reservation]`` group."""
    return Settings(conf.preemption_lead_time, conf.cleaning_time,
                    float(conf.preemptible_weigher_horizon))


def closed_now(session, now, options):
    """The hypervisor hostnames closed to preemptibles at ``now``."""
    return preemptible_placement.closed_hosts(
        session, now, options.lead_time, options.cleaning_time)


def time_left(session, now, options):
    """``{hypervisor hostname: seconds}`` until each host's reclaim.

    Up to the horizon; the hosts that are not there have no booking whose
    reclaim comes before it.
    """
    reclaims = preemptible_placement.reclaim_times(
        session, now, now + datetime.timedelta(seconds=options.horizon),
        options.lead_time, options.cleaning_time)
    return {name: min(max((at - now).total_seconds(), 0.0), options.horizon)
            for name, at in reclaims.items()}


Open = collections.namedtuple('Open', 'closed left taken_at')
Open.__doc__ = """What the ReservationFilter reads for preemptibles.

``closed`` (:func:`closed_now`) and ``left`` (:func:`time_left`) as of
``taken_at``.
"""


def open_now(session, now, options):
    """The :class:`Open` hosts at ``now``: 2 queries, one answer kept."""
    return Open(closed_now(session, now, options),
                time_left(session, now, options), now)


_Kept = collections.namedtuple(
    '_Kept', 'generation options taken_at valid_until value')


def _holds(kept, generation, options, now):
    return (kept is not None and kept.generation == generation and
            kept.options == options and
            kept.taken_at <= now < kept.valid_until)


class ViewCache:
    """Keep one answer about the bookings; read it again when it is stale.

    :param read: ``read(session, now, options)``: the answer as of
        ``now`` (:func:`closed_now`, :func:`time_left`,
        :func:`open_now`).
    """

    def __init__(self, read):
        self._read = read
        self._kept = None
        self._lock = threading.Lock()

    def get(self, now, options):
        """Return the answer as of ``now`` under ``options`` (Settings)."""
        # Read before the answer, so that a commit in between is seen as
        # a move at the next call.
        generation = db_api.read_generation(BOOKING_STATE)
        kept = self._kept
        if not _holds(kept, generation, options, now):
            with self._lock:
                kept = self._kept
                if not _holds(kept, generation, options, now):
                    kept = self._kept = self._load(generation, options, now)
        return kept.value

    def _load(self, generation, options, now):
        with db_api.context_manager.reader.using(
                context.get_admin_context()) as session:
            value = self._read(session, now, options)
            change = preemptible_placement.next_change(
                session, now, options.lead_time, options.cleaning_time)
        until = now + MAX_AGE
        if change is not None:
            until = min(until, change)
        return _Kept(generation, options, now, until, value)
