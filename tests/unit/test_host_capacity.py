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

"""A host's usable size from Nova's reserve and allocation ratios."""

from oslo_config import cfg

from reservation_ext.planning import host_capacity
from tests import base


def nova_conf(**values):
    """A ConfigOpts with Nova's options of ``values`` registered."""
    conf = cfg.ConfigOpts()
    conf.register_opts([
        (cfg.FloatOpt if name.endswith('ratio') else cfg.IntOpt)(
            name, default=value) for name, value in values.items()])
    conf([])
    return conf


class AllocationRatiosTest(base.TestCase):

    def test_nova_defaults_apply_without_nova_options(self):
        self.assertEqual((4.0, 1.0, 1.0),
                         host_capacity.allocation_ratios(cfg.ConfigOpts()))

    def test_a_set_ratio_wins_over_the_initial_ratio(self):
        conf = nova_conf(cpu_allocation_ratio=2.0, ram_allocation_ratio=None,
                         initial_ram_allocation_ratio=1.5)
        self.assertEqual((2.0, 1.5, 1.0),
                         host_capacity.allocation_ratios(conf))


class ReservedTest(base.TestCase):

    def test_nova_keeps_512_mb_without_nova_options(self):
        self.assertEqual((0, 512, 0),
                         host_capacity.reserved(cfg.ConfigOpts()))

    def test_the_disk_reserve_is_rounded_up_to_whole_gb(self):
        conf = nova_conf(reserved_host_cpus=2, reserved_host_memory_mb=0,
                         reserved_host_disk_mb=1025)
        self.assertEqual((2, 0, 2), host_capacity.reserved(conf))


class UsableTest(base.TestCase):

    def test_a_host_counts_as_it_is_by_default(self):
        self.assertEqual((8, 8192, 100),
                         host_capacity.Usable().of(8, 8192, 100))

    def test_the_reserve_is_taken_before_the_ratio_applies(self):
        conf = nova_conf(cpu_allocation_ratio=4.0, ram_allocation_ratio=1.5,
                         disk_allocation_ratio=1.0, reserved_host_cpus=2,
                         reserved_host_memory_mb=1024,
                         reserved_host_disk_mb=2048)
        self.assertEqual((24, 10752, 98), host_capacity.from_nova_conf(
            conf).of(8, 8192, 100))

    def test_nova_defaults_keep_512_mb_of_each_host(self):
        self.assertEqual((32, 7680, 100), host_capacity.from_nova_conf(
            cfg.ConfigOpts()).of(8, 8192, 100))
