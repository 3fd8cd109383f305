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

"""A stack's window search against a brute-force model, on random schedules.

The timeline of a stack (:class:`timelines.AllOf` of the
:class:`timelines.Packed` servers, the volume GB and each network's
addresses) against a model that knows nothing of intervals or sweeps: it
walks every minute of the horizon, packs the servers flavor by flavor
from the first host up as the planner books them, sums the GB, counts
the free addresses, and keeps what it took in plain lists.
"""

import datetime
import random

import fixtures

from reservation_ext import exceptions
from reservation_ext.planning import floating_ips
from reservation_ext.planning import timelines
from tests import base

T0 = datetime.datetime(2030, 1, 1)
MINUTE = datetime.timedelta(minutes=1)
# A host of 8 vCPUs, 8192 MB and 100 GB; the flavors the stacks take.
HOST = (8, 8192, 100)
FLAVORS = [(4, 4096, 40), (2, 2048, 20), (1, 512, 10), (8, 1024, 5),
           (2, 6144, 0)]


def at(minutes):
    return T0 + minutes * MINUTE


class Stack:
    """What a stack needs: ``[(size, count)]``, GB, ``{network: count}``."""

    def __init__(self, servers, volume_gb=0, addresses=None):
        self.servers = servers
        self.volume_gb = volume_gb
        self.addresses = addresses or {}


class Schedule:
    """What is booked: slices by host, GB, and addresses by network.

    ``hosts``: ``{host: (capacity, [(start, end, size or None)])}`` in
    the order of preference; ``gb``: ``(total, [(start, end, gb)])``;
    ``networks``: ``{network: {address: [(start, end)]}}``, addresses in
    order.
    """

    def __init__(self, hosts, gb, networks):
        self.hosts = hosts
        self.gb = gb
        self.networks = networks


