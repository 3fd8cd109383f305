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

"""The nova-api side of server reservation.

Everything here runs inside nova-api's compute API and uses Nova's own
objects:

* :mod:`.server_middleware` is the paste filter of the v2.1 pipelines:
  it reads the ``reserved`` / ``lease_params`` hints of ``POST
  /servers``, shows RESERVED servers and serves the engine's start
  action;
* :mod:`.held_builds` holds a reserved server's build back until its
  lease starts (a RESERVED server is a BuildRequest);
* :mod:`.host_room` asks Placement whether a held-back build fits its
  booked host now;
* :mod:`.capacity_boots` serves boots with an instance-capacity
  reservation's flavor, on the reservation's seats;
* :mod:`.server_access` decides who sees a server that waits for its
  lease, and who may change it;
* :mod:`.server_records` reads and writes what the leases DB knows of
  reserved servers (the scheduler filter reads the booked host there
  too);
* :mod:`.reclaim_views` finds when the preemptible servers of a page
  of views are reclaimed at the latest (``reservation:reclaim_after``);
* :mod:`.extra_specs` has Nova check the flavor extra specs we read
  when they are set;
* :mod:`.nova_quotas` reads a project's Nova quotas and what Nova counts
  of it, for the check of Nova's quotas over a lease's window;
* :mod:`.wrapping` wraps a method of Nova's once, however many times
  nova-api builds its pipelines.
"""
