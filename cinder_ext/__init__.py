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

"""Cinder API extension of reservation-ext (loaded by cinder-api), and its
scheduler filter (loaded by cinder-scheduler).

* :mod:`.extension` is the extension cinder.conf loads: reserved volume
  creates, the lease keys of volume views, Cinder's actions refused on
  reserved volumes, and the in-process Cinder the volume plugin acts
  through;
* :mod:`.reserved_volumes` writes a reserved volume's record in Cinder's
  DB and starts and ends it with its lease;
* :mod:`.volume_quotas` reads the project's Cinder quotas and usage for
  the check of Cinder's quotas over a lease's window;
* :mod:`.body_check` is the paste filter that answers request bodies
  nobody can read (too deep, not UTF-8) with Cinder's 400;
* :mod:`.reservation_filter` is ``ReservationFilter``, the scheduler
  filter that keeps the registered storage pools for the volumes of the
  leases that hold them.
"""
