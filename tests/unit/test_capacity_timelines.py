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

"""Capacity reservations' window search against a brute-force model.

The timeline of ``amount`` servers of one size placed by affinity
(:class:`capacity_proposals.CapacitySlices`) against a model that knows
nothing of intervals or sweeps: it walks every minute of the horizon,
counts each host's room by taking the size from it one server at a
time, places the servers as the planner's booking does (affinity True:
the first host with room for all; False: the first ``amount`` hosts with
room for one; None: filling hosts from the first up), and keeps what it
took in plain lists. The placement itself is also checked against the
planner's own.
"""

import datetime
import random

from reservation_ext import exceptions
from reservation_ext.planning import capacity_proposals
from reservation_ext.planning import planner
from reservation_ext.planning import timelines
from tests import base

T0 = datetime.datetime(2030, 1, 1)
MINUTE = datetime.timedelta(minutes=1)
# Hosts of two sizes, one of them usable beyond its disk only; the sizes
# of the servers asked for and of those booked.
HOSTS = [(8, 8192, 100), (16, 16384, 40)]
FLAVORS = [(4, 4096, 40), (2, 2048, 20), (1, 512, 10), (8, 1024, 5),
           (2, 6144, 0), (1, 0, 0)]
AFFINITIES = (True, False, None)


def at(minutes):
    """The moment ``minutes`` after T0."""
    return T0 + minutes * MINUTE


class BruteForce:
    """Proposals and availability as the contract defines them, slowly.

    ``hosts``: ``{host: (capacity, [(start, end, size or None)])}`` in
    the order of preference; minutes as integers.
    """

    def __init__(self, hosts, duration, cleaning):
        """Copy the schedule: takes add to it."""
        self.hosts = {host: (capacity, list(booked))
                      for host, (capacity, booked) in hosts.items()}
        self.duration, self.cleaning = duration, cleaning

    def used(self, host, start, duration):
        """What overlaps a window on ``host``; None if taken whole."""
        used = [0, 0, 0]
        for a, b, size in self.hosts[host][1]:
            if a - self.cleaning < start + duration and \
                    b + self.cleaning > start:
                if size is None:
                    return None
                used = [u + s for u, s in zip(used, size)]
        return used

    def room(self, host, start, size, duration=None):
        """How many servers of ``size`` fit: taken one at a time."""
        used = self.used(host, start, duration or self.duration)
        if used is None:
            return 0
        capacity = self.hosts[host][0]
        count = 0
        while all(c - u - (count + 1) * s >= 0
                  for c, u, s in zip(capacity, used, size)):
            count += 1
        return count

    def place(self, size, amount, affinity, start):
        """The host of each server at ``start``, as the planner books."""
        rooms = [(host, min(self.room(host, start, size), amount))
                 for host in self.hosts]
        if affinity:
            for host, count in rooms:
                if count >= amount:
                    return [host] * amount
            return None
        if affinity is False:
            hosts = [host for host, count in rooms if count]
            return hosts[:amount] if len(hosts) >= amount else None
        placed = [host for host, count in rooms for _ in range(count)]
        return placed[:amount] if len(placed) >= amount else None

    def freed_at(self, moment):
        """Whether some host's room grows at ``moment``."""
        return moment in [b + self.cleaning for _capacity, booked in
                          self.hosts.values() for _a, b, _size in booked]

    def proposals(self, size, amount, affinity, first, last, count):
        """Each minute from ``first`` to ``last`` that may start, tried."""
        found = []
        for start in range(first, last + 1):
            if len(found) == count:
                break
            if not (start == first or self.freed_at(start)):
                continue
            placed = self.place(size, amount, affinity, start)
            if placed is not None:
                for host in placed:
                    self.hosts[host][1].append(
                        (start, start + self.duration, size))
                found.append((start, [(host, size) for host in placed]))
        return found

    def servers(self, size, affinity, minute):
        """How many servers one reservation could book for that minute."""
        rooms = [self.room(host, minute, size, 1) for host in self.hosts]
        if affinity:
            return max(rooms, default=0)
        if affinity is False:
            return len([room for room in rooms if room])
        return sum(rooms)


