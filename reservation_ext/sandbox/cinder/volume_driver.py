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

"""The sandbox's volume driver: Cinder's fake driver, with volume data.

Cinder's fake driver (the one of its functional tests) keeps volumes in
the database only. This one gives each volume a sparse file of its size
under ``[DEFAULT] state_path``, so that what reads a volume, such as the
upload to an image that ends a ``snapshot_delete`` lease, runs through
Cinder's own code (the LVM driver's ``copy_volume_to_image``, which this
driver inherits) on real bytes.

Nothing in the sandbox writes into a volume (the fake hypervisor attaches
nothing), so every volume holds zeros: a clone or a volume made from a
snapshot is a new sparse file of its size, like its source.

A backend reports its ``volume_backend_name`` and the pools of its option
``sandbox_pools``, so that a sandbox has several pools to reserve
(``host@backend#pool``); by default, as Cinder's fake driver, the backend
``fake`` with one pool of that name.
"""

import contextlib
import os

from cinder.tests import fake_driver
from oslo_config import cfg
from oslo_utils import units

CONF = cfg.CONF
VOLUMES_DIR = 'volumes'
POOLS_OPT = cfg.ListOpt(
    'sandbox_pools', default=[],
    help='The pools this backend reports, each as Cinder\'s fake driver '
         'reports its one (of unlimited size); by default that one, '
         '"fake".')


class SparseFileVolumeDriver(fake_driver.FakeLoggingVolumeDriver):
    """Cinder's fake driver with a sparse file for each volume."""

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        self.configuration.append_config_values([POOLS_OPT])

    def _update_volume_stats(self):
        super()._update_volume_stats()
        # Cinder's fake driver says "fake" whatever the backend's name.
        backend = self.configuration.safe_get('volume_backend_name')
        if backend:
            self._stats['volume_backend_name'] = backend
        names = self.configuration.safe_get(POOLS_OPT.name)
        if names:
            [pool] = self._stats['pools']
            self._stats['pools'] = [dict(pool, pool_name=name)
                                    for name in names]

    def local_path(self, volume, vg=None):
        return os.path.join(CONF.state_path, VOLUMES_DIR, volume.name)

    def create_volume(self, volume):
        self._write_file(volume, volume.size)
        return super().create_volume(volume)

    def create_cloned_volume(self, volume, src_vref):
        self._write_file(volume, volume.size)
        return super().create_cloned_volume(volume, src_vref)

    def create_volume_from_snapshot(self, volume, snapshot):
        self._write_file(volume, volume.size)
        return super().create_volume_from_snapshot(volume, snapshot)

    def extend_volume(self, volume, new_size):
        self._write_file(volume, new_size)
        return super().extend_volume(volume, new_size)

    def delete_volume(self, volume):
        with contextlib.suppress(FileNotFoundError):
            os.unlink(self.local_path(volume))
        return super().delete_volume(volume)

    def _write_file(self, volume, size_gb):
        path = self.local_path(volume)
        os.makedirs(os.path.dirname(path), exist_ok=True)
        with open(path, 'ab') as data:
            data.truncate(size_gb * units.Gi)
