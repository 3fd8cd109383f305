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

The subpackages are the stages a request goes through, from the entry
points (``cmd/``, ``sandbox/``, the APIs in ``api/`` and ``nova_api/``)
through the engine, the plugins and the services (``leases/``,
``hosts/``) down to ``planning/``, the clients of other services and the
owners of shared tables (``store/``); under them the ground floor of
small modules (``policy``, ``context``, ``validation``, ``dates``,
``states``, ``clock``, ``exceptions``), the options (``conf/``) and the
leases DB (``db/``, beside this package, as are the scheduler filter in
``nova_filters/`` and the Cinder extension in ``cinder_ext/``). Each
imports only the ones below it: the table of the layers is in
``doc/source/contributor/architecture.rst``, and a unit test holds the
code to it.

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
