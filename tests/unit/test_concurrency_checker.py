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

"""The concurrency checker fails on crafted histories that break the rules.

Two hosts (16 vCPUs, 32768 MB, 500 GB each; Nova's ratios and its 512 MB
reserve), 30 minutes of cleaning time, 100 reservable volume GB. Each
history is a few records as the clients write them.
"""

import datetime

from oslotest import base

from harness.concurrency import checker
from harness.concurrency import workload

T0 = datetime.datetime(2027, 1, 10, 10, 0)
LIMITS = checker.Limits(hosts={1: (16, 32768, 500), 2: (16, 32768, 500)},
                        cleaning_time=30, ratios=(4.0, 1.0, 1.0),
                        reserved=(0, 512, 0), volume_gb=100)


def at(hours):
    return T0 + datetime.timedelta(hours=hours)


def whole(host, hours):
    return {'host_id': host, 'start': at(hours[0]), 'end': at(hours[1]),
            'whole': True, 'vcpus': 0, 'memory_mb': 0, 'disk_gb': 0}


def piece(host, hours, vcpus=1, memory_mb=1024, disk_gb=10):
    return {'host_id': host, 'start': at(hours[0]), 'end': at(hours[1]),
            'whole': False, 'vcpus': vcpus, 'memory_mb': memory_mb,
            'disk_gb': disk_gb}


def record(op, kind, times, status, lease=None, hours=(0, 2), **fields):
    return workload.Record(client=0, op=op, kind=kind, send=times[0],
                           receive=times[1], status=status, lease=lease,
                           window=(at(hours[0]), at(hours[1])), **fields)


def host_create(lease, times, allocations, status=201, count=1,
                hours=(0, 2)):
    return record('create', 'host', times, status, lease, hours,
                  allocations=allocations,
                  request_size={'min': count, 'max': count})


