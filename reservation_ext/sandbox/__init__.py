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

"""reservation-sandbox: an all-in-one cloud for trying reservation-ext.

Keystone, Nova (with the lease API and ReservationFilter), Placement, an
image API, Cinder, Neutron, Heat and the reservation engine on 127.0.0.1,
started and stopped by one command:

* :mod:`.main` is ``reservation-sandbox``: it writes the layout, starts
  the child processes and supervises them;
* :mod:`.config` lays out the state directory, the ports and the
  configuration files;
* :mod:`.overrides` checks the ``--config`` options against the
  services' option lists and writes them into their files;
* :mod:`.process` holds what the child processes share: their
  arguments, the readiness pipe, stopping;
* :mod:`.wsgi_server` is the small threaded WSGI server of the
  sandbox's APIs;
* :mod:`.keystone` is the Keystone child process;
* :mod:`.image_api` serves Glance's v2 image API over Nova's in-process
  images;
* :mod:`.nova` (Nova, Placement), :mod:`.cinder` (Cinder),
  :mod:`.neutron` (Neutron, with its networks), :mod:`.heat` (Heat's
  API, cfn API and engine) and :mod:`.dashboard`
  (Horizon with blazar-dashboard) are the packages of the other child
  processes.
"""
