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

"""Lease requests carried by the hints of a server or volume create.

The seed workflow asks for a lease with two hints::

    --hint reserved=True
    --hint lease_params='{"name": "lease1", "start": "now",
                          "end": "2027-12-1 16:07"}'

or takes the window of a schedule proposal (``openstack reservation lease
propose``) with ``--hint reserved=True --hint proposal=<id>``.

:func:`parse` checks them completely, before anything is created, and
raises ``InvalidInput`` naming the field as the user wrote it
(``reserved``, ``lease_params``, ``lease_params.start``, ...).
"""


from oslo_utils import strutils

from reservation_ext import dates
from reservation_ext import exceptions
from reservation_ext.leases import parsing
from reservation_ext import validation

RESERVED = 'reserved'
LEASE_PARAMS = 'lease_params'
# The schedule proposal whose window (and held capacity) the lease takes.
PROPOSAL = 'proposal'
# What a proposal fixes, so that lease_params cannot say it too.
_PROPOSED = ('start', 'end', 'duration', 'before_end')
# The hint that places a server on the hosts of a host reservation
# (Blazar's): ``--hint reservation=<reservation id>``.
RESERVATION = 'reservation'
# The hints that put a server on what a lease holds: any of them wins over
# ``preemptible`` (the server is not preemptible then).
BOOKING_HINTS = (RESERVED, LEASE_PARAMS, RESERVATION)


def parse(hints, now, default_name, default_duration, on_end_choices,
          default_on_end, reserve_all=False, proposal_window=None):
    """Return the lease that ``hints`` ask for, or None when they ask none.

    :param hints: the create call's scheduler hints; a value may be a
        list of one value, as Nova keeps them.
    :param default_name: the lease name when ``lease_params`` has none
        (None: the caller names it later).
    :param default_duration: a timedelta, when neither ``end`` nor
        ``duration`` is given.
    :param on_end_choices: the accepted ``on_end`` values.
    :param reserve_all: a request without hints gets a default lease.
    :param proposal_window: ``f(proposal_id)``: the ``(start, end)`` of
        a schedule proposal the caller may take, or NotFound/Conflict
        (:meth:`reservation_ext.leases.service.LeaseService.proposal_window`).
    :returns: a create request of :mod:`reservation_ext.leases.parsing`
        without reservations (add one with
        :func:`~reservation_ext.leases.parsing.with_reservation`), with
        one more key, ``on_end``, for its reservation.
    """
    reserved = _reserved(hints.get(RESERVED))
    params = _params(hints.get(LEASE_PARAMS), on_end_choices)
    proposal = _proposal(hints.get(PROPOSAL))
    for hint, given in ((LEASE_PARAMS, params), (PROPOSAL, proposal)):
        if reserved is False and given is not None:
            raise exceptions.InvalidInput(
                hint, 'is given, but %s is false' % RESERVED)
    if proposal is not None:
        return _proposed(params or {}, now, default_name, default_on_end,
                         proposal, proposal_window)
    if not (reserved or params is not None or reserve_all):
        return None
    return _lease(params or {}, now, default_name, default_duration,
                  default_on_end)


def default_duration(conf):
    """Return ``[reservation] default_lease_duration`` as a timedelta."""
    return dates.parse_duration(
        conf.reservation.default_lease_duration, 'default_lease_duration')


def _single(value):
    """Return a hint's single value: Nova keeps every hint as a list."""
    if isinstance(value, list) and len(value) == 1:
        return value[0]
    return value


def _reserved(value):
    value = _single(value)
    if value is None or isinstance(value, bool):
        return value
    try:
        return strutils.bool_from_string(str(value), strict=True)
    except ValueError:
        raise exceptions.InvalidInput(
            RESERVED, 'must be true or false, not %r' % (value,))


def params_schema(on_end_choices):
    """Return the JSON Schema of ``lease_params``."""
    return {
        'type': 'object',
        'properties': {
            'name': validation.NAME,
            'start': validation.DATE,
            'end': validation.DATE,
            'duration': validation.DURATION,
            'before_end': validation.nullable(validation.DATE),
            'on_end': {'enum': list(on_end_choices)},
        },
        'additionalProperties': False,
    }


def _params(value, on_end_choices):
    value = _single(value)
    if value is None:
        return None
    if isinstance(value, str):
        value = validation.load_json(value, LEASE_PARAMS)
    validation.check_schema(value, params_schema(on_end_choices),
                            LEASE_PARAMS)
    return value


def _proposal(value):
    value = _single(value)
    if value is not None and not (isinstance(value, str) and value):
        raise exceptions.InvalidInput(PROPOSAL, 'must be a proposal id')
    return value


def _proposed(params, now, default_name, default_on_end, proposal,
              proposal_window):
    """Return the lease of a proposal: its window, the params' name."""
    for key in _PROPOSED:
        if key in params:
            raise exceptions.InvalidInput(
                _field(key), 'cannot be combined with the %s hint: the '
                'proposal sets the window' % PROPOSAL)
    start, end = proposal_window(proposal)
    name = params.get('name', default_name)
    if name is not None:
        name = validation.validate_name(name, _field('name'))
    return dict(parsing.lease(name, start, end, None, now),
                on_end=params.get('on_end', default_on_end),
                proposal_id=proposal)


def _field(key):
    return '%s.%s' % (LEASE_PARAMS, key)


def _lease(params, now, default_name, default_duration, default_on_end):
    start = dates.parse_date(params.get('start', 'now'),
                             _field('start'), now)
    dates.check_start(start, now, _field('start'))
    end = _end(params, start, now, default_duration)
    before_end = None
    if params.get('before_end') is not None:
        before_end = dates.parse_date(params['before_end'],
                                      _field('before_end'), now)
    dates.check_window(start, end, before_end, fields=tuple(
        _field(key) for key in ('start', 'end', 'before_end')))
    name = params.get('name', default_name)
    if name is not None:
        name = validation.validate_name(name, _field('name'))
    return dict(parsing.lease(name, start, end, before_end, now),
                on_end=params.get('on_end', default_on_end))


def _end(params, start, now, default_duration):
    if 'end' in params and 'duration' in params:
        raise exceptions.InvalidInput(_field('duration'),
                                      'give end or duration, not both')
    if 'end' in params:
        end = dates.parse_date(params['end'], _field('end'), now)
        dates.check_end(end, now, _field('end'))
        return end
    duration = default_duration
    if 'duration' in params:
        duration = dates.parse_duration(params['duration'],
                                        _field('duration'))
    return dates.add(start, duration, _field('duration'))