def capacity_timeline(hosts, request, duration, cleaning, first, last):
    """The request's timeline, as the plugin builds it, over ``hosts``."""
    span = timelines.Span(at(first), at(last), duration * MINUTE,
                          cleaning * MINUTE)
    return capacity_proposals.CapacitySlices(
        span, {host: capacity for host, (capacity, _booked)
               in hosts.items()},
        {host: [timelines.Allocation(at(a), at(b), size)
                for a, b, size in booked]
         for host, (_capacity, booked) in hosts.items()}, request)


def random_schedule(rng, hosts, horizon):
    """Random hosts and bookings (whole hosts, slices, over-full hosts)."""
    booked = {host: [] for host in range(hosts)}
    for _ in range(rng.randrange(0, 30)):
        start = rng.randrange(horizon)
        size = None if rng.random() < 0.1 else rng.choice(FLAVORS)
        booked[rng.randrange(hosts)].append(
            (start, start + rng.randrange(1, 120), size))
    return {host: (rng.choice(HOSTS), windows)
            for host, windows in booked.items()}


def random_request(rng):
    """A random size, amount and affinity."""
    return capacity_proposals.Request(rng.choice(FLAVORS),
                                      rng.randint(1, 6),
                                      rng.choice(AFFINITIES))


class TestCapacityTimeline(base.TestCase):
    """The timeline against the model, and a few cases spelled out."""

    def test_proposals_match_the_brute_force_model(self):
        rng = random.Random(11)
        for case in range(300):
            hosts = random_schedule(rng, rng.randint(1, 5), 400)
            request = random_request(rng)
            duration = rng.randrange(1, 90)
            cleaning = rng.choice([0, 0, 5, 30])
            first, last = rng.randrange(0, 100), rng.randrange(100, 500)
            count = rng.randint(1, 5)
            expected = BruteForce(hosts, duration, cleaning).proposals(
                request.size, request.amount, request.affinity, first,
                last, count)
            found = timelines.first_starts([capacity_timeline(
                hosts, request, duration, cleaning, first, last)],
                at(first), count)
            with self.subTest(case=case):
                self.assertEqual(
                    [(at(start), [taken]) for start, taken in expected],
                    found)

    def test_availability_matches_the_brute_force_model(self):
        rng = random.Random(13)
        for case in range(200):
            hosts = random_schedule(rng, rng.randint(1, 5), 300)
            request = random_request(rng)
            cleaning = rng.choice([0, 0, 5, 30])
            start, end = rng.randrange(0, 150), rng.randrange(150, 350)
            model = BruteForce(hosts, 1, cleaning)
            expected = [model.servers(request.size, request.affinity,
                                      minute)
                        for minute in range(start, end)]
            expected_hosts = {host: [model.room(host, minute, request.size,
                                                1)
                                     for minute in range(start, end)]
                              for host in hosts}
            steps, rooms = capacity_timeline(
                hosts, request, end - start, cleaning, start,
                start).timeline(at(start), at(end))
            with self.subTest(case=case):
                self.assertEqual(expected, by_minute(steps, start, end))
                self.assertEqual(expected_hosts, {
                    host: by_minute(host_steps, start, end)
                    for host, host_steps in rooms.items()})
                # Steps that say the same are joined.
                self.assertTrue(all(a[2] != b[2]
                                    for a, b in zip(steps, steps[1:])))

    def test_placement_is_the_planners(self):
        rng = random.Random(17)
        for case in range(500):
            size = rng.choice(FLAVORS)
            amount = rng.randint(1, 6)
            affinity = rng.choice(AFFINITIES)
            # The planner's search returns the hosts with room for one.
            rooms = {host: (0, tuple(rng.randrange(0, 3 * s + 1) + s
                                     for s in size))
                     for host in range(rng.randint(0, 5))}
            counts = [(host, capacity_proposals.seats(room, (0, 0, 0), size,
                                                      amount))
                      for host, (_generation, room) in rooms.items()]
            with self.subTest(case=case):
                self.assertEqual(
                    planner._place(rooms, size, amount, affinity),
                    planner.place(counts, amount, affinity))

    def test_eight_larges_with_affinity_wait_for_a_whole_host(self):
        # Host 0 is taken whole until 500, host 1 half until 300: 8
        # larges together fit on host 1 at 300, then on host 0 at 500.
        hosts = {0: ((32, 65536, 800), [(0, 500, None)]),
                 1: ((32, 65536, 800), [(0, 300, (16, 32768, 400))])}
        large = (4, 8192, 80)
        together = capacity_proposals.Request(large, 8, True)
        found = timelines.first_starts([capacity_timeline(
            hosts, together, 3 * 24 * 60, 0, 0, 10000)], at(0), 2)
        self.assertEqual([(at(300), [[(1, large)] * 8]),
                          (at(500), [[(0, large)] * 8])],
                         found)
        # Without affinity they fill the preferred host first: the half
        # of host 1 left, then host 2.
        anywhere = capacity_proposals.Request(large, 8, None)
        self.assertEqual([(at(0), [[(1, large)] * 4 + [(2, large)] * 4])],
                         timelines.first_starts([capacity_timeline(
                             {1: hosts[1], 2: ((32, 65536, 800), [])},
                             anywhere, 60, 0, 0, 10000)], at(0), 1))

    def test_availability_counts_servers_by_affinity(self):
        hosts = {0: ((8, 8192, 100), [(0, 60, (4, 4096, 40))]),
                 1: ((8, 8192, 100), [(30, 90, None)]),
                 2: ((8, 8192, 100), [])}
        size = (2, 2048, 20)
        expected = {
            True: [(0, 90, 4), (90, 120, 4)],
            False: [(0, 30, 3), (30, 90, 2), (90, 120, 3)],
            None: [(0, 30, 10), (30, 60, 6), (60, 90, 8), (90, 120, 12)]}
        for affinity, steps in expected.items():
            timeline = capacity_timeline(
                hosts, capacity_proposals.Request(size, 1, affinity), 120,
                0, 0, 0)
            shown, rooms = timeline.timeline(at(0), at(120))
            with self.subTest(affinity=affinity):
                self.assertEqual(timelines.merge_steps(
                    [(at(a), at(b), n) for a, b, n in steps]), shown)
                self.assertEqual([(at(0), at(30), 4), (at(90), at(120), 4)],
                                 rooms[1])

    def test_a_request_that_never_fits_names_its_field(self):
        hosts = {0: (8, 8192, 100), 1: (4, 16384, 100)}
        cases = [
            ({}, capacity_proposals.Request((1, 512, 1), 1),
             'resource_properties', 'no reservable host matches'),
            (hosts, capacity_proposals.Request((10, 1000, 1), 1),
             'vcpus', 'fits none of the 2 reservable host(s)'),
            (hosts, capacity_proposals.Request((2, 20000, 1), 1),
             'memory_mb', 'a server of 2 vCPU(s), 20000 MB of RAM and 1 GB '
             'of disk fits none'),
            (hosts, capacity_proposals.Request(
                (2, 20000, 1), 1, fields=('flavor_id',) * 3),
             'flavor_id', 'fits none'),
            (hosts, capacity_proposals.Request((2, 2048, 10), 5, True),
             'amount', '5 server(s) of 2 vCPU(s), 2048 MB of RAM and 10 GB '
             'of disk on one host: at most 4 fit on one of the 2 '
             'reservable host(s)'),
            (hosts, capacity_proposals.Request((8, 2048, 10), 2, False),
             'amount', 'on different hosts: 1 reservable host(s) match the '
             'request and have room for one'),
            (hosts, capacity_proposals.Request((2, 2048, 10), 7, None),
             'amount', 'at most 6 fit on the 2 reservable host(s)'),
        ]
        for capacity, request, field, message in cases:
            with self.subTest(message=message):
                error = self.assertRaises(
                    exceptions.InvalidInput, capacity_proposals.check_fits,
                    capacity, request)
                self.assertEqual(field, error.field)
                self.assertIn(message, error.reason)
                self.assertIn('no window can ever fit it', error.reason)
        capacity_proposals.check_fits(
            hosts, capacity_proposals.Request((2, 2048, 10), 6, None))


def by_minute(steps, start, end):
    """The amount of each minute of ``[start, end)`` (0 outside steps)."""
    shown = [0] * (end - start)
    for lower, upper, amount in steps:
        for minute in range((lower - at(start)) // MINUTE,
                            (upper - at(start)) // MINUTE):
            shown[minute] = amount
    return shown
