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
    ``/reservation``: URL map, handlers, request schemas.
``nova_api/``
    The paste filter of nova-api's compute API: lease hints on ``POST
    /servers``, RESERVED servers, held-back builds.
``leases/``, ``hosts/``
    The services behind the APIs: leases (create, update, delete, views,
    notifications) and the reservable host inventory.
``engine/``
    ``reservation-engine``: runs due lease events through the plugins.
``plugins/``
    One resource plugin per resource type (stevedore).
``planning/``
    Free capacity and bookings, in SQL: the planner, capability queries,
    volume capacity, the scheduler's pool snapshot.
``clients/``
    Calls to Nova, Cinder and the image API as the service user.
``cmd/``, ``sandbox/``
    Console scripts and the all-in-one cloud.

Beside them: ``conf`` (options), ``policy`` (rules in code), ``context``,
``exceptions``, ``validation`` (field checks and JSON Schema) and
``clock``. The leases DB (``db/``) is the bottom layer; the scheduler
filter lives in ``nova_filters/`` and the Cinder extension in
``cinder_ext/``.
"""
