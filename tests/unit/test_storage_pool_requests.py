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

"""The JSON Schemas of the /v1/storage-pools bodies, and their errors."""

from reservation_ext import exceptions
from reservation_ext.storage_pools import schemas
from reservation_ext import validation
from tests import base

NAME_REASON = ("must be a pool's name as Cinder reports it, "
               'host@backend#pool, of at most 255 characters')
CAPABILITY_REASON = ('must be a string of at most 255 characters or a '
                     'number (an extra capability)')


class StoragePoolRequestTest(base.TestCase):

    def assertInvalid(self, field, reason, body, schema=schemas.CREATE):
        error = self.assertRaises(exceptions.InvalidInput,
                                  validation.check_schema, body, schema)
        self.assertEqual((field, reason), (error.field, error.reason))

    def test_a_create_names_a_pool_as_cinder_reports_it(self):
        for name in ('storage-1@ssd#gold', 'storage-1#gold',
                     'node.example.com@rbd-1#volumes',
                     'cluster@nfs#10.0.0.5:/exports/cinder',
                     'h@b#' + 'p' * 251):
            validation.check_schema({'name': name}, schemas.CREATE)

    def test_a_name_that_is_no_pool_name_is_refused_naming_name(self):
        for name in ('', 'storage-1@ssd', '#gold', 'storage-1@ssd#',
                     'a@b#c#d', 'a@b#c\n', 'a\t@b#c', 'h@b#' + 'p' * 252,
                     7, None, ['a@b#c']):
            self.assertInvalid('name', NAME_REASON, {'name': name})
        self.assertInvalid('name', 'Missing parameter name', {'tier': 'a'})

    def test_extra_capabilities_are_short_strings_or_numbers(self):
        validation.check_schema({'name': 'a@b#c', 'tier': 'fast',
                                 'replicas': 3, 'ratio': 1.5, 'ssd': True},
                                schemas.CREATE)
        for value in (['fast'], {'a': 1}, None, 'x' * 256):
            self.assertInvalid('tier', CAPABILITY_REASON,
                               {'name': 'a@b#c', 'tier': value})

    def test_an_update_sets_extra_capabilities_or_removes_them_with_null(
            self):
        validation.check_schema({'tier': None, 'zone': 'a', 'replicas': 2},
                                schemas.UPDATE)
        self.assertInvalid('tier', CAPABILITY_REASON, {'tier': ['a']},
                           schemas.UPDATE)
        self.assertInvalid('body', 'must be an object', ['tier'],
                           schemas.UPDATE)
