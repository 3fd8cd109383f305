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

"""Which preemptible servers give way to a booking."""

from reservation_ext.planning import reclaim_choice
from tests import base

HOST = (8, 16384, 100)


def server(name, created_at, vcpus=2, memory_mb=4096, disk_gb=10):
    return reclaim_choice.Server(name, (vcpus, memory_mb, disk_gb), created_at)


class ToReclaimTest(base.TestCase):

    def test_a_whole_host_booking_stops_every_preemptible_newest_first(self):
        servers = [server('old', 1), server('new', 3), server('mid', 2)]
        stopped = reclaim_choice.to_reclaim(HOST, [None], servers)
        self.assertEqual(['new', 'mid', 'old'],
                         [s.id for s in stopped])

    def test_a_slice_that_fits_beside_the_preemptibles_stops_none(self):
        servers = [server('a', 1), server('b', 2)]
        self.assertEqual([], reclaim_choice.to_reclaim(
            HOST, [(4, 8192, 20)], servers))

    def test_a_slice_stops_only_as_many_as_it_needs_newest_first(self):
        servers = [server('a', 1), server('b', 2), server('c', 3)]
        stopped = reclaim_choice.to_reclaim(HOST, [(4, 4096, 10)], servers)
        self.assertEqual(['c'], [s.id for s in stopped])

    def test_any_dimension_that_overflows_makes_a_preemptible_stop(self):
        servers = [server('a', 1, vcpus=1, memory_mb=12500),
                   server('b', 2, vcpus=1, memory_mb=1000)]
        stopped = reclaim_choice.to_reclaim(HOST, [(1, 4096, 1)], servers)
        self.assertEqual(['b', 'a'], [s.id for s in stopped])

    def test_what_other_servers_use_is_counted(self):
        servers = [server('a', 1), server('b', 2)]
        self.assertEqual(['b'], [s.id for s in reclaim_choice.to_reclaim(
            HOST, [(2, 4096, 10)], servers, others=(2, 8192, 10))])

    def test_no_preemptibles_means_nothing_to_stop(self):
        self.assertEqual([], reclaim_choice.to_reclaim(HOST, [None], []))
