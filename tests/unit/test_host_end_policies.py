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

"""The host end policies' booking window (no DB, no Nova)."""

import datetime

from reservation_ext.plugins import host_end_policies
from tests import base


class HeldUntilTest(base.TestCase):

    def test_the_hosts_are_held_for_the_grace_period_too(self):
        end = datetime.datetime(2027, 1, 12, 9, 0)
        self.assertEqual(end + datetime.timedelta(hours=1),
                         host_end_policies.held_until({'end_date': end},
                                                      3600))
        self.assertEqual(end, host_end_policies.held_until(
            {'end_date': end}, None))
