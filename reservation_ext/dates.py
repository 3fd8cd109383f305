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

"""Dates, durations and lease windows in user input and in views.

:func:`parse_date` and :func:`parse_duration` read what a user wrote and
return naive UTC datetimes and positive timedeltas; :func:`check_start`,
:func:`check_end` and :func:`check_window` check a lease's window against
"now" taken to the minute, as Blazar does; :func:`format_date` and
:func:`format_timestamp` write dates as Blazar's views show them. Every
error is :class:`reservation_ext.exceptions.InvalidInput` naming the
field, in Blazar's words where Blazar has the same error.
"""

import datetime
import re

from reservation_ext import exceptions

# The format Blazar names in its errors about dates.
BLAZAR_DATE_FORMAT = '%Y-%m-%d %H:%M'

# The format of dates in lease views (Blazar's).
VIEW_DATE_FORMAT = '%Y-%m-%dT%H:%M:%S.%f'

# created_at/updated_at in Blazar's views.
TIMESTAMP_FORMAT = '%Y-%m-%d %H:%M:%S'

# Blazar's "CCYY-MM-DD hh:mm" (leniently: one-digit month, day and hour,
# optional seconds and fraction), also with a "T" and an ISO 8601 offset.
# re.ASCII: \d is 0-9 only.
_DATE_RE = re.compile(
    r'(?P<year>\d{4})-(?P<month>\d{1,2})-(?P<day>\d{1,2})[ T]'
    r'(?P<hour>\d{1,2}):(?P<minute>\d{2})'
    r'(?::(?P<second>\d{2})(?:\.(?P<fraction>\d{1,6}))?)?'
    r'(?P<offset>Z|[+-]\d{2}:?\d{2})?', re.ASCII)

_DURATION_RE = re.compile(
    r'(?:(?P<days>\d+)d)?(?:(?P<hours>\d+)h)?'
    r'(?:(?P<minutes>\d+)m)?(?:(?P<seconds>\d+)s)?', re.ASCII)

_DIGITS_RE = re.compile(r'[0-9]+')


def parse_date(value, field, now):
    """Return the naive UTC datetime that ``value`` names.

    ``value`` is ``"now"`` (returns ``now``), ``CCYY-MM-DD hh:mm`` (also
    ``2013-12-1 9:07`` and ``hh:mm:ss``), Blazar's view format
    ``2017-12-26T12:00:00.000000``, or ISO 8601 with an offset
    (``2027-01-10T09:00:00+02:00``, ``...Z``). Dates without an offset are
    UTC.
    """
    if not isinstance(value, str):
        raise exceptions.InvalidInput(field, 'must be a date string')
    value = value.strip()
    if value.lower() == 'now':
        return now
    match = _DATE_RE.fullmatch(value)
    if not match:
        raise invalid_date(field, value)
    try:
        return _to_utc(match)
    except (ValueError, OverflowError) as exc:
        raise invalid_date(field, value, exc)


def invalid_date(field, value, why=None):
    """Return the InvalidInput for an unreadable date, in Blazar's words.

    Blazar's message names its one format; the other forms accepted here
    (and why the date is wrong, when it looks like one) follow it.
    """
    also = '; "now" and ISO 8601 are also accepted'
    return exceptions.InvalidInput(field, '%s is an invalid date. Required '
                                   'format: %s%s' % (
                                       value, BLAZAR_DATE_FORMAT,
                                       ' (%s)' % why if why else also))


def _to_utc(match):
    parts = match.groupdict()
    fraction = (parts['fraction'] or '').ljust(6, '0')
    date = datetime.datetime(
        int(parts['year']), int(parts['month']), int(parts['day']),
        int(parts['hour']), int(parts['minute']),
        int(parts['second'] or 0), int(fraction),
        tzinfo=_timezone(parts['offset']))
    return date.astimezone(datetime.timezone.utc).replace(tzinfo=None)


def _timezone(offset):
    if offset in (None, 'Z'):
        return datetime.timezone.utc
    sign = -1 if offset[0] == '-' else 1
    digits = offset[1:].replace(':', '')
    delta = datetime.timedelta(hours=int(digits[:2]),
                               minutes=int(digits[2:]))
    return datetime.timezone(sign * delta)


def parse_duration(value, field):
    """Return the positive timedelta that ``value`` names.

    ``value`` is a number of seconds (an int or a string of digits) or
    days, hours, minutes and seconds in this order: ``"5d"``, ``"12h"``,
    ``"30m"``, ``"45s"``, ``"1d12h"``.
    """
    if isinstance(value, bool) or not isinstance(value, (int, str)):
        raise exceptions.InvalidInput(
            field, 'must be a duration such as "5d", "12h", "30m" or a '
                   'number of seconds')
    try:
        duration = _to_timedelta(value)
    except (OverflowError, ValueError):
        raise exceptions.InvalidInput(field, 'duration is too long')
    if duration is None:
        raise exceptions.InvalidInput(
            field, 'invalid duration %r, expected e.g. "5d", "12h", "30m" '
                   'or a number of seconds' % value)
    if duration <= datetime.timedelta(0):
        raise exceptions.InvalidInput(field, 'must be longer than 0')
    return duration


def _to_timedelta(value):
    if isinstance(value, int):
        return datetime.timedelta(seconds=value)
    value = value.strip()
    if _DIGITS_RE.fullmatch(value):
        return datetime.timedelta(seconds=int(value))
    match = _DURATION_RE.fullmatch(value)
    if not value or not match:
        return None
    return datetime.timedelta(**{unit: int(amount) for unit, amount
                                 in match.groupdict().items() if amount})


def current_minute(now):
    """Return ``now`` rounded down to the minute: the earliest not past.

    Blazar compares dates with "now" taken to the minute, so a date
    typed for the current minute ("09:00" at 09:00:40) still counts as
    now, whatever the seconds of the clocks of the client and the API.
    """
    return now.replace(second=0, microsecond=0)


def check_start(start, now, field='start_date'):
    """Reject a start before the current minute (Blazar's message)."""
    if start < current_minute(now):
        raise exceptions.InvalidInput(
            field, 'Start date must be later than current date')


def check_end(end, now, field='end_date'):
    """Reject an end before the current minute (Blazar's message).

    An end in the current minute is "now": the lease ends at once.
    """
    if end < current_minute(now):
        raise exceptions.InvalidInput(
            field, 'End date must be later than current and start date')


def check_window(start, end, before_end=None,
                 fields=('start_date', 'end_date', 'before_end_date')):
    """Check that ``end`` > ``start`` and ``before_end`` in [start, end].

    ``fields`` names start, end and before-end as the request spelled
    them (e.g. ``start``, ``end``, ``before_end`` in server hints).
    """
    if end <= start:
        raise exceptions.InvalidInput(
            fields[1], 'End date must be later than start date.')
    if before_end is not None and not start <= before_end <= end:
        raise exceptions.InvalidInput(
            fields[2], 'Datetime is out of lease limits (%s to %s)'
            % fields[:2])


def add(start, duration, field):
    """Return ``start + duration``; raise InvalidInput beyond the calendar."""
    try:
        return start + duration
    except OverflowError:
        raise exceptions.InvalidInput(field, 'duration is too long')


def format_date(value):
    """Format a datetime as lease views show it; None stays None."""
    return None if value is None else value.strftime(VIEW_DATE_FORMAT)


def format_timestamp(value):
    """Format ``created_at``/``updated_at`` as Blazar shows them, or None."""
    return None if value is None else value.strftime(TIMESTAMP_FORMAT)
