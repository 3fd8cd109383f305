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

"""Horizon panels: the reservation calendars (``pip install
reservation-ext[dashboard]``, beside blazar-dashboard).

- :mod:`.project`: *Project > Reservations > Calendar*, the project's
  leases on a timeline (a row per kind of reservation), and a request
  form that shows the free capacity over time (GET /v1/availability) as
  a step chart and the schedule proposals (POST /v1/leases/proposals) as
  slots; a slot's click makes the lease.
- :mod:`.admin`: *Admin > Reservation > Calendar*, the reservable hosts
  by time with the leases booking each, their power and failure state,
  and their preemptible and gap-filling servers.
- :mod:`.enabled`: Horizon's enabled files of the two panels, which an
  operator copies into ``openstack_dashboard/local/enabled/``.
- :mod:`.api`: the lease API through python-blazarclient (and Nova's
  server list), as the user.
- :mod:`.timeline`, :mod:`.load` and :mod:`.search`: pure functions, the
  API's answers as the timelines' rows (:mod:`.load`: the servers that
  are a host's load) and the request form as the API's questions;
  :mod:`.common`: the views' JSON errors and clock.
- :mod:`.apps`: the Django app (label ``reservation_calendar``) whose
  ``static/reservation_calendar/`` holds calendar.js (the SVG timelines
  and the step chart, no library) and calendar.scss.
"""
