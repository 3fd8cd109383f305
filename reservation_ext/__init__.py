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

"""reservation-ext: time-based resource reservation (leases) for OpenStack.

The subpackages are the stages a request goes through, each importing
only the ones below it, in this order (the table of the layers is in
``doc/source/contributor/architecture.rst``, and a unit test holds the
code to it):

* the entry points: ``cmd/`` (console scripts), ``sandbox/`` (the
  all-in-one cloud), ``osc/`` (the ``openstack reservation`` commands
  python-blazarclient lacks), ``calendars/`` (the Horizon panels of the
  reservation calendars), ``servers/`` (the former path of the
  server middleware), the lease API in ``api/`` and the compute API's
  filter in ``nova_api/`` (beside them, outside this package, the Cinder
  extension in ``cinder_ext/`` and the scheduler filter in
  ``nova_filters/``);
* ``engine/``, what ``reservation-engine`` runs; ``blazar_import/``,
  the import of a Blazar database (``reservation-db-manage
  import-blazar``); ``plugins/``, one per resource type;
* the services: ``leases/``, usage ``enforcement/`` of lease changes,
  the reservable ``hosts/``, ``floatingips/``, ``network_segments/`` and
  ``storage_pools/``; ``stacks/``, what a Heat stack needs;
* ``planning/``, free capacity and bookings in SQL; ``power/``, the
  power policy and drivers of the reservable hosts; ``clients/``, the
  calls to other services; ``store/``, the one writer of each shared
  table;
* the ground-floor modules below, the options (``conf/``) and the leases
  DB (``db/``, beside this package).

The ground-floor modules:

* :mod:`.clock`: where every "now" comes from (a clock passed in, so
  that tests control time);
* :mod:`.context`: Keystone-style request contexts, also oslo.db
  transaction contexts;
* :mod:`.dates`: dates, durations and lease windows in input and views;
* :mod:`.exceptions`: the errors, with their HTTP status;
* :mod:`.operation_rules`: the policy rule that Nova or Cinder documents
  for one of its calls;
* :mod:`.policy`: the rules of reservation-ext, in code (oslo.policy);
* :mod:`.states`: the lease, reservation and event statuses and the
  moves between them;
* :mod:`.validation`: field checks and JSON Schema of user input.
"""
