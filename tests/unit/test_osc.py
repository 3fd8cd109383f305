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

"""The ``--reservation key=value,...`` syntax of the OpenStackClient plugin."""

from reservation_ext.osc import v1
from tests import base


class ParseReservationTest(base.TestCase):

    def test_json_values_keep_their_commas(self):
        self.assertEqual(
            {'resource_type': 'physical:host', 'min': '4', 'max': '4',
             'resource_properties': ['=', '$gpu', 'true'],
             'hosts': ['compute-1', 'compute-2']},
            v1.parse_reservation(
                'resource_type=physical:host,min=4,max=4,'
                'resource_properties=["=", "$gpu", "true"],'
                'hosts=["compute-1", "compute-2"]'))

    def test_text_that_is_not_json_stays_text(self):
        self.assertEqual({'resource_properties': '[not json'},
                         v1.parse_reservation('resource_properties=[not json'))

    def test_text_without_a_key_is_refused(self):
        error = self.assertRaises(ValueError, v1.parse_reservation, 'min')
        self.assertIn("got 'min'", str(error))

    def test_a_comma_not_followed_by_a_key_belongs_to_the_value(self):
        # The API then names the field whose value it cannot use.
        self.assertEqual({'resource_type': 'physical:host,min'},
                         v1.parse_reservation('resource_type=physical:host,'
                                              'min'))
