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

The folders are the stages a request goes through, each importing only
the ones below it:

``api/``
    The lease API (Blazar v1 on the wire) that nova-api mounts at
    ``/reservation``: the WSGI application and its handlers.
``nova_api/``
    The paste filter of nova-api's compute API: lease hints on ``POST
    /servers``, RESERVED servers, held-back builds.
``servers/``
    The former name of ``nova_api/``, kept for api-paste.ini files of
    earlier releases.
``leases/``, ``hosts/``
    The services behind the APIs: leases (create, update, delete, views,
    notifications, proposals, availability) and the reservable host
    inventory.
``enforcement/``
    Usage enforcement of lease changes: Blazar's filters and time
    quotas.
``engine/``
    ``reservation-engine``: runs due lease events through the plugins,
    reclaims preemptible servers, heals bookings on failed hosts and
    powers idle hosts off.
``plugins/``
    One resource plugin per resource type (stevedore).
``power/``
    Power policy and the power drivers of the reservable hosts.
``planning/``
    Free capacity and bookings, in SQL: the planner, capability queries,
    volume capacity, the scheduler's pool snapshot.
``store/``
    Writes to the leases DB's tables that more than one service makes
    (:mod:`reservation_ext.store.hosts`: the host inventory's records).
``clients/``
    Calls to Nova, Cinder and the image API as the service user.
``osc/``
    The ``openstack reservation`` commands that python-blazarclient
    lacks (proposals, availability).
``cmd/``, ``sandbox/``
    Console scripts and the all-in-one cloud.
``conf/``
    The configuration options, registered on import.

Beside them, the modules every stage may use:

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

The leases DB (``db/``) is the bottom layer; the scheduler filter lives
in ``nova_filters/`` and the Cinder extension in ``cinder_ext/``.
"""
