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

"""The window search against a brute-force model, on random schedules.

The model knows nothing of intervals or sweeps: it walks every minute of
the horizon, tests each host against each allocation, and keeps the
proposals it made in a plain list.
"""

import datetime
import random

from reservation_ext.planning import timelines
from tests import base

T0 = datetime.datetime(2030, 1, 1)
MINUTE = datetime.timedelta(minutes=1)


def at(minutes):
    return T0 + minutes * MINUTE


class BruteForce:
    """Proposals as the contract defines them, the slow way."""

    def __init__(self, booked, duration, cleaning, first, last):
        self.booked = {host: list(windows) for host, windows in
                       booked.items()}
        self.duration, self.cleaning = duration, cleaning
        self.first, self.last = first, last

    def free(self, host, start):
        end = start + self.duration
        return all(b + self.cleaning <= start or a - self.cleaning >= end
                   for a, b in self.booked[host])

    def free_hosts(self, hosts, start):
        return [host for host in sorted(hosts) if self.free(host, start)]

    def freed_at(self, hosts, moment):
        """Whether capacity of ``hosts`` is freed at ``moment``."""
        return any(b + self.cleaning == moment
                   for host in hosts for _a, b in self.booked[host])

    def proposals(self, hosts, need, most, count):
        found = []
        for start in range(self.first, self.last + 1):
            if len(found) == count:
                break
            candidate = (start == self.first or
                         self.freed_at(hosts, start))
            chosen = self.free_hosts(hosts, start)
            if candidate and len(chosen) >= need:
                found.append((start, chosen[:most]))
                for host in chosen[:most]:
                    self.booked[host].append((start, start + self.duration))
        return found


def random_schedule(rng, hosts, bookings, horizon):
    booked = {host: [] for host in range(hosts)}
    for _ in range(bookings):
        host = rng.randrange(hosts)
        start = rng.randrange(horizon)
        booked[host].append((start, start + rng.randrange(1, 120)))
    return booked


def whole_hosts(booked, hosts, duration, cleaning, first, last, need, most):
    span = timelines.Span(at(first), at(last), duration * MINUTE,
                          cleaning * MINUTE)
    return timelines.WholeHosts(span, {
        host: [timelines.Allocation(at(a), at(b)) for a, b in booked[host]]
        for host in hosts}, need, most)


class TestWholeHosts(base.TestCase):

    def test_proposals_match_the_brute_force_model(self):
        rng = random.Random(7)
        for case in range(60):
            booked = random_schedule(rng, 6, rng.randrange(0, 30), 400)
            hosts = sorted(rng.sample(range(6), rng.randint(1, 6)))
            duration = rng.randrange(1, 90)
            cleaning = rng.choice([0, 0, 5, 30])
            need = rng.randint(1, 3)
            most = need + rng.randint(0, 1)
            first, last = rng.randrange(0, 100), rng.randrange(100, 500)
            count = rng.randint(1, 6)
            expected = BruteForce(booked, duration, cleaning, first,
                                  last).proposals(hosts, need, most, count)
            timeline = whole_hosts(booked, hosts, duration, cleaning, first,
                                   last, need, most)
            found = timelines.first_starts([timeline], at(first), count)
            with self.subTest(case=case):
                self.assertEqual(
                    [(at(start), [chosen]) for start, chosen in expected],
                    found)

    def test_first_proposal_is_the_earliest_start_that_fits(self):
        rng = random.Random(11)
        for case in range(40):
            booked = random_schedule(rng, 4, rng.randrange(5, 25), 300)
            model = BruteForce(booked, 45, 10, 0, 400)
            feasible = [start for start in range(0, 401)
                        if len(model.free_hosts(range(4), start)) >= 2]
            timeline = whole_hosts(booked, range(4), 45, 10, 0, 400, 2, 2)
            found = timelines.first_starts([timeline], at(0), 1)
            with self.subTest(case=case):
                self.assertEqual([at(start) for start in feasible[:1]],
                                 [start for start, _taken in found])

    def test_an_empty_pool_gives_back_to_back_windows(self):
        timeline = whole_hosts({0: [], 1: []}, [0, 1], 60, 15, 0, 1000,
                               1, 1)
        found = timelines.first_starts([timeline], at(0), 3)
        self.assertEqual([(at(0), [[0]]), (at(75), [[0]]), (at(150), [[0]])],
                         found)

    def test_nothing_after_the_last_start(self):
        timeline = whole_hosts({0: [(0, 100)]}, [0], 10, 0, 0, 99, 1, 1)
        self.assertEqual([], timelines.first_starts([timeline], at(0), 5))

    def test_timeline_counts_free_hosts(self):
        timeline = whole_hosts({0: [(10, 20)], 1: [(15, 30)]}, [0, 1], 5,
                               0, 0, 100, 1, 1)
        steps, free = timeline.timeline(at(0), at(40))
        self.assertEqual([(at(0), at(10), 2), (at(10), at(15), 1),
                          (at(15), at(20), 0), (at(20), at(30), 1),
                          (at(30), at(40), 2)], steps)
        self.assertEqual({0: [(at(0), at(10)), (at(20), at(40))],
                          1: [(at(0), at(15)), (at(30), at(40))]}, free)


class TestSlicesAndCapacity(base.TestCase):

    def slices(self, allocations, size, last=1000):
        span = timelines.Span(at(0), at(last), 60 * MINUTE)
        return timelines.Slices(span, {1: (8, 8192, 100), 2: (4, 4096, 50)},
                                allocations, size)

    def test_slices_fit_beside_others_until_the_host_is_full(self):
        timeline = self.slices({1: [timelines.Allocation(
            at(0), at(100), (6, 1024, 10))], 2: [timelines.Allocation(
                at(0), at(200), None)]}, (4, 1024, 10))
        self.assertEqual([(at(100), [[1]])],
                         timelines.first_starts([timeline], at(0), 1))
        steps, _rooms = timeline.timeline(at(0), at(300))
        self.assertEqual([(at(0), at(100), 0), (at(100), at(160), 1),
                          (at(160), at(200), 2), (at(200), at(300), 3)],
                         steps)

    def test_capacity_counts_every_overlapping_hold(self):
        span = timelines.Span(at(0), at(1000), 60 * MINUTE)
        timeline = timelines.Capacity(span, 100, [
            timelines.Allocation(at(0), at(50), 60),
            timelines.Allocation(at(30), at(120), 30)], 20)
        found = timelines.first_starts([timeline], at(0), 3)
        self.assertEqual([(at(50), [20]), (at(110), [20]), (at(120), [20])],
                         found)
        self.assertEqual([(at(0), at(30), 40), (at(30), at(50), 10),
                          (at(50), at(120), 50), (at(120), at(170), 60),
                          (at(170), at(180), 80), (at(180), at(200), 100)],
                         timeline.timeline(at(0), at(200))[0])

    def test_several_reservations_start_where_all_fit(self):
        span = timelines.Span(at(0), at(1000), 60 * MINUTE)
        hosts = timelines.WholeHosts(span, {0: [timelines.Allocation(
            at(0), at(100))]}, 1, 1)
        volume = timelines.Capacity(span, 10, [
            timelines.Allocation(at(0), at(150), 10)], 5)
        self.assertEqual([(at(150), [[0], 5]), (at(210), [[0], 5])],
                         timelines.first_starts([hosts, volume], at(0), 2))
