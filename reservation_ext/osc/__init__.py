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

"""The OpenStackClient plugin: ``openstack reservation`` commands.

:mod:`.v1` holds the commands of schedule proposals (``lease
propose``, ``lease create-from-proposal``), availability
(``availability show``), the admin's inventories python-blazarclient
has no commands for (``network ...``, ``storage pool ...``) and the
leases of a type its ``lease create`` cannot send (``storage lease
create``). They join
python-blazarclient's ``openstack reservation`` tree (entry points in
``openstack.reservation.v1``) and use its client, so that the endpoint,
the session and the errors are those of the other commands.
:mod:`.lease_wait` waits for a lease to be where it goes next (``lease
wait``); :mod:`.availability_chart` draws availability for a terminal
(``availability chart``).
"""
