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

"""Handlers of the lease API, one module per resource.

:mod:`.leases` serves ``/v1/leases`` (list, create, show, update,
delete, schedule proposals, availability) and ``/v1/plugins``;
:mod:`.hosts` serves ``/v1/os-hosts``, the reservable hosts (admin
only); :mod:`.floatingips` serves ``/v1/floatingips``, the reservable
floating IPs (admin only); :mod:`.networks` serves ``/v1/networks``, the
reservable network segments (admin only); :mod:`.storage_pools` serves
``/v1/storage-pools``, the reservable Cinder storage pools (admin only).

A handler takes the service of its resource, the request and the
arguments of its path, and returns ``(status, body)``.
"""
