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

"""Usage enforcement of leases: Blazar's filters, time and Nova quotas.

* :mod:`.enforcer` is what the lease service and the engine call: it
  runs the enabled filters and the time quotas on a lease change;
* :mod:`.filters` holds Blazar's ``MaxLeaseDurationFilter`` and
  ``ExternalServiceFilter``;
* :mod:`.time_quotas` reads Keystone's unified limits and checks them
  against the usage that :mod:`.usage` sums from the leases DB;
* :mod:`.window_quotas` checks Nova's quotas (instances, cores, RAM)
  and Cinder's (volumes, gigabytes) at every instant of a lease's
  window;
* :mod:`.payloads` makes the dicts that filters get (Blazar's context
  and lease).

The ``[enforcement]`` options live in
:mod:`reservation_ext.conf.enforcement`.
"""
