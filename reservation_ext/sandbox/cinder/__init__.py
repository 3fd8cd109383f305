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

"""The Cinder side of the sandbox: one child process with all of Cinder.

    python -m reservation_ext.sandbox.cinder --state-dir DIR \
        --listen cinder=FD --ready-fd FD

:mod:`.cloud` configures and runs all of Cinder in the process
(cinder-api with the reservation extension, scheduler, volume service);
:mod:`.volume_driver` is its volume driver, Cinder's fake driver with
volume data; :mod:`.__main__` is the ``python -m`` entry point.

Cinder runs under eventlet, as its own services do: like
``cinder.cmd``, this package monkey patches the process before any
other module of Cinder is imported. Nova cannot share the process (both
configure the global ``cfg.CONF`` with clashing options), hence a child
of its own.
"""

from cinder import monkey_patch

monkey_patch.patch()