class BruteForce:
    """Proposals of a stack as the contract defines them, the slow way."""

    def __init__(self, schedule, duration, cleaning):
        self.hosts = {host: (capacity, list(booked))
                      for host, (capacity, booked) in schedule.hosts.items()}
        self.total, held = schedule.gb
        self.held = list(held)
        self.networks = {network: {address: list(booked)
                                   for address, booked in addresses.items()}
                         for network, addresses in schedule.networks.items()}
        self.duration, self.cleaning = duration, cleaning

    def overlaps(self, a, b, start, margin):
        return a - margin < start + self.duration and b + margin > start

    def used(self, host, start):
        used = [0, 0, 0]
        for a, b, size in self.hosts[host][1]:
            if self.overlaps(a, b, start, self.cleaning):
                if size is None:
                    return None
                used = [u + s for u, s in zip(used, size)]
        return used

    def seats(self, host, used, size, left):
        capacity = self.hosts[host][0]
        if used is None or any(c - u < s for c, u, s in
                               zip(capacity, used, size)):
            return 0
        counts = [(c - u) // s for c, u, s in zip(capacity, used, size)
                  if s]
        return min(counts + [left])

    def pack(self, stack, start):
        used = {host: self.used(host, start) for host in self.hosts}
        placed = []
        for size, count in stack.servers:
            left = count
            for host in self.hosts:
                seats = self.seats(host, used[host], size, left)
                for _seat in range(seats):
                    used[host] = [u + s for u, s in zip(used[host], size)]
                    placed.append((host, size))
                left -= seats
            if left:
                return None
        return placed

    def gb_fits(self, stack, start):
        held = sum(gb for a, b, gb in self.held
                   if self.overlaps(a, b, start, 0))
        return held + stack.volume_gb <= self.total

    def free_addresses(self, network, start):
        return [address for address, booked in self.networks[network].items()
                if not any(self.overlaps(a, b, start, self.cleaning)
                           for a, b in booked)]

    def fits(self, stack, start):
        return (self.pack(stack, start) is not None and
                (not stack.volume_gb or self.gb_fits(stack, start)) and
                all(len(self.free_addresses(network, start)) >= count
                    for network, count in stack.addresses.items()))

    def freed_at(self, stack, moment):
        """Whether a part of the stack's timeline is freed at ``moment``."""
        ends = [b + self.cleaning for _capacity, booked in
                self.hosts.values() for _a, b, _size in booked]
        if stack.volume_gb:
            ends += [b for _a, b, _gb in self.held]
        ends += [b + self.cleaning for network in stack.addresses
                 for booked in self.networks[network].values()
                 for _a, b in booked]
        return moment in ends

    def take(self, stack, start):
        end = start + self.duration
        placed = self.pack(stack, start)
        for host, size in placed:
            self.hosts[host][1].append((start, end, size))
        taken = [placed]
        if stack.volume_gb:
            self.held.append((start, end, stack.volume_gb))
            taken.append(stack.volume_gb)
        for network, count in stack.addresses.items():
            chosen = self.free_addresses(network, start)[:count]
            for address in chosen:
                self.networks[network][address].append((start, end))
            taken.append(chosen)
        return taken

    def copies(self, stack, moment):
        """How many times the stack fits at once at ``moment`` (1 minute).

        The servers packed one copy after the other, each taking its
        slices for that minute; the GB free over the stack's; the free
        addresses of each network over its count.
        """
        counts = []
        if stack.servers:
            model = BruteForce(Schedule(self.hosts, (self.total, self.held),
                                        self.networks), 1, self.cleaning)
            copies = 0
            while copies < timelines.MOST_COPIES:
                placed = model.pack(stack, moment)
                if placed is None:
                    break
                for host, size in placed:
                    model.hosts[host][1].append((moment, moment + 1, size))
                copies += 1
            counts.append(copies)
        if stack.volume_gb:
            held = sum(gb for a, b, gb in self.held if a <= moment < b)
            counts.append((self.total - held) // stack.volume_gb)
        counts += [len(self.free_addresses(network, moment)) // count
                   for network, count in stack.addresses.items()]
        return min(counts)

    def proposals(self, stack, first, last, count):
        found = []
        for start in range(first, last + 1):
            if len(found) == count:
                break
            candidate = start == first or self.freed_at(stack, start)
            if candidate and self.fits(stack, start):
                found.append((start, self.take(stack, start)))
        return found


def stack_timeline(schedule, stack, duration, cleaning, first, last):
    """The stack's timeline, as the plugin builds it, over the schedule."""
    span = timelines.Span(at(first), at(last), duration * MINUTE,
                          cleaning * MINUTE)
    parts = [timelines.Packed(
        span, {host: capacity for host, (capacity, _booked)
               in schedule.hosts.items()},
        {host: [timelines.Allocation(at(a), at(b), size)
                for a, b, size in booked]
         for host, (_capacity, booked) in schedule.hosts.items()},
        stack.servers)]
    if stack.volume_gb:
        total, held = schedule.gb
        parts.append(timelines.Capacity(span, total, [
            timelines.Allocation(at(a), at(b), gb) for a, b, gb in held],
            stack.volume_gb))
    for network, count in stack.addresses.items():
        parts.append(floating_ips.Addresses(span, {
            address: [timelines.Allocation(at(a), at(b)) for a, b in booked]
            for address, booked in schedule.networks[network].items()},
            count, count))
    return timelines.AllOf(span, parts)


def random_window(rng, horizon):
    start = rng.randrange(horizon)
    return start, start + rng.randrange(1, 120)


def random_schedule(rng, hosts, horizon):
    booked = {host: [] for host in range(hosts)}
    for _ in range(rng.randrange(0, 25)):
        host = rng.randrange(hosts)
        size = None if rng.random() < 0.15 else rng.choice(FLAVORS)
        booked[host].append(random_window(rng, horizon) + (size,))
    gb = (100, [random_window(rng, horizon) + (rng.randrange(10, 80),)
                for _ in range(rng.randrange(0, 6))])
    networks = {network: {'%s-%d' % (network, index): [
        random_window(rng, horizon) for _ in range(rng.randrange(0, 3))]
        for index in range(rng.randrange(1, 4))}
        for network in ('public', 'private')}
    return Schedule({host: (HOST, windows)
                     for host, windows in booked.items()}, gb, networks)


def random_stack(rng):
    flavors = rng.sample(FLAVORS, rng.randint(1, 3))
    return Stack([(size, rng.randint(1, 4)) for size in flavors],
                 rng.choice([0, 0, 20, 50]),
                 {network: rng.randint(1, 2) for network in
                  rng.sample(['public', 'private'], rng.randint(0, 2))})


class TestStackTimeline(base.TestCase):

    def test_proposals_match_the_brute_force_model(self):
        rng = random.Random(5)
        for case in range(200):
            schedule = random_schedule(rng, rng.randint(1, 4), 400)
            stack = random_stack(rng)
            duration = rng.randrange(1, 90)
            cleaning = rng.choice([0, 0, 5, 30])
            first, last = rng.randrange(0, 100), rng.randrange(100, 500)
            count = rng.randint(1, 5)
            expected = BruteForce(schedule, duration, cleaning).proposals(
                stack, first, last, count)
            found = timelines.first_starts([stack_timeline(
                schedule, stack, duration, cleaning, first, last)],
                at(first), count)
            with self.subTest(case=case):
                self.assertEqual(
                    [(at(start), [taken]) for start, taken in expected],
                    found)

    def test_availability_matches_the_brute_force_model(self):
        rng = random.Random(7)
        for case in range(150):
            schedule = random_schedule(rng, rng.randint(1, 4), 300)
            stack = random_stack(rng)
            cleaning = rng.choice([0, 0, 5, 30])
            start, end = rng.randrange(0, 150), rng.randrange(150, 350)
            model = BruteForce(schedule, 1, cleaning)
            expected = [model.copies(stack, minute)
                        for minute in range(start, end)]
            steps, hosts = stack_timeline(
                schedule, stack, end - start, cleaning, start,
                start).timeline(at(start), at(end))
            shown = [amount for lower, upper, amount in steps
                     for _minute in range((upper - lower) // MINUTE)]
            with self.subTest(case=case):
                self.assertEqual(({}, expected), (hosts, shown))
                # Steps that say the same are joined.
                self.assertTrue(all(a[2] != b[2]
                                    for a, b in zip(steps, steps[1:])))

    def test_availability_refuses_a_period_too_long_to_pack(self):
        self.useFixture(fixtures.MockPatchObject(
            timelines, 'MOST_PACKING_VISITS', 20))
        schedule = Schedule({0: (HOST, [(10, 20, FLAVORS[0])]),
                             1: (HOST, [(30, 40, FLAVORS[1])])}, (100, []),
                            {})
        two = Stack([(FLAVORS[0], 1), (FLAVORS[1], 1)])
        error = self.assertRaises(
            exceptions.InvalidInput, stack_timeline(
                schedule, two, 100, 0, 0, 0).timeline, at(0), at(100))
        self.assertEqual('end', error.field)
        self.assertIn('ask for a period about 2 times shorter', str(error))
        # One size is counted host by host, however long the period.
        one = stack_timeline(schedule, Stack([(FLAVORS[0], 1)]), 100, 0, 0,
                             0)
        self.assertEqual([(at(0), at(10), 4), (at(10), at(20), 3),
                          (at(20), at(30), 4), (at(30), at(40), 3),
                          (at(40), at(100), 4)],
                         one.timeline(at(0), at(100))[0])

    def test_flavors_pack_in_order_on_shared_hosts(self):
        # As the planner books them: two larges fill the first host,
        # the smalls go on the next one, then back-to-back windows.
        schedule = Schedule({0: (HOST, []), 1: (HOST, [])}, (100, []), {})
        stack = Stack([((4, 4096, 40), 2), ((2, 2048, 20), 4)])
        found = timelines.first_starts([stack_timeline(
            schedule, stack, 60, 0, 0, 1000)], at(0), 2)
        placed = [(0, (4, 4096, 40))] * 2 + [(1, (2, 2048, 20))] * 4
        self.assertEqual([(at(0), [[placed]]), (at(60), [[placed]])],
                         found)

    def test_a_window_waits_for_every_need(self):
        # The host is busy until 50, the GB until 100, the only address
        # until 150.
        schedule = Schedule(
            {0: (HOST, [(0, 50, (8, 1024, 5))])}, (100, [(0, 100, 90)]),
            {'public': {'a': [(0, 150)]}})
        stack = Stack([((4, 4096, 40), 1)], 20, {'public': 1})
        timeline = stack_timeline(schedule, stack, 30, 0, 0, 1000)
        self.assertEqual(
            [(at(150), [[[(0, (4, 4096, 40))], 20, ['a']]])],
            timelines.first_starts([timeline], at(0), 1))

    def test_a_whole_host_allocation_leaves_no_room(self):
        schedule = Schedule({0: (HOST, [(0, 100, None)]), 1: (HOST, [])},
                            (100, []), {})
        stack = Stack([((2, 2048, 20), 5)])
        timeline = stack_timeline(schedule, stack, 30, 0, 0, 1000)
        self.assertEqual((4 * [(1, (2, 2048, 20))], (0, 1)),
                         timeline.parts[0].pack(at(0)))
        self.assertEqual([at(100)], [start for start, _taken in
                                     timelines.first_starts(
                                         [timeline], at(0), 1)])

    def test_a_host_over_its_size_takes_no_slice_as_in_the_planner(self):
        # Host 0 carries more disk than it has (its size shrank): the
        # planner's room test refuses it even for a flavor without disk.
        schedule = Schedule({0: (HOST, [(0, 100, (1, 512, 60)),
                                        (0, 100, (1, 512, 60))]),
                             1: (HOST, [])}, (100, []), {})
        timeline = stack_timeline(schedule, Stack([((2, 6144, 0), 1)]), 30,
                                  0, 0, 1000)
        self.assertEqual(([(1, (2, 6144, 0))], None),
                         timeline.parts[0].pack(at(0)))

    def test_the_generations_of_every_part_are_merged(self):
        span = timelines.Span(at(0), at(10), MINUTE)
        packed = timelines.Packed(span, {1: HOST}, {}, [(HOST, 1)],
                                  generations={1: 7})
        addresses = floating_ips.Addresses(span, {'fip': []}, 1, 1,
                                           generations={'fip': 3})
        self.assertEqual({1: 7, 'fip': 3},
                         timelines.AllOf(span, [packed, addresses])
                         .generations)
