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

"""The Neutron side of the sandbox: a child process with Neutron's API.

    python -m reservation_ext.sandbox.neutron --state-dir DIR \
        --listen neutron=FD --ready-fd FD [--go-fd FD]

Neutron 29 from PyPI, agentless: :mod:`.cloud` makes its database
(:mod:`.schema`) and serves ``neutron.wsgi.api:application`` configured
by :mod:`.settings` (ML2, the ``router`` service plugin, no broker);
:mod:`.mechanism` is the ML2 mechanism driver that binds the fake
computes' ports; :mod:`.topology` says what the external network
``public`` and the projects' networks are, and :mod:`.provision` makes
them; :mod:`.__main__` is the ``python -m`` entry point. The tests run
the same child (``tests/neutron_service.py``).

Neutron selects oslo.service's threading backend when imported, and
configures the global ``cfg.CONF`` with options that clash with Nova's
and Cinder's, hence a child of its own. Importing this package imports
nothing of Neutron: the sandbox's supervisor reads :mod:`.settings`.
"""
