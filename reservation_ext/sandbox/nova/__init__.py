"""The Nova side of the sandbox: one child process with all of Nova.

    python -m reservation_ext.sandbox.nova --state-dir DIR \
        --listen nova=FD --listen placement=FD --listen image=FD \
        --ready-fd FD --go-fd FD

See :mod:`reservation_ext.sandbox.nova.cloud`. Nova runs in native
threads (``OS_NOVA_DISABLE_EVENTLET_PATCHING=1``). Like ``nova.cmd``, this
package makes that choice before any other module of Nova is imported:
Nova's modules import eventlet, and the choice is refused once eventlet
is loaded. ``nova.tests`` (the fakes of Glance and Neutron) makes it again
when imported, from the environment, hence the variable.
"""

import os

os.environ['OS_NOVA_DISABLE_EVENTLET_PATCHING'] = '1'

from nova import monkey_patch  # noqa: E402

monkey_patch.patch()
