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


"""The one writer of each shared table of the leases DB.

A shared table is one that several parts of the code change: the
planner, the engine, the plugins, the APIs. Each has one module here,
the only one that writes it (``db.tables.OWNERS`` says which, and
``tests/unit/test_table_owners.py`` checks every write statement
against it). Each module's functions are named for what the write means
(``book``, ``release``, ``claim_seats``, ``mark_failed``, ...), take the
caller's session and plain values, run the same statements the callers
ran before, and return what the callers need (a row count, ids, rows).
The callers keep their transactions, their reads and their decisions.

:mod:`.allocations`
    ``host_allocations``: bookings, proposal holds, seats, moves and
    reclaims.
:mod:`.engines`
    ``engine_heartbeats``: each running engine's last successful poll.
:mod:`.floating_ips`
    ``floatingips``, ``floatingip_reservations`` and
    ``floatingip_allocations``: the reservable addresses, the
    ``virtual:floatingip`` requests and the addresses' bookings.
:mod:`.hosts`
    ``computehosts``, ``host_capabilities`` and ``host_properties``: the
    inventory, generations, failures and power transitions.
:mod:`.instance_reservations`
    ``instance_reservations``: what an instance reservation asked for,
    and a deferred build's arguments.
:mod:`.leases`
    ``leases``, ``lease_projects``, ``reservations`` and ``events``.
:mod:`.network_segments`
    ``network_segments``, ``network_extra_capabilities``,
    ``network_reservations`` and ``network_allocations``: the reservable
    segments, the ``network`` requests and the segments' bookings.
:mod:`.stacks`
    ``stack_reservations``: what a ``heat:stack`` reservation asked for
    and the needs of its stack.
:mod:`.storage_pools`
    ``storage_pools`` and ``storage_pool_extra_capabilities``: the
    reservable Cinder pools and their extra capabilities.
"""
