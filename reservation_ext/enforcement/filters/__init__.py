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

"""Blazar's usage enforcement filters, by the names Blazar gives them.

* :mod:`.base` is what every filter is: three hooks that allow by
  default;
* :mod:`.max_lease_duration` is ``MaxLeaseDurationFilter``: leases are
  at most so long;
* :mod:`.external_service` is ``ExternalServiceFilter``: an HTTP
  service decides, by Blazar's protocol.

A filter makes one decision about a lease. Each of its three hooks gets
Blazar's dicts (see :mod:`reservation_ext.enforcement.payloads`):
``context`` (``user_id``, ``project_id``, ``auth_url``, ``region_name``)
and leases with their ``reservations``, each with its ``allocations``.
``check_create`` and ``check_update`` refuse by raising a
:class:`~reservation_ext.exceptions.ReservationError` (403 with the
reason, or 503 when the decision cannot be had); ``on_end`` only tells.

Filters are found in :data:`FILTERS`, a plain registry: the names are
Blazar's and fixed, and there is nothing to plug in from outside.
"""

from reservation_ext.enforcement.filters import external_service
from reservation_ext.enforcement.filters import max_lease_duration

FILTERS = {
    'MaxLeaseDurationFilter': max_lease_duration.MaxLeaseDurationFilter,
    'ExternalServiceFilter': external_service.ExternalServiceFilter,
}


def load(conf, clock, names):
    """Build the filters ``names`` (``[enforcement] enabled_filters``).

    :raises ValueError: a name that is no filter, naming the known ones.
    """
    unknown = [name for name in names if name not in FILTERS]
    if unknown:
        raise ValueError(
            '[enforcement] enabled_filters: unknown filter %s; known: %s'
            % (', '.join(unknown), ', '.join(sorted(FILTERS))))
    return [FILTERS[name](conf.enforcement, clock) for name in names]
