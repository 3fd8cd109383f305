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

"""Console scripts of reservation-ext.

:mod:`.engine` is ``reservation-engine``, which runs the due lease
events, as an oslo.service service; :mod:`.db_manage` is
``reservation-db-manage``, which creates and migrates the leases DB;
:mod:`.status` is ``reservation-status``: the upgrade checks (in
:mod:`.upgrade_checks`) and each engine's last successful poll.
``reservation-sandbox`` lives in :mod:`reservation_ext.sandbox.main`.

Importing this package makes oslo.service's threading backend the
default: oslo.messaging imports ``oslo_service.service``, which would
otherwise load the eventlet backend before the engine's ``main`` runs.
A process that chose a backend already keeps it.
"""

from oslo_service import backend

backend.register_backend_default_hook(
    lambda: backend.BackendType.THREADING)
