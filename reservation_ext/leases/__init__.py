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

* :mod:`.service` creates, shows, lists, updates and deletes leases
  (``LeaseService``), in one writer transaction each, calling the
  resource plugins to book;
* :mod:`.updates` holds the update and undo machinery of
  ``LeaseService``: a lease's new dates and reservations, the steps run
  after the transaction, and the undo that puts back what an update
  whose steps failed had changed;
* :mod:`.lease_rows` finds, checks and moves one lease's row for both
  (policy, stable statuses, a name unique in its project, event times);
* :mod:`.parsing` parses the Blazar v1 bodies of lease requests into
  what the service does, before it touches the DB;
* :mod:`.schemas` holds the JSON Schemas of those bodies and of the
  lease list's query parameters;
* :mod:`.hints` reads the lease requests carried by the
  ``lease_params`` hint of server and volume creates;
* :mod:`.proposals` offers windows for a lease request (schedule
  proposals) and holds their capacity until they expire;
* :mod:`.availability` says how much matching reservable capacity is
  free, and when;
* :mod:`.views` renders leases as Blazar's v1 views, which are also the
  payload of :mod:`.notifications` (oslo.messaging), whose JSON Schema
  is :mod:`.notification_schema`;
* :mod:`.metadata` shows the lease of a server or volume in its
  metadata.

The lease, reservation and event statuses are
:mod:`reservation_ext.states`.
"""
