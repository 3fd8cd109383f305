"""The ``virtual:volume`` plugin: a Cinder volume for a lease.

A request::

    {"resource_type": "virtual:volume", "size_gb": 100,
     "volume_id": "<the reserved Cinder volume>", "volume_type": "fast",
     "availability_zone": "nova", "on_end": "delete"}

The Cinder extension (:mod:`cinder_ext`) makes these requests: ``cinder
create --hint reserved=True`` writes a volume record in status
``reserved`` and a lease with one such reservation naming it. The GB are
booked when the lease is created, against ``[reservation]
volume_reservable_gb`` (see
:mod:`reservation_ext.planning.volume_capacity`). At start Cinder creates
the volume on a backend (``reserved`` ->
``creating`` -> ``available``); at end it is deleted (``on_end``:
``delete``), or uploaded to an image of the volume's project and then
deleted (``snapshot_delete``: a Cinder snapshot cannot outlive its
volume, an image can). Deleting the lease before its start deletes the
reserved record.
"""

import functools

import sqlalchemy as sa

from db import models
from reservation_ext.clients import block_storage as block_storage_client
from reservation_ext import exceptions
from reservation_ext.leases.states import ReservationStatus
from reservation_ext.planning import volume_capacity
from reservation_ext.plugins import base
from reservation_ext import validation

RESOURCE_TYPE = 'virtual:volume'
REQUESTS = models.VolumeReservation.__table__
ON_END = ('delete', 'snapshot_delete')
KEYS = frozenset(('size_gb', 'volume_id', 'volume_type', 'availability_zone',
                  'on_end'))
_COLUMNS = ('size_gb', 'volume_id', 'volume_type', 'availability_zone',
            'on_end')
_OPTIONAL = ('volume_type', 'availability_zone')


class VirtualVolumePlugin(base.ResourcePlugin):
    """Reserve block storage capacity and the Cinder volume that uses it."""

    @functools.cached_property
    def cinder(self):
        """The Cinder client, made at first use (the API may never call).

        cinder-api sets one that acts in-process instead
        (:class:`cinder_ext.extension.InProcessCinder`).
        """
        return block_storage_client.CinderClient(self.conf)

    def validate(self, values):
        validation.check_keys(values, KEYS)
        out = {'size_gb': _size(values.get('size_gb')),
               'volume_id': validation.resource_uuid(
                   values.get('volume_id'), 'volume_id', 'volume',
                   'cinder create --hint reserved=True')}
        for key in _OPTIONAL:
            out[key] = _optional_text(values, key)
        on_end = values.get('on_end', 'delete')
        if on_end not in ON_END:
            raise exceptions.InvalidInput(
                'on_end', 'must be one of: %s'
                % ', '.join(repr(choice) for choice in ON_END))
        out['on_end'] = on_end
        return out

    def reserve(self, session, ctx, lease, reservation_id, values):
        volume_capacity.check(
            session, self.conf.reservation.volume_reservable_gb,
            lease['start_date'], lease['end_date'], values['size_gb'])
        session.execute(sa.insert(REQUESTS).values(
            id=reservation_id, reservation_id=reservation_id,
            **{key: values[key] for key in _COLUMNS}))
        return values['volume_id']

    def get_details(self, session, reservation_ids):
        details = {}
        for row in session.execute(sa.select(REQUESTS).where(
                REQUESTS.c.reservation_id.in_(reservation_ids))):
            details[row.reservation_id] = {
                key: getattr(row, key) for key in _COLUMNS
                if key not in _OPTIONAL or getattr(row, key) is not None}
        return details

    def update(self, session, ctx, lease, reservation, values):
        base.check_unchanged(values, RESOURCE_TYPE)
        # The lease row has the new window already: count the others.
        volume_capacity.check(
            session, self.conf.reservation.volume_reservable_gb,
            lease['start_date'], lease['end_date'], reservation['size_gb'],
            exclude_reservation_id=reservation['id'])

    def on_start(self, ctx, lease, reservation):
        self.cinder.start_volume(reservation['volume_id'], lease['id'])

    def on_end(self, ctx, lease, reservation):
        self.cinder.end_volume(
            reservation['volume_id'], lease['id'],
            snapshot=reservation['on_end'] == 'snapshot_delete')

    def on_delete(self, ctx, lease, reservation):
        # Before start this deletes the reserved record; after the end the
        # volume is gone already.
        if reservation['status'] != ReservationStatus.DELETED:
            self.on_end(ctx, lease, reservation)


def _size(value):
    if value is None:
        raise exceptions.InvalidInput('size_gb', 'is required')
    # python-blazarclient sends the numbers of --reservation as text.
    if isinstance(value, bool) or not isinstance(value, (int, str)):
        raise exceptions.InvalidInput('size_gb', 'must be an integer')
    try:
        size = int(value)
    except ValueError:
        raise exceptions.InvalidInput('size_gb', 'must be an integer')
    if size < 1:
        raise exceptions.InvalidInput('size_gb', 'must be at least 1')
    return size


def _optional_text(values, key):
    value = values.get(key)
    if value is not None and (not isinstance(value, str) or not value):
        raise exceptions.InvalidInput(key, 'must be a non-empty string')
    return value
