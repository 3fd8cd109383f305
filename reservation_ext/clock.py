"""The clock: every "now" in reservation-ext comes from a clock object.

Times are naive datetimes in UTC, as stored in the leases DB. Code takes a
clock as a parameter so that tests control time with :class:`ManualClock`.
"""

import datetime


class Clock:
    """The system clock, in UTC."""

    def now(self):
        """Return the current time as a naive UTC datetime."""
        return datetime.datetime.now(datetime.timezone.utc).replace(
            tzinfo=None)


class ManualClock(Clock):
    """A clock that only moves when told to (for tests and benchmarks)."""

    def __init__(self, now):
        self._now = now

    def now(self):
        return self._now

    def set(self, now):
        """Jump to ``now`` (a naive UTC datetime)."""
        self._now = now

    def advance(self, **delta):
        """Move forward by ``datetime.timedelta(**delta)``."""
        self._now += datetime.timedelta(**delta)


SYSTEM = Clock()
