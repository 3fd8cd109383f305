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

* :mod:`.runner` polls the leases DB: claims due lease events for its
  free workers and hands each to one; any number of engines share one DB
  and each event runs once. Each poll also runs the other three below.
* :mod:`.events` claims due events, runs one through the resource plugins
  and records its outcome.
* :mod:`.workers` is the bounded pool of threads the events run on.
* :mod:`.claims` renews the claims of the events under way, so that none
  expires while its action runs.
* :mod:`.waiting` looks at the events that wait for their actions'
  results, and gives them back to run again once the waits are over.
* :mod:`.reclaim` stops preemptible servers in the way of bookings, in
  time for them.
* :mod:`.host_monitor` finds failed reservable hosts and heals the
  bookings on them.
* :mod:`.power_manager` switches idle reservable hosts off and on again
  ahead of their bookings, as :mod:`reservation_ext.power.policy` plans.
* :mod:`.preemptible_work` surveys the preemptible servers on the hosts
  and records the work each host would lose to a booking made for now.
"""
