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

"""Network segment and storage pool windows against a brute-force model.

The timelines of a ``network`` reservation (one segment of those that
match, :class:`exclusive.Schedule`) and of a ``storage:pool`` one
(``min`` to ``max`` pools whose GB leave the volume reservations room,
:class:`storage_pools.Pools`), on random schedules, against a model that
knows nothing of intervals or sweeps: it walks every minute of the
horizon, tests each item's bookings one by one, sums the GB that overlap
a window, and keeps what it took in plain lists.
"""

import datetime
import random

from reservation_ext.planning import exclusive
from reservation_ext.planning import storage_pools
from reservation_ext.planning import timelines
from tests import base

T0 = datetime.datetime(2030, 1, 1)
MINUTE = datetime.timedelta(minutes=1)


def at(minutes):
    return T0 + minutes * MINUTE


def never(*_args):
    raise AssertionError('no hold is written here')


class Schedule:
    """What is booked, in minutes.

    ``items``: ``{item: [(start, end)]}`` of the matching segments or
    pools, in the order free ones are taken; ``gigabytes``: ``{pool:
    GB}``; ``volumes``: ``[(start, end, GB)]`` of volume reservations;
    ``others``: ``[(start, end, GB)]`` of pools the request does not
    match; ``reservable``: the reservable GB.
    """

    def __init__(self, items, gigabytes=None, volumes=(), others=(),
                 reservable=0):
        self.items = items
        self.gigabytes = gigabytes or {item: 0 for item in items}
        self.volumes = list(volumes)
        self.others = list(others)
        self.reservable = reservable


class BruteForce:
    """Proposals and availability as the contract defines them, slowly."""

    def __init__(self, schedule, duration, cleaning, wanted=(1, 1),
                 with_gb=False):
        self.items = {item: list(booked)
                      for item, booked in schedule.items.items()}
        self.gigabytes = schedule.gigabytes
        self.volumes = list(schedule.volumes)
        # Every pool's booking as GB: the matching ones' and the others'.
        self.pools = list(schedule.others) + [
            (a, b, schedule.gigabytes[item])
            for item, booked in schedule.items.items() for a, b in booked]
        self.reservable = schedule.reservable
        self.duration, self.cleaning = duration, cleaning
        self.need, self.most = wanted
        self.with_gb = with_gb

    def free(self, start, duration=None):
        duration = self.duration if duration is None else duration
        return [item for item, booked in self.items.items()
                if not any(a - self.cleaning < start + duration and
                           b + self.cleaning > start for a, b in booked)]

    def gb(self, held, start):
        return sum(gb for a, b, gb in held
                   if a < start + self.duration and b > start)

    def fits(self, start):
        free = self.free(start)
        if len(free) < self.need:
            return False
        if not self.with_gb:
            return True
        wanted = sum(self.gigabytes[item] for item in free[:self.most])
        pools = self.gb(self.pools, start)
        volumes = self.gb(self.volumes, start)
        return volumes <= max(0, self.reservable - pools - wanted)

    def freed_at(self, moment):
        ends = [b + self.cleaning for booked in self.items.values()
                for _a, b in booked]
        if self.with_gb:
            ends += [b for _a, b, _gb in self.volumes + self.pools]
        return moment in ends

    def take(self, start):
        end = start + self.duration
        chosen = self.free(start)[:self.most]
        for item in chosen:
            self.items[item].append((start, end))
        self.pools.append((start, end, sum(self.gigabytes[item]
                                           for item in chosen)))
        return chosen

    def proposals(self, first, last, count):
        found = []
        for start in range(first, last + 1):
            if len(found) == count:
                break
            candidate = start == first or self.freed_at(start)
            if candidate and self.fits(start):
                found.append((start, self.take(start)))
        return found


def allocations(schedule):
    return {item: [timelines.Allocation(at(a), at(b)) for a, b in booked]
            for item, booked in schedule.items.items()}


def segments_timeline(schedule, duration, cleaning, first, last):
    """A network reservation's timeline, as the planner builds it."""
    span = timelines.Span(at(first), at(last), duration * MINUTE,
                          cleaning * MINUTE)
    return exclusive.Schedule(span, allocations(schedule), 1, 1,
                              {item: 0 for item in schedule.items}, never)


def pools_timeline(schedule, wanted, duration, cleaning, first, last):
    """A storage:pool reservation's timeline, as the planner builds it."""
    span = timelines.Span(at(first), at(last), duration * MINUTE,
                          cleaning * MINUTE)
    pools = [timelines.Allocation(at(a), at(b), gb) for a, b, gb in
             schedule.others + [
                 (a, b, schedule.gigabytes[item])
                 for item, booked in schedule.items.items()
                 for a, b in booked]]
    volumes = [timelines.Allocation(at(a), at(b), gb)
               for a, b, gb in schedule.volumes]
    return storage_pools.Pools(
        span, allocations(schedule), wanted,
        {item: 0 for item in schedule.items}, schedule.gigabytes,
        schedule.reservable, (volumes + pools, pools))


