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

"""Power management of the reservable hosts.

The reservation backlog says when each reservable host is next needed, so
the engine switches hosts off while nothing will need them for long enough
and on again ahead of their next booking:

- :mod:`.policy` decides, from a host's bookings and power state alone
  (no I/O), which transition is next and when;
- :mod:`.drivers` defines what a power driver does and loads the one
  ``[power] driver`` names (stevedore namespace
  ``reservation_ext.power``: ``noop``, ``redfish``, ``ironic``);
- :mod:`.redfish` is the ``redfish`` driver: a host's BMC, through
  sushy;
- :mod:`.ironic` is the ``ironic`` driver: computes that are Ironic
  nodes;
- :mod:`.credentials` says how to reach a host's BMC and which host
  properties are secret.

:mod:`reservation_ext.engine.power_manager` claims and carries out the
transitions (the compute service disabled before a host goes off,
enabled once it is back up). The ``[power]`` options live in
:mod:`reservation_ext.conf.power`.
"""
