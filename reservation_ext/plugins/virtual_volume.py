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

from db import tables
from reservation_ext import exceptions
from reservation_ext.planning import timelines
from reservation_ext.planning import volume_capacity
from reservation_ext.plugins import base
from reservation_ext.states import ReservationStatus
from reservation_ext import validation

RESOURCE_TYPE = 'virtual:volume'
VOLUME_RESERVATIONS = tables.VOLUME_RESERVATIONS
ON_END = ('delete', 'snapshot_delete')
SCHEMA = {
    'type': 'object',
    'properties': {
        'size_gb': validation.INTEGER,
        'volume_id': {},
        'volume_type': validation.nullable(validation.TEXT),
        'availability_zone': validation.nullable(validation.TEXT),
        'on_end': {'enum': list(ON_END)},
    },
    'additionalProperties': False,
    'required': ['size_gb'],
}
# What a schedule proposals request asks for: GB.
PROPOSAL_SCHEMA = {
    'type': 'object',
    'properties': {'size_gb': validation.INTEGER},
    'additionalProperties': False,
    'required': ['size_gb'],
}
# What a lease update may change: the size (before the start) and what
# happens at the end.
UPDATE_SCHEMA = {
    'type': 'object',
    'properties': {'size_gb': validation.INTEGER,
                   'on_end': {'enum': list(ON_END)}},
    'additionalProperties': False,
}
_COLUMNS = ('size_gb', 'volume_id', 'volume_type', 'availability_zone',
            'on_end')
_OPTIONAL = ('volume_type', 'availability_zone')


class VirtualVolumePlugin(base.ResourcePlugin):
    """Reserve block storage capacity and the Cinder volume that uses it."""

    def validate(self, values):
        """Check a volume request; return its normalized values."""
        validation.check_schema(values, SCHEMA)
        out = {'size_gb': validation.parse_integer(values['size_gb'],
                                                   'size_gb', minimum=1),
               'volume_id': validation.resource_uuid(
                   values.get('volume_id'), 'volume_id', 'volume',
                   'cinder create --hint reserved=True')}
        out.update({key: values.get(key) for key in _OPTIONAL})
        out['on_end'] = values.get('on_end', 'delete')
        return out

    def validate_proposal(self, values):
        """Check the size of a proposal's volume; refuse one never fitting."""
        validation.check_schema(values, PROPOSAL_SCHEMA)
        size = validation.parse_integer(values['size_gb'], 'size_gb',
                                        minimum=1)
        reservable = self.conf.reservation.volume_reservable_gb
        if size > reservable:
            raise exceptions.InvalidInput(
                'size_gb', 'is more than the %d GB reservable: no window '
                'can ever fit it' % reservable)
        return {'size_gb': size}

    def validate_query(self, values):
        """Check an availability query (by default, for 1 GB)."""
        # Availability counts GB free, whatever the size of a volume.
        return self.validate_proposal(dict({'size_gb': 1}, **values))

    def timeline(self, session, values, span, busy, for_update=False):
        """Return the timeline of the reservable GB held over ``span``."""
        if for_update:
            volume_capacity.lock(session)
        return timelines.Capacity(
            span, self.conf.reservation.volume_reservable_gb,
            volume_capacity.read_held(session, *span.reach, busy),
            values['size_gb'])

    def reserve(self, session, ctx, lease, reservation_id, values,
                hold=None):
        """Book the GB for the window and record the request.

        :returns: the volume's id.
        """
        ignore = {} if hold is None else {
            'ignore_proposal': hold.proposal_id}
        volume_capacity.check(
            session, self.conf.reservation.volume_reservable_gb,
            lease['start_date'], lease['end_date'], values['size_gb'],
            self.busy(**ignore))
        session.execute(sa.insert(VOLUME_RESERVATIONS).values(
            id=reservation_id, reservation_id=reservation_id,
            **{key: values[key] for key in _COLUMNS}))
        return values['volume_id']

    def get_details(self, session, reservation_ids):
        """Return the request of each reservation as lease views show it."""
        details = {}
        for row in session.execute(sa.select(VOLUME_RESERVATIONS).where(
                VOLUME_RESERVATIONS.c.reservation_id.in_(reservation_ids))):
            details[row.reservation_id] = {
                key: getattr(row, key) for key in _COLUMNS
                if key not in _OPTIONAL or getattr(row, key) is not None}
        return details

    def prepare_update(self, ctx, reservation, values):
        """Check an update's fields; return them, the size as an integer."""
        validation.check_schema(values, UPDATE_SCHEMA)
        if 'size_gb' not in values:
            return values
        return dict(values, size_gb=validation.parse_integer(
            values['size_gb'], 'size_gb', minimum=1))

    def update(self, session, ctx, lease, reservation, values):
        """Count the GB in the new window; a new size goes to Cinder.

        Only a volume that waits for its start changes size: a created
        one is Cinder's to extend.
        """
        size = values.get('size_gb', reservation['size_gb'])
        resized = size != reservation['size_gb']
        if resized and reservation['status'] != ReservationStatus.PENDING:
            raise exceptions.InvalidInput(
                'size_gb', 'volume %s is created already: extend it with '
                'Cinder' % reservation['volume_id'])
        # The lease row has the new window already: count the others.
        reservable = self.conf.reservation.volume_reservable_gb
        busy = self.busy(ignore_reservation=reservation['id'])
        try:
            volume_capacity.check(session, reservable, lease['start_date'],
                                  lease['end_date'], size, busy)
        except exceptions.NotEnoughResources as exc:
            raise base.blocked_extension(exc, volume_capacity.latest_end(
                session, reservable, lease['start_date'], size, busy),
                lease)
        session.execute(sa.update(VOLUME_RESERVATIONS).where(
            VOLUME_RESERVATIONS.c.reservation_id == reservation['id']).values(
                size_gb=size, on_end=values.get('on_end',
                                                reservation['on_end'])))
        if resized:
            return functools.partial(_set_size, self.cinder,
                                     reservation['volume_id'], lease['id'],
                                     size)
        return None

    def on_start(self, ctx, lease, reservation):
        """Have Cinder create the reserved volume on a backend."""
        self.cinder.start_volume(reservation['volume_id'], lease['id'])

    def on_end(self, ctx, lease, reservation):
        """Have Cinder delete the volume, uploading it first if asked."""
        self.cinder.end_volume(
            reservation['volume_id'], lease['id'],
            snapshot=reservation['on_end'] == 'snapshot_delete')

    def on_delete(self, ctx, lease, reservation):
        """End the volume of a deleted lease unless it is gone already."""
        # Before start this deletes the reserved record; after the end the
        # volume is gone already.
        if reservation['status'] != ReservationStatus.DELETED:
            self.on_end(ctx, lease, reservation)

    def billing_resources(self, session, reservations):
        """Return each reservation's volume and size, read from the views."""
        return {reservation['id']: [{
            'id': reservation['volume_id'], 'size_gb': reservation['size_gb'],
            'volume_type': reservation.get('volume_type')}]
            for reservation in reservations}


def _set_size(cinder, volume_id, lease_id, size, ctx):
    cinder.set_reserved_size(volume_id, lease_id, size)
