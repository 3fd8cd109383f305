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

"""Nova scheduler weigher: preemptible servers where they last longest.

Enable it in nova.conf, beside Nova's own weighers::

    [filter_scheduler]
    weight_classes = nova.scheduler.weights.all_weighers,
        nova_filters.reservation_weigher.ReservationWeigher

For a preemptible request (as :mod:`.reservation_filter` judges one), a
host weighs the seconds until the engine would reclaim a server there for
the host's next booking, up to ``[reservation]
preemptible_weigher_horizon``: a host without a booking in that horizon,
or outside the reservable pools, weighs the most. The reclaim times
(:func:`reservation_ext.planning.preemptible_placement.reclaim_times`,
one query) are kept per process
(:mod:`reservation_ext.planning.preemptible_view`): a request costs one
small SELECT while no booking changed and no booking's time came.
Nova scales the weights from the lightest host of the request to the
heaviest, so that the order of the hosts' reclaims decides, whatever the
horizon, before ``[reservation] preemptible_weight_multiplier`` applies.

Every other request weighs 0 on every host, which leaves the choice to
Nova's weighers: a reserved server's host was chosen when its lease was
booked (the tightest gap that holds it), and the filter passes it alone.
"""

from nova.scheduler import weights

from db import api as db_api
from nova_filters import reservation_filter
from reservation_ext import clock as clock_mod
from reservation_ext import conf as conf_mod
from reservation_ext.planning import preemptible_view


class ReservationWeigher(weights.BaseHostWeigher):
    """Weigh hosts by how long a preemptible server would run on them."""

    def __init__(self, clock=clock_mod.SYSTEM):
        db_api.configure(conf_mod.CONF)
        self._left = preemptible_view.ViewCache(preemptible_view.time_left)
        self._clock = clock

    def weight_multiplier(self, host_state):
        """``[reservation] preemptible_weight_multiplier``."""
        return conf_mod.CONF.reservation.preemptible_weight_multiplier

    def weigh_objects(self, weighed_obj_list, weight_properties):
        """Return the hosts' weights for one request."""
        if not reservation_filter.is_preemptible_request(weight_properties):
            return [0.0] * len(weighed_obj_list)
        options = preemptible_view.settings(conf_mod.CONF.reservation)
        left = self._left.get(self._clock.now(), options).get
        # A host without a booking in the horizon weighs the most.
        return [left(weighed.obj.nodename, options.horizon)
                for weighed in weighed_obj_list]

    def _weigh_object(self, host_state, weight_properties):
        """Weigh one host (Nova calls :meth:`weigh_objects`)."""
        return self.weigh_objects([weights.WeighedHost(host_state, 0.0)],
                                  weight_properties)[0]
