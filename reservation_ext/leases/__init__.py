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

"""The lease service: what a lease is and what may happen to it.

:mod:`.service` creates, shows, lists, updates and deletes leases in one
writer transaction each, calling the resource plugins to book; the
request parsing it does first lives in :mod:`.requests`, and the
``lease_params`` hint of server and volume creates in :mod:`.hints`.
:mod:`.states` names the lease, reservation and event statuses and the
moves between them; :mod:`.views` renders leases as Blazar's v1 views,
which are also the payload of :mod:`.notifications`; :mod:`.metadata`
the lease's keys in the metadata of server and volume views.
"""
