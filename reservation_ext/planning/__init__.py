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

"""Planning: which capacity is free when, and booking it.

* :mod:`.planner` finds free hosts (one SQL statement) and books whole
  hosts or instance slices with Placement-style generation checks;
* :mod:`.capabilities` compiles capability queries into that statement;
* :mod:`.preference` orders the equally valid free hosts a search may
  take;
* :mod:`.host_capacity` says how much of a host servers may use, as
  Placement counts it;
* :mod:`.seats` claims and binds the seats (slices) of instance-capacity
  reservations, one per server;
* :mod:`.volume_capacity` books reservable block storage GB;
* :mod:`.floating_ips` finds free reservable floating IPs and books
  them, with the same generation checks;
* :mod:`.exclusive` books items whole, one lease at a time, with the
  same generation checks: :mod:`.network_segments` finds free network
  segments and books them, :mod:`.storage_pools` free storage pools (and
  says which pools a volume may use now);
* :mod:`.stacks` books a Heat stack's servers, volume GB and floating
  IPs all or nothing, with the planners above;
* :mod:`.stack_proposals` finds and holds a stack's proposals (its
  needs in one timeline) and books what a proposal holds;
* :mod:`.capacity_proposals` finds and holds the proposals of
  instance-capacity reservations (their servers placed by affinity) and
  books what a proposal holds;
* :mod:`.timelines` holds the schedule of a request's capacity in
  memory, to find where proposals and availability windows may start;
* :mod:`.healing` moves bookings off failed hosts to free replacements;
* :mod:`.reserved_servers` finds the host a reserved server's slice is
  booked on, for the scheduler filter;
* :mod:`.preemptible_placement` says which boots are preemptible,
  where they may run and when they are reclaimed at the latest;
* :mod:`.reclaim_choice` chooses the preemptible servers that give way
  when a booking needs their host;
* :mod:`.work_at_stake` counts the preemptible work a booking made for
  now would stop on each host, for the order of preference;
* :mod:`.pool_snapshot` is the scheduler's view of the host pools,
  reloaded when their generation moves;
* :mod:`.preemptible_view` keeps the scheduler's view of the hosts
  closed to preemptibles and of their reclaim times, read again when the
  bookings' generation moves or time changes them.

Nothing here calls Nova or Cinder.
"""
