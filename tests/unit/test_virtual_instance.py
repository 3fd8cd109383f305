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

"""The virtual:instance plugin's request validation."""

from oslo_config import cfg

from reservation_ext import clock
from reservation_ext import exceptions
from reservation_ext.plugins import virtual_instance
from tests import base

SERVER = '0b6a4f1e-8c2d-4e3f-9a1b-2c3d4e5f6071'
SIZE = {'vcpus': 2, 'memory_mb': 4096, 'disk_gb': 40}


class ValidateTest(base.TestCase):

    def setUp(self):
        super().setUp()
        self.plugin = virtual_instance.VirtualInstancePlugin(cfg.CONF,
                                                             clock.SYSTEM)

    def assertInvalid(self, field, **values):
        error = self.assertRaises(exceptions.InvalidInput,
                                  self.plugin.validate,
                                  dict(dict(SIZE, server_id=SERVER),
                                       **values))
        self.assertEqual(field, error.field)

    def test_defaults(self):
        self.assertEqual(
            dict(SIZE, server_id=SERVER, flavor_id=None, shared_pool=False,
                 on_end='delete'),
            self.plugin.validate(dict(SIZE, server_id=SERVER.upper())))

    def test_on_end_defaults_to_the_option(self):
        cfg.CONF.set_override('instance_on_end', 'shelve',
                              group='reservation')
        self.assertEqual('shelve', self.plugin.validate(
            dict(SIZE, server_id=SERVER))['on_end'])

    def test_bad_input_names_the_field(self):
        self.assertInvalid('server_id', server_id=None)
        self.assertInvalid('server_id', server_id='vm1')
        self.assertInvalid('vcpus', vcpus=None)
        self.assertInvalid('vcpus', vcpus=-1)
        self.assertInvalid('memory_mb', memory_mb='4096')
        self.assertInvalid('disk_gb', disk_gb=True)
        self.assertInvalid('flavor_id', flavor_id=1)
        self.assertInvalid('shared_pool', shared_pool='yes')
        self.assertInvalid('on_end', on_end='release')
        self.assertInvalid('colour', colour='red')

    def test_an_update_changes_the_flavor_not_the_size(self):
        for values, field in [({'vcpus': 2}, 'vcpus'),
                              ({'flavor_id': ''}, 'flavor_id'),
                              ({'server_id': 'x'}, 'server_id'),
                              ({'on_end': 'keep'}, 'on_end')]:
            error = self.assertRaises(exceptions.InvalidInput,
                                      self.plugin.prepare_update, None,
                                      {'server_id': SERVER}, values)
            self.assertEqual(field, error.field)
        self.assertEqual({'on_end': 'shelve'}, self.plugin.prepare_update(
            None, {'server_id': SERVER}, {'on_end': 'shelve'}))
