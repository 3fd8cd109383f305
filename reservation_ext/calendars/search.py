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

"""The calendar's request form, as the lease API's two questions.

"4 hosts with gpu=true for 2 days" becomes the availability query (GET
/v1/availability: how much is free over the search span) and the body of
POST /v1/leases/proposals (when it fits). Pure functions, like
:mod:`.timeline`; the API checks the values themselves and names a
wrong field in its 400, which the page shows.
"""

import dataclasses
import datetime
import json

from reservation_ext.calendars import timeline

# How far ahead a search looks when the form gives no latest start.
DEFAULT_SPAN = datetime.timedelta(days=14)
DEFAULT_COUNT = 5
MAX_COUNT = 20
_FORM_DATE = '%Y-%m-%d %H:%M'


@dataclasses.dataclass
class Search:
    """A request form, read: what to ask the lease API."""

    # GET /v1/availability's query, as (key, value) pairs.
    query: list
    # POST /v1/leases/proposals's body.
    body: dict
    # How much of the availability's unit the request needs at once:
    # the chart's line.
    needed: int
    unit: str


def read_form(form, now):
    """A :class:`Search` of the request ``form`` (a dict of text).

    :param now: an aware UTC datetime: the default earliest start.
    :raises timeline.RequestError: a field is missing or wrong.
    """
    resource_type = form.get('resource_type')
    fields = _fields_of(resource_type)
    values = {name: (form.get(name) or default).strip()
              for name, _label, default in fields}
    duration, duration_text = _duration(form)
    not_before = _date(form, 'not_before', now)
    not_after = _date(form, 'not_after', not_before + DEFAULT_SPAN)
    # A blank earliest start is the API's "now", which it rounds to the
    # second: the current minute's text could already be in the past.
    start = (not_before.strftime(_FORM_DATE)
             if (form.get('not_before') or '').strip() else 'now')
    if not_after < not_before:
        raise timeline.RequestError(
            'not_after', 'the latest start is before the earliest')
    reservation, query, needed = _reservation(resource_type, values)
    end = not_after + datetime.timedelta(seconds=duration)
    body = {'reservations': [reservation],
            'duration': duration_text,
            'not_before': start,
            'not_after': not_after.strftime(_FORM_DATE),
            'count': _integer(form, 'slots', DEFAULT_COUNT, MAX_COUNT)}
    query = [('resource_type', resource_type),
             ('start', start),
             ('end', end.strftime(_FORM_DATE))] + query
    return Search(query, body, needed, _unit_of(resource_type))


def _fields_of(resource_type):
    """The form fields of a request type, or a RequestError."""
    for name, _label, _unit, fields in timeline.REQUEST_TYPES:
        if name == resource_type:
            return fields
    raise timeline.RequestError(
        'resource_type', 'one of %s' % ', '.join(
            name for name, *_rest in timeline.REQUEST_TYPES))


def _unit_of(resource_type):
    """What the availability of a request type counts."""
    return {name: unit for name, _label, unit, _fields
            in timeline.REQUEST_TYPES}[resource_type]


def _reservation(resource_type, values):
    """``(reservation, availability query, needed)`` of a type's fields."""
    if resource_type == 'physical:host':
        count = _positive(values, 'count')
        reservation = {'resource_type': resource_type, 'min': count,
                       'max': count}
        query = []
        if values['resource_properties']:
            _check_json(values, 'resource_properties')
            reservation['resource_properties'] = values[
                'resource_properties']
            query.append(('resource_properties',
                          values['resource_properties']))
        return reservation, query, count
    if resource_type == 'virtual:instance':
        size = {key: _positive(values, key, minimum=0)
                for key in ('vcpus', 'memory_mb', 'disk_gb')}
        return (dict(size, resource_type=resource_type),
                sorted((key, str(value)) for key, value in size.items()), 1)
    if resource_type == 'virtual:volume':
        size = _positive(values, 'size_gb')
        return ({'resource_type': resource_type, 'size_gb': size}, [],
                size)
    if not values['network_id']:
        raise timeline.RequestError('network_id', 'required')
    count = _positive(values, 'count')
    return ({'resource_type': resource_type,
             'network_id': values['network_id'], 'amount': count},
            [('network_id', values['network_id'])], count)


def _positive(values, key, minimum=1):
    """``values[key]`` as a whole number of at least ``minimum``."""
    try:
        value = int(values[key])
    except ValueError:
        raise timeline.RequestError(key, 'a whole number') from None
    if value < minimum:
        raise timeline.RequestError(key, 'at least %d' % minimum)
    return value


def _integer(form, key, default, maximum):
    """A positive form field, ``default`` when blank, cut to ``maximum``."""
    value = _positive({key: form.get(key) or str(default)}, key)
    return min(value, maximum)


def _check_json(values, key):
    """Refuse a capability query that is not JSON, before the API does."""
    try:
        json.loads(values[key])
    except ValueError:
        raise timeline.RequestError(
            key, 'a JSON query, e.g. ["=", "$gpu", "true"]') from None


def _duration(form):
    """The form's duration: ``(seconds, text)``, e.g. ``(172800, '2d')``."""
    unit = form.get('duration_unit') or 'd'
    if unit not in timeline.DURATION_UNITS:
        raise timeline.RequestError('duration_unit', 'm, h or d')
    number = _positive({'duration': form.get('duration') or ''},
                       'duration')
    return number * timeline.DURATION_UNITS[unit], '%d%s' % (number, unit)


def _date(form, key, default):
    """A ``YYYY-MM-DD HH:MM`` (UTC) field, or ``default`` when blank."""
    text = (form.get(key) or '').strip()
    if not text:
        return default
    try:
        value = datetime.datetime.strptime(text, _FORM_DATE)
    except ValueError:
        raise timeline.RequestError(key, 'YYYY-MM-DD HH:MM (UTC)') from None
    return value.replace(tzinfo=datetime.timezone.utc)
