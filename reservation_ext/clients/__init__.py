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

"""The calls reservation-ext makes to other OpenStack services.

Each client speaks to one service, as the reservation service user of
``[reservation_client]``:

* :mod:`.service_user` makes the keystoneauth1 adapter of that user and
  retries failed requests;
* :mod:`.compute` calls Nova (servers, aggregates, services);
* :mod:`.block_storage` calls Cinder, and :mod:`.block_storage_quotas`
  reads Cinder's quotas with it for the lease API;
* :mod:`.image` calls the image API (Glance v2);
* :mod:`.network` calls Neutron (reserved floating IPs);
* :mod:`.orchestration` calls Heat (a stack's preview, create and
  delete), as a user of the stack's project;
* :mod:`.identity` makes the Keystone trusts through which the service
  user acts for a lease's caller later;
* :mod:`.plugin_clients` gives a resource plugin its Nova and Cinder
  clients: the service user's, or the in-process ones of nova-api and
  cinder-api;
* :mod:`.polling` waits until another service has done what it was
  asked;
* :mod:`.deferral` lets an engine's event record such a wait, rather
  than sit through it.

Every call is idempotent so that an engine may repeat an action another
left half done.
"""
