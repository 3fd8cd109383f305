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

"""The bodies of /v1/os-hosts: refused before Nova or the DB is asked."""

from unittest import mock

from reservation_ext import clock
from reservation_ext import conf as conf_mod
from reservation_ext import context
from reservation_ext import exceptions
from reservation_ext.hosts import inventory
from tests import base


NAME_REASON = ('must be a host name, an id or a hypervisor hostname: '
               'letters, digits, "-", "." and "_", at most 255 characters')
CAPABILITY_REASON = ('must be a string of at most 255 characters or a '
                     'number (an extra capability)')


class HostRequestTest(base.TestCase):

    def setUp(self):
        super().setUp()
        self.nova = mock.Mock()
        self.inventory = inventory.HostInventory(
            conf_mod.CONF.reservation, clock.SYSTEM, self.nova)
        self.ctx = context.get_admin_context()

    def assertInvalid(self, field, reason, call, *args):
        error = self.assertRaises(exceptions.InvalidInput, call, self.ctx,
                                  *args)
        self.assertEqual((field, reason), (error.field, error.reason))

    def test_bad_creates_name_the_field(self):
        for body, field, reason in [
                ([], 'body', 'must be an object'),
                ({}, 'name', 'Missing parameter name'),
                ({'name': ''}, 'name', NAME_REASON),
                ({'name': 'compute 1'}, 'name', NAME_REASON),
                ({'name': 'compute-1', 'gpu': ['a']}, 'gpu',
                 CAPABILITY_REASON),
                ({'name': 'compute-1', 'vcpus': 8}, 'vcpus',
                 'is a property of the host, not an extra capability'),
        ]:
            self.assertInvalid(field, reason, self.inventory.create, body)
        self.nova.find_hypervisor.assert_not_called()

    def test_bad_updates_name_the_field(self):
        self.assertInvalid('gpu', CAPABILITY_REASON, self.inventory.update,
                           '1', {'gpu': {}})
        self.assertInvalid('service_name', 'is a property of the host, not '
                           'an extra capability', self.inventory.update, '1',
                           {'service_name': None})

    def test_extra_capability_keys_longer_than_blazars_are_refused(self):
        key = 'k' * 65
        reason = 'Extra capability key too long (at most 64 characters)'
        self.assertInvalid(key, reason, self.inventory.create,
                           {'name': 'compute-1', 'gpu': 'true', key: 'x'})
        self.nova.find_hypervisor.assert_not_called()
        self.assertInvalid(key, reason, self.inventory.update, '1',
                           {key: 'x'})

    def test_bad_property_updates_name_the_field(self):
        for body, field, reason in [
                ({}, 'private', 'Missing parameter private'),
                ({'private': 'yes'}, 'private', 'must be a boolean'),
                ({'private': True, 'public': False}, 'public',
                 'unknown key'),
        ]:
            self.assertInvalid(field, reason, self.inventory.update_property,
                               'gpu', body)