class TestHistories(base.BaseTestCase):

    def violations(self, *records):
        return checker.history_violations(list(records), LIMITS)

    def test_leases_that_fit_pass(self):
        self.assertEqual([], self.violations(
            host_create('a', (0, 1), [whole(1, (0, 2))]),
            host_create('b', (0, 1), [whole(2, (0, 2))]),
            # Host 1 again, after the end and the cleaning time.
            host_create('c', (2, 3), [whole(1, (2.5, 4))], hours=(2.5, 4)),
            host_create('d', (4, 5), [], status=409),
        ))

    def test_a_double_booking_is_found(self):
        found = self.violations(
            host_create('a', (0, 1), [whole(1, (0, 2))]),
            host_create('b', (2, 3), [whole(1, (2.25, 4))],
                        hours=(2.25, 4)))
        self.assertEqual(1, len(found), found)
        self.assertIn('host 1 is in two overlapping allocations', found[0])

    def test_a_booking_after_a_delete_is_no_double_booking(self):
        self.assertEqual([], self.violations(
            host_create('a', (0, 1), [whole(1, (0, 2))]),
            record('delete', 'host', (2, 3), 204, 'a'),
            host_create('b', (4, 5), [whole(1, (0, 2))])))

    def test_a_booking_while_a_delete_runs_is_not_judged(self):
        # Both may have been at once, or not: nothing sure is wrong.
        self.assertEqual([], self.violations(
            host_create('a', (0, 1), [whole(1, (0, 2))]),
            record('delete', 'host', (2, 5), 204, 'a'),
            host_create('b', (3, 4), [whole(1, (0, 2))])))

    def test_slices_over_capacity_are_found(self):
        # 32256 MB usable: two slices of 16384 MB do not fit at once.
        first = record('create', 'capacity', (0, 1), 201, 'a',
                       allocations=[piece(1, (0, 2), memory_mb=16384)])
        second = record('create', 'capacity', (2, 3), 201, 'b',
                        hours=(1, 3),
                        allocations=[piece(1, (1, 3), memory_mb=16384)])
        found = self.violations(first, second)
        self.assertEqual(1, len(found), found)
        self.assertIn('host 1 carries slices', found[0])
        # Side by side in time, they do fit.
        second.allocations = [piece(1, (2, 3), memory_mb=16384)]
        self.assertEqual([], self.violations(first, second))

    def test_volume_capacity_exceeded_is_found(self):
        found = self.violations(
            record('create', 'volume', (0, 1), 201, 'a',
                   volumes=[{'start': at(0), 'end': at(2), 'gb': 60}]),
            record('create', 'volume', (2, 3), 201, 'b',
                   volumes=[{'start': at(1), 'end': at(3), 'gb': 60}]))
        self.assertEqual(1, len(found), found)
        self.assertIn('120 volume GB', found[0])

    def test_a_live_hold_and_a_booking_of_the_same_host_are_found(self):
        proposal = record('propose', 'host', (0, 1), 201,
                          proposals={'p1': 100.0},
                          allocations=[dict(whole(1, (0, 2)),
                                            proposal='p1')])
        booking = host_create('a', (2, 3), [whole(1, (0, 2))])
        self.assertIn('two overlapping allocations',
                      self.violations(proposal, booking)[0])
        # Once expired, the hold counts no more.
        proposal.proposals = {'p1': 1.5}
        self.assertEqual([], self.violations(proposal, booking))

    def test_an_unjustified_409_is_found(self):
        found = self.violations(
            host_create('a', (0, 1), [whole(1, (0, 2))]),
            host_create('b', (2, 3), [], status=409, count=1))
        self.assertEqual(1, len(found), found)
        self.assertIn('host create of client 0', found[0])
        self.assertIn('refused with 409, but it fit', found[0])

    def test_a_409_is_justified_by_a_lease_that_may_have_existed(self):
        # Host 2's lease was being deleted during the refused create.
        self.assertEqual([], self.violations(
            host_create('a', (0, 1), [whole(1, (0, 2))]),
            host_create('b', (0, 1), [whole(2, (1, 3))]),
            record('delete', 'host', (2, 4), 204, 'b'),
            host_create('c', (3, 5), [], status=409, count=1)))
        # Deleted before the send: host 2 was free.
        found = self.violations(
            host_create('a', (0, 1), [whole(1, (0, 2))]),
            host_create('b', (0, 1), [whole(2, (1, 3))]),
            record('delete', 'host', (2, 2.5), 204, 'b'),
            host_create('c', (3, 5), [], status=409, count=1))
        self.assertEqual(1, len(found), found)

    def test_unjustified_409s_of_servers_and_volumes_are_found(self):
        size = {'vcpus': 4, 'memory_mb': 8192, 'disk_gb': 100}
        capacity = record('create', 'capacity', (2, 3), 409, hours=(0, 2),
                          request_size=dict(size, amount=2, affinity=True))
        full = host_create('a', (0, 1), [whole(1, (0, 2))])
        # Host 2 takes three such servers: two on one host fit.
        self.assertEqual(1, len(self.violations(full, capacity)))
        capacity.request_size['amount'] = 4
        self.assertEqual([], self.violations(full, capacity))
        volume = record('create', 'volume', (2, 3), 409,
                        request_size={'size_gb': 40})
        held = record('create', 'volume', (0, 1), 201, 'v',
                      volumes=[{'start': at(0), 'end': at(2), 'gb': 60}])
        self.assertEqual(1, len(self.violations(held, volume)))
        volume.request_size['size_gb'] = 41
        self.assertEqual([], self.violations(held, volume))

    def test_a_409_of_a_proposal_not_yet_expired_is_found(self):
        proposal = record('propose', 'host', (0, 1), 201,
                          proposals={'p1': 10.0})
        take = record('create_from_proposal', 'host', (2, 3), 409,
                      body={'proposal_id': 'p1'}, proposals={'p1': None})
        self.assertIn('before it expired',
                      self.violations(proposal, take)[0])
        proposal.proposals = {'p1': 2.5}
        self.assertEqual([], self.violations(proposal, take))

    def test_5xx_and_unexpected_statuses_are_found(self):
        found = self.violations(
            host_create('a', (0, 1), [], status=500),
            record('delete', 'capacity', (2, 3), 404, 'b'),
            record('update', 'capacity', (2, 3), 0, 'b'))
        self.assertEqual(3, len(found), found)
        self.assertIn('answered 500', found[0])
