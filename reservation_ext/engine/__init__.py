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

"""The lease engine (``reservation-engine``).

* :mod:`.runner` claims due lease events in the leases DB, runs them
  through the resource plugins and records the outcomes; any number of
  engines share one DB and each event runs once. Each poll also runs the
  other three.
* :mod:`.reclaim` stops preemptible servers in the way of bookings, in
  time for them.
* :mod:`.host_monitor` finds failed reservable hosts and heals the
  bookings on them.
* :mod:`.power_manager` switches idle reservable hosts off and on again
  ahead of their bookings, as :mod:`reservation_ext.power.policy` plans.
"""
