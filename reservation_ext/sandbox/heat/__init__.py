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

"""The Heat side of the sandbox: a child process with Heat's API and engine.

    python -m reservation_ext.sandbox.heat --state-dir DIR \
        --listen heat=FD --ready-fd FD --go-fd FD

openstack-heat 27 from PyPI: :mod:`.cloud` makes Heat's database, sets
up in Keystone what Heat needs (the stack-user domain, its admin and the
``heat_stack_user`` role), then runs heat-engine's service and serves
heat-api's application in the one process. API and engine talk over
oslo.messaging's in-memory transport, which reaches only its own
process, so the sandbox needs no broker. :mod:`.settings` says what
heat.conf holds; :mod:`.__main__` is the ``python -m`` entry point.

Heat configures the global ``cfg.CONF`` with options of its own, hence
a child of its own. Importing this package imports nothing of Heat: the
sandbox's supervisor reads :mod:`.settings`.
"""
