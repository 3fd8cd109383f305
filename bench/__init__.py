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

"""The benchmark scripts (see doc/source/contributor/benchmarks.rst).

Each is run as ``python bench/<script>.py``. They are a package so that
the unit tests import the simulations they check (``bench.utilization``,
``bench.energy``) like any module; the benchmarks import the shared
harnesses of :mod:`harness` and never the tests.

Timed side by side with Blazar: ``planner`` (the free-host search),
``filter`` (the scheduler filter), ``lease_api`` (lease creates through
the API), ``proposals`` (schedule proposals and availability; the peer's
side is ``peer_proposals``, run in Blazar's venv) and ``engine`` (event
throughput). Also ``instance_leases`` (reserved server boots),
``stack_leases`` (stack lease creates, and how late stacks start), the
simulations ``utilization`` and ``energy``, and the soaks
``api_concurrency`` and ``engine_ha``, and ``burst`` (lease starts and
ends all at one instant, with poisoned actions), and ``import_blazar``
(the import of a big Blazar database, which ``blazar_import_peer``
writes in Blazar's venv), and ``floating_ips`` (floating IP lease
creates at 1,000 addresses and 10,000 leases, beside Blazar's timed by
``peer_floating_ips`` in Blazar's venv; both load the rows of
``floating_ips_workload``), and ``weigher`` (the scheduler filter and
weigher of a preemptible request; no peer), and ``stack_proposals``
(schedule proposals of Heat stacks from 2 servers to nearly the whole
pool, on ``blazar_alloc.py``'s bookings; no peer); ``common`` holds what they
share, and ``by_path`` (plain Python) the import of scripts by path, for
the peer scripts too.
"""
