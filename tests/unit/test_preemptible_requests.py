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

"""Which boots are preemptible: the flavor's extra spec or the hint."""

from reservation_ext import exceptions
from reservation_ext.planning import preemptible_placement as placement
from tests import base

SPEC = placement.EXTRA_SPEC


class PreemptibleRequestTest(base.TestCase):

    def test_the_flavor_extra_spec_makes_a_boot_preemptible(self):
        for value in ('true', 'True', '1', 'yes'):
            self.assertTrue(placement.is_preemptible({SPEC: value}, {}))
        self.assertFalse(placement.is_preemptible({SPEC: 'false'}, {}))

    def test_the_hint_makes_a_boot_preemptible_as_given_or_as_nova_keeps_it(
            self):
        for hints in ({'preemptible': 'true'}, {'preemptible': ['True']}):
            self.assertTrue(placement.is_preemptible({}, hints))
        self.assertFalse(placement.is_preemptible(
            {}, {'preemptible': ['false']}))

    def test_a_boot_without_either_is_not_preemptible(self):
        self.assertFalse(placement.is_preemptible(None, None))
        self.assertFalse(placement.is_preemptible({'hw:cpu': '2'},
                                                  {'reserved': 'True'}))

    def test_a_capacity_reservations_flavor_is_never_preemptible(self):
        self.assertFalse(placement.is_preemptible(
            {SPEC: 'true', 'reservation:id': 'r1'}, {'preemptible': 'true'}))

    def test_the_hint_must_be_a_boolean(self):
        self.assertTrue(placement.check_hint({'preemptible': 'yes'}))
        self.assertFalse(placement.check_hint({}))
        error = self.assertRaises(exceptions.InvalidInput,
                                  placement.check_hint,
                                  {'preemptible': 'maybe'})
        self.assertIn('preemptible', str(error))
