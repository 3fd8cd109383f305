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

"""The sandbox's nova-scheduler options, as Nova's own options read them."""

import os

import fixtures
from nova.conf import scheduler as nova_scheduler_conf
from oslo_config import cfg

from reservation_ext.sandbox import config
from tests import base


class SandboxSchedulerOptionsTest(base.TestCase):

    def filter_scheduler(self):
        layout = config.Layout(
            state_dir=self.useFixture(fixtures.TempDir()).path, hosts=1,
            ports={name: 10000 + i for i, name in enumerate(config.SERVICES)},
            password='secret')
        config.write_nova_conf(layout)
        conf = cfg.ConfigOpts()
        nova_scheduler_conf.register_opts(conf)
        conf([], project='nova', default_config_files=[
            os.path.join(layout.state_dir, 'nova.conf')])
        return conf.filter_scheduler

    def test_novas_weighers_and_ours_are_all_enabled(self):
        # weight_classes is a ListOpt: of repeated lines only the last
        # would count, and Nova's weighers would not run.
        self.assertEqual(list(config.WEIGHT_CLASSES),
                         self.filter_scheduler().weight_classes)

    def test_novas_filters_and_ours_are_available(self):
        self.assertEqual(['nova.scheduler.filters.all_filters',
                          config.RESERVATION_FILTER],
                         self.filter_scheduler().available_filters)
