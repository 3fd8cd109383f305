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

"""The sandbox's Heat: what heat.conf and the catalog say of it."""

import os

from reservation_ext.sandbox import config
from reservation_ext.sandbox.heat import settings
from tests import base
from tests import sandbox_files


class HeatConfTest(base.TestCase):

    def heat_conf(self):
        return sandbox_files.write(self, ['heat'])['heat']

    def test_the_encryption_key_has_the_32_characters_heat_requires(self):
        key = settings.encryption_key('secret')
        self.assertEqual(32, len(key))
        self.assertEqual(key, settings.encryption_key('secret'))
        self.assertNotEqual(key, settings.encryption_key('other'))

    def test_the_stack_user_domain_and_its_admin_are_named(self):
        conf = self.heat_conf()
        self.assertEqual(
            ('heat', 'heat_domain_admin', 'secret', 'heat_stack_user'),
            tuple(conf.get('DEFAULT', option) for option in (
                'stack_user_domain_name', 'stack_domain_admin',
                'stack_domain_admin_password', 'heat_stack_user_role')))

    def test_trusts_delegate_to_the_services_user_without_a_project(self):
        conf = self.heat_conf()
        self.assertEqual('trusts', conf.get('DEFAULT',
                                            'deferred_auth_method'))
        self.assertEqual(('password', 'admin', 'Default'), (
            conf.get('trustee', 'auth_type'),
            conf.get('trustee', 'username'),
            conf.get('trustee', 'user_domain_name')))
        self.assertEqual([], [option for option in conf.options('trustee')
                              if option.startswith('project_')])

    def test_the_api_pipeline_is_the_one_the_heat_wheel_installs(self):
        path = self.heat_conf().get('paste_deploy', 'api_paste_config')
        self.assertEqual(settings.paste_path(), path)
        self.assertTrue(os.path.exists(path), path)

    def test_no_broker_is_needed(self):
        self.assertEqual('fake://', self.heat_conf().get('DEFAULT',
                                                         'transport_url'))


class HeatCatalogTest(base.TestCase):

    def test_heat_api_has_the_project_in_its_path_and_cfn_its_own_port(self):
        layout = config.Layout(
            state_dir='/tmp/x', hosts=1, password='p',
            ports={name: 9000 + i for i, name in enumerate(config.SERVICES)})
        endpoints = layout.endpoints
        self.assertEqual(('heat', layout.url('heat') + '/v1/%(project_id)s'),
                         endpoints['orchestration'])
        self.assertEqual(('heat-cfn', layout.url('heat-cfn') + '/v1'),
                         endpoints['cloudformation'])
