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

"""The child of :mod:`tests.cinder_service`: all of Cinder in one process.

Started as ``python -c CHILD_MAIN --state-dir DIR --listen cinder=FD
--ready-fd FD`` (:data:`tests.cinder_service.CHILD_MAIN`): Cinder's
package monkey patches the process before this module imports Cinder.
As ``cinder-volume`` does, each backend of ``enabled_backends`` is a
volume service of host ``host@backend``; the scheduler starts after
them, so that it asks for their pools as it starts, and the child says
it is ready once the scheduler knows every pool of
:data:`tests.cinder_service.POOLS`.
"""

import os
import time

from cinder import context as cinder_context
from cinder.scheduler import rpcapi as scheduler_rpcapi

from reservation_ext.sandbox.cinder import cloud
from reservation_ext.sandbox.cinder import volume_driver
from reservation_ext.sandbox import process
from tests import cinder_service

# A hang guard for the pools to reach the scheduler.
POOLS_TIMEOUT = 60


class PoolsDriver(volume_driver.SparseFileVolumeDriver):
    """The sandbox's driver, reporting :data:`tests.cinder_service.POOLS`.

    Cinder's fake driver reports one pool of ``infinite`` size, named
    after its backend ``fake``; a real driver reports its own.
    """

    def _update_volume_stats(self):
        super()._update_volume_stats()
        backend = self.configuration.safe_get('volume_backend_name')
        [template] = self._stats['pools']
        self._stats['volume_backend_name'] = backend
        self._stats['pools'] = [
            dict(template, pool_name=pool, total_capacity_gb=size,
                 free_capacity_gb=size)
            for pool, size in sorted(cinder_service.POOLS.items())]


def wait_for_pools():
    """Wait until the scheduler knows every pool the driver reports."""
    expected = {cinder_service.pool_name(pool)
                for pool in cinder_service.POOLS}
    admin = cinder_context.get_admin_context()
    deadline = time.monotonic() + POOLS_TIMEOUT
    while True:
        found = {pool['name'] for pool in
                 scheduler_rpcapi.SchedulerAPI().get_pools(admin, None)}
        if expected <= found or time.monotonic() > deadline:
            return
        time.sleep(0.2)


def main():
    args = process.parse_args(None, 'Cinder for the tests of reservation-ext.')
    cloud.serve(args, os.path.join(args.state_dir, cinder_service.CONF_FILE),
                wait_for_pools)
