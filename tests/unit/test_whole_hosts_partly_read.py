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

"""Whole hosts over a schedule read as it is looked up, as the planner's.

:class:`~reservation_ext.planning.planner.Schedules` reads the preferred
hosts first and answers the next boundary from the DB; here a fake of it
in memory, against the brute-force model of test_timelines, and the
reads a search on a pool with room spares.
"""

import collections.abc
import random

from reservation_ext.planning import timelines
from tests import base
from tests.unit import test_timelines as model

at = model.at


class PartlyRead(collections.abc.Mapping):
    """``{host: [Allocation]}``: the first ``first`` hosts, then the rest.

    As the planner's Schedules: ``complete``, ``read_all`` and
    ``next_end``; ``reads`` counts the parts read.
    """

    def __init__(self, allocations, first):
        self._all, self._order = allocations, list(allocations)
        self._first = set(self._order[:first])
        self._read = set()
        self.reads = 0

    @property
    def complete(self):
        return len(self._read) == len(self._order)

    def read_all(self):
        if not self.complete:
            self._fetch(set(self._order))

    def _fetch(self, hosts):
        self.reads += 1
        self._read |= hosts

    def __getitem__(self, host):
        if host not in self._read:
            self._fetch(self._first if host in self._first
                        else set(self._order) - self._first)
        return self._all[host]

    def __iter__(self):
        return iter(self._order)

    def __len__(self):
        return len(self._order)

    def next_end(self, after, until):
        return min((a.end for booked in self._all.values() for a in booked
                    if after < a.end <= until), default=None)


def partly_read(booked, hosts, duration, cleaning, first, last, need, most,
                read_first):
    """Return the WholeHosts of ``model.whole_hosts`` over a PartlyRead."""
    dict_timeline = model.whole_hosts(booked, hosts, duration, cleaning,
                                      first, last, need, most)
    source = PartlyRead({host: dict_timeline._booked[host]
                         for host in hosts}, read_first)
    return timelines.WholeHosts(dict_timeline.span, source, need,
                                most), source


class TestPartlyRead(base.TestCase):

    def test_proposals_match_the_brute_force_model(self):
        rng = random.Random(31)
        for case in range(80):
            booked = model.random_schedule(rng, 8, rng.randrange(0, 40), 400)
            hosts = sorted(rng.sample(range(8), rng.randint(1, 8)))
            duration = rng.randrange(1, 90)
            cleaning = rng.choice([0, 0, 5, 30])
            need = rng.randint(1, 3)
            most = need + rng.randint(0, 2)
            first, last = rng.randrange(0, 100), rng.randrange(100, 500)
            count = rng.randint(1, 6)
            expected = model.BruteForce(booked, duration, cleaning, first,
                                        last).proposals(hosts, need, most,
                                                        count)
            timeline, _source = partly_read(
                booked, hosts, duration, cleaning, first, last, need, most,
                rng.randint(0, len(hosts)))
            found = timelines.first_starts([timeline], at(first), count)
            with self.subTest(case=case):
                self.assertEqual(
                    [(at(start), [chosen]) for start, chosen in expected],
                    found)

    def test_a_pool_with_room_reads_the_preferred_hosts_only(self):
        booked = {host: [] for host in range(100)}
        booked[0] = [(0, 30)]
        timeline, source = partly_read(booked, range(100), 60, 0, 0, 1000,
                                       2, 2, 10)
        found = timelines.first_starts([timeline], at(0), 3)
        self.assertEqual([(at(0), [[1, 2]]), (at(30), [[0, 3]]),
                          (at(60), [[1, 2]])], found)
        self.assertEqual((1, False), (source.reads, source.complete))

    def test_availability_reads_every_host_once(self):
        booked = {0: [(0, 30)], 1: [], 2: [(10, 20)]}
        timeline, source = partly_read(booked, range(3), 60, 0, 0, 100,
                                       1, 1, 1)
        steps, hosts = timeline.timeline(at(0), at(40))
        self.assertEqual([(at(0), at(10), 2), (at(10), at(20), 1),
                          (at(20), at(30), 2), (at(30), at(40), 3)], steps)
        self.assertEqual({0: [(at(30), at(40))], 1: [(at(0), at(40))],
                          2: [(at(0), at(10)), (at(20), at(40))]},
                         hosts)
        self.assertEqual(1, source.reads)


class TestPackedSweep(base.TestCase):
    """Packed's sweep packs as testing every allocation at each start does."""

    def test_packing_matches_a_recount_at_every_start(self):
        rng = random.Random(5)
        sizes = [(1, 512, 10), (2, 2048, 20), (4, 4096, 40)]
        for case in range(40):
            capacity = {host: (8, 16384, 200) for host in range(6)}
            allocations = {host: [] for host in range(6)}
            for _ in range(rng.randrange(0, 40)):
                start = rng.randrange(400)
                allocations[rng.randrange(6)].append(timelines.Allocation(
                    at(start), at(start + rng.randrange(0, 90)),
                    None if rng.random() < 0.2 else rng.choice(sizes)))
            span = timelines.Span(at(0), at(400),
                                  rng.randrange(1, 60) * model.MINUTE,
                                  rng.choice([0, 5]) * model.MINUTE)
            wanted = [(size, rng.randint(1, 5))
                      for size in rng.sample(sizes, rng.randint(1, 3))]
            packed = timelines.Packed(span, capacity, allocations, wanted)
            # Forward mostly, with a step back now and then.
            starts = sorted(at(rng.randrange(400)) for _ in range(30))
            starts[10:12] = starts[11], starts[10]
            for start in starts:
                expected = packed._place(timelines._Lazy(
                    lambda host, start=start: packed._used(host, start)))
                with self.subTest(case=case, start=start):
                    self.assertEqual(expected, packed.pack(start))
            taken = packed.take(starts[-1])
            self.assertEqual(packed._place(timelines._Lazy(
                lambda host: packed._used(host, starts[-1]))),
                packed.pack(starts[-1]), taken)