def random_window(rng, horizon):
    start = rng.randrange(horizon)
    return start, start + rng.randrange(1, 120)


def random_items(rng, horizon):
    return {'item-%d' % index: [random_window(rng, horizon)
                                for _ in range(rng.randrange(0, 4))]
            for index in range(rng.randrange(1, 5))}


def random_pools(rng, horizon):
    items = random_items(rng, horizon)
    return Schedule(
        items, {item: rng.choice([0, 100, 300, 500]) for item in items},
        volumes=[random_window(rng, horizon) + (rng.randrange(50, 600),)
                 for _ in range(rng.randrange(0, 5))],
        others=[random_window(rng, horizon) + (rng.choice([0, 200]),)
                for _ in range(rng.randrange(0, 3))],
        reservable=rng.choice([500, 1000, 1500]))


class TestSegmentPoolTimelines(base.TestCase):

    def test_segment_proposals_match_the_brute_force_model(self):
        rng = random.Random(11)
        for case in range(300):
            schedule = Schedule(random_items(rng, 400))
            duration = rng.randrange(1, 90)
            cleaning = rng.choice([0, 0, 5, 30])
            first, last = rng.randrange(0, 100), rng.randrange(100, 500)
            count = rng.randint(1, 5)
            expected = BruteForce(schedule, duration, cleaning).proposals(
                first, last, count)
            found = timelines.first_starts([segments_timeline(
                schedule, duration, cleaning, first, last)], at(first),
                count)
            with self.subTest(case=case):
                self.assertEqual(
                    [(at(start), [taken]) for start, taken in expected],
                    found)

    def test_pool_proposals_match_the_brute_force_model(self):
        rng = random.Random(13)
        for case in range(300):
            schedule = random_pools(rng, 400)
            need = rng.randint(1, 3)
            wanted = (need, need + rng.randint(0, 2))
            duration = rng.randrange(1, 90)
            cleaning = rng.choice([0, 0, 5, 30])
            first, last = rng.randrange(0, 100), rng.randrange(100, 500)
            count = rng.randint(1, 5)
            expected = BruteForce(schedule, duration, cleaning, wanted,
                                  with_gb=True).proposals(first, last,
                                                          count)
            found = timelines.first_starts([pools_timeline(
                schedule, wanted, duration, cleaning, first, last)],
                at(first), count)
            with self.subTest(case=case):
                self.assertEqual(
                    [(at(start), [taken]) for start, taken in expected],
                    found)

    def test_availability_matches_the_brute_force_model(self):
        rng = random.Random(17)
        for case in range(200):
            schedule = random_pools(rng, 300)
            cleaning = rng.choice([0, 0, 5, 30])
            start, end = rng.randrange(0, 150), rng.randrange(150, 350)
            model = BruteForce(schedule, 1, cleaning)
            expected = [len(model.free(minute))
                        for minute in range(start, end)]
            for timeline in (
                    segments_timeline(schedule, end - start, cleaning,
                                      start, start),
                    pools_timeline(schedule, (1, 1), end - start, cleaning,
                                   start, start)):
                steps, items = timeline.timeline(at(start), at(end))
                shown = [amount for lower, upper, amount in steps
                         for _minute in range((upper - lower) // MINUTE)]
                with self.subTest(case=case, timeline=type(timeline)):
                    # Counts only: nothing says which item is free.
                    self.assertEqual(({}, expected), (items, shown))

    def test_the_first_free_segment_in_order_is_held(self):
        schedule = Schedule({'vlan-100': [(0, 60)], 'vlan-101': [],
                             'vlan-102': []})
        found = timelines.first_starts([segments_timeline(
            schedule, 60, 0, 0, 600)], at(0), 3)
        # One window a start: the next starts where a segment is freed.
        self.assertEqual([(at(0), [['vlan-101']]),
                          (at(60), [['vlan-100']]),
                          (at(120), [['vlan-100']])], found)

    def test_pools_wait_for_volume_reservations_to_leave_room(self):
        # 1000 GB reservable; volumes hold 800 until minute 60: gold's
        # 500 GB do not fit beside them, silver's 100 do.
        schedule = Schedule({'gold': [], 'silver': []},
                            {'gold': 500, 'silver': 100},
                            volumes=[(0, 60, 800)], reservable=1000)
        found = timelines.first_starts([pools_timeline(
            schedule, (2, 2), 30, 0, 0, 600)], at(0), 2)
        self.assertEqual([(at(60), [['gold', 'silver']]),
                          (at(90), [['gold', 'silver']])], found)
        found = timelines.first_starts([pools_timeline(
            schedule, (1, 1), 30, 0, 0, 600)], at(0), 1)
        self.assertEqual([(at(60), [['gold']])], found)

    def test_a_pool_without_a_capacity_takes_no_gigabytes(self):
        schedule = Schedule({'bronze': []}, {'bronze': 0},
                            volumes=[(0, 60, 1000)], reservable=1000)
        found = timelines.first_starts([pools_timeline(
            schedule, (1, 1), 30, 0, 0, 600)], at(0), 1)
        self.assertEqual([(at(0), [['bronze']])], found)
