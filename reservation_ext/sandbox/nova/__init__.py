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

"""The Nova side of the sandbox: one child process with all of Nova.

    python -m reservation_ext.sandbox.nova --state-dir DIR \
        --listen nova=FD --listen placement=FD --listen image=FD \
        --ready-fd FD --go-fd FD

:mod:`.cloud` configures and runs all of Nova in the process (nova-api
with the lease API, conductor, scheduler, fake compute hosts);
:mod:`.placement` serves Placement there with its own configuration;
:mod:`.__main__` is the ``python -m`` entry point.

Nova runs in native threads (``OS_NOVA_DISABLE_EVENTLET_PATCHING=1``).
Like ``nova.cmd``, this package makes that choice before any other
module of Nova is imported: Nova's modules import eventlet, and the
choice is refused once eventlet is loaded. ``nova.tests`` (the fakes of
Glance and Neutron) makes it again when imported, from the environment,
hence the variable.
"""

import os

os.environ['OS_NOVA_DISABLE_EVENTLET_PATCHING'] = '1'

from nova import monkey_patch  # noqa: E402

monkey_patch.patch()
