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

"""A keystoneauth1 auth plugin for Nova's functional harness.

Nova's harness replaces keystonemiddleware by a stub that builds the
request context from ``X-Auth-User``, ``X-Auth-Project-Id`` and
``X-Roles`` (``nova.tests.fixtures.OSAPIFixture``). With this plugin
(``auth_type = reservation_test_headers``, registered by
``tests.fixtures.TestPlugins``) the service user of
``[reservation_client]`` sends those headers, so that the real
``NovaClient`` reaches the real Nova API in tests. The endpoints are
those of :data:`ENDPOINTS` (a catalog the tests fill in) unless the
adapter has an ``endpoint_override``.
"""

from keystoneauth1 import loading
from keystoneauth1 import plugin

NAME = 'reservation_test_headers'
# {service_type: URL}
ENDPOINTS = {}


class HeaderAuth(plugin.BaseAuthPlugin):

    def __init__(self, user_id=None, project_id=None, roles=None):
        # oslo.config passes None for options that are not set.
        super().__init__()
        self.user_id = user_id or 'admin'
        self.project_id = project_id or 'admin'
        self.roles = roles or 'admin,member,reader'

    def get_headers(self, session, **kwargs):
        return {'X-Auth-User': self.user_id,
                'X-Auth-Project-Id': self.project_id,
                'X-Roles': self.roles}

    def get_endpoint(self, session, service_type=None, **kwargs):
        return ENDPOINTS.get(service_type)

    def get_user_id(self, session, **kwargs):
        return self.user_id

    def get_project_id(self, session, **kwargs):
        return self.project_id


class HeaderAuthLoader(loading.BaseLoader):

    @property
    def plugin_class(self):
        return HeaderAuth

    def get_options(self):
        return [loading.Opt('user-id'), loading.Opt('project-id'),
                loading.Opt('roles')]
