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

"""The clock: every "now" in reservation-ext comes from a clock object.

Times are naive datetimes in UTC, as stored in the leases DB. Code takes a
clock as a parameter so that tests control time with :class:`ManualClock`.
"""

import datetime


class Clock:
    """Tell the time of the system clock, in UTC."""

    def now(self):
        """Return the current time as a naive UTC datetime."""
        return datetime.datetime.now(datetime.timezone.utc).replace(
            tzinfo=None)


class ManualClock(Clock):
    """A clock that only moves when told to (for tests and benchmarks)."""

    def __init__(self, now):
        self._now = now

    def now(self):
        """Return the time the clock was set to."""
        return self._now

    def set(self, now):
        """Jump to ``now`` (a naive UTC datetime)."""
        self._now = now

    def advance(self, **delta):
        """Move forward by ``datetime.timedelta(**delta)``."""
        self._now += datetime.timedelta(**delta)


SYSTEM = Clock()
