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

"""The payload of the ``lease.*`` notifications, as a JSON Schema.

The payload is the lease view that the API shows (every field of it, so
that consumers of the lease view keep working) plus what a billing
service needs to rate a lease from the notifications alone:
``payload_version``, ``event_time``, ``before_end_date`` and, in each
reservation, ``resources``: what was reserved, with its sizes.

Versions: ``1.x`` only ever adds fields (consumers ignore the fields they
do not know); removing or changing the meaning of a field makes ``2.0``.
Inside ``resources`` every field is listed, for each resource type; a
resource type with nothing to rate (a third-party plugin that does not
say) has no resources.

``python -m reservation_ext.leases.notification_schema`` prints the
schema as the operator docs show it (doc/source/admin/notifications.rst).

The engine's ``instance.preempted`` (a preemptible server stopped for a
booking, :mod:`reservation_ext.engine.reclaim`) is not about a lease
change and has a payload of its own, :data:`PREEMPTED`, with its own
version (same rules).
"""

import json

PAYLOAD_VERSION = '1.1'

DATE_PATTERN = r'^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{6}$'
TIMESTAMP_PATTERN = r'^\d{4}-\d{2}-\d{2} \d{2}:\d{2}:\d{2}$'


def _date(description, nullable=False):
    return {'type': ['string', 'null'] if nullable else 'string',
            'pattern': DATE_PATTERN,
            'description': description + ' (UTC, YYYY-MM-DDThh:mm:ss.ffffff)'}


def _timestamp(description, nullable=False):
    return {'type': ['string', 'null'] if nullable else 'string',
            'pattern': TIMESTAMP_PATTERN,
            'description': description + ' (UTC, YYYY-MM-DD hh:mm:ss)'}


def _text(description, nullable=False):
    return {'type': ['string', 'null'] if nullable else 'string',
            'description': description}


def _count(description, minimum=0):
    return {'type': 'integer', 'minimum': minimum,
            'description': description}


def _resource(properties):
    return {'type': 'object', 'properties': properties,
            'required': sorted(properties), 'additionalProperties': False}


# What each resource type reserves, with the sizes to rate it by.
RESOURCES = {
    'physical:host': _resource({
        'id': _text('the host id, as GET /os-hosts shows it'),
        'hypervisor_hostname': _text("the host's hypervisor hostname"),
        'vcpus': _count('vCPUs of the host'),
        'memory_mb': _count('RAM of the host, in MB'),
        'local_gb': _count('local disk of the host, in GB'),
    }),
    'virtual:instance': _resource({
        'id': _text('the reserved Nova server', nullable=True),
        'flavor_id': _text("the server's flavor", nullable=True),
        'amount': _count('how many servers of this size', minimum=1),
        'vcpus': _count('vCPUs of one server (its flavor)'),
        'memory_mb': _count('RAM of one server, in MB (its flavor)'),
        'disk_gb': _count('root disk of one server, in GB (its flavor)'),
    }),
    'flavor:instance': _resource({
        'id': _text('none: the servers are not known in advance',
                    nullable=True),
        'flavor_id': _text('the private flavor the servers boot with (the '
                           'reservation id)'),
        'amount': _count('how many servers of this size', minimum=1),
        'vcpus': _count('vCPUs of one server (the source flavor)'),
        'memory_mb': _count('RAM of one server, in MB (the source flavor)'),
        'disk_gb': _count('root, ephemeral and swap disk of one server, in '
                          'GB (the source flavor)'),
    }),
    'virtual:volume': _resource({
        'id': _text('the reserved Cinder volume', nullable=True),
        'size_gb': _count('size of the volume, in GB', minimum=1),
        'volume_type': _text('the volume type, when the request named one',
                             nullable=True),
    }),
}

RESERVATION = {
    'type': 'object',
    'description': "one reservation of the lease: its API view (with the "
                   "resource type's own fields) and its resources",
    'properties': {
        'id': _text('the reservation id'),
        'lease_id': _text('the lease id'),
        'resource_type': _text('physical:host, virtual:instance, '
                               'virtual:volume (or a plugin\'s own type)'),
        'resource_id': _text('the reserved resource (server, volume) or '
                             'the reservation id', nullable=True),
        'status': _text('pending, active, deleted or error'),
        'missing_resources': {
            'type': 'boolean',
            'description': 'a booking on a failed host found no '
                           'replacement: the reservation has less than it '
                           'asked for'},
        'resources_changed': {
            'type': 'boolean',
            'description': 'a booking of the started reservation moved '
                           'to a replacement host'},
        'failed_hosts': {
            'type': 'array', 'items': {'type': 'string'},
            'description': 'hypervisor hostnames of the failed hosts '
                           '(nova-compute down or disabled) the reservation '
                           'still holds (since 1.1)'},
        'created_at': _timestamp('when the reservation was made'),
        'updated_at': _timestamp('when it last changed', nullable=True),
        'resources': {
            'type': 'array', 'items': {'type': 'object'},
            'description': 'what is reserved, with its sizes; the items '
                           'of each resource type are described below'},
    },
    'required': ['id', 'lease_id', 'resource_type', 'resource_id', 'status',
                 'created_at', 'updated_at', 'resources'],
    'allOf': [
        {'if': {'properties': {'resource_type': {'const': resource_type}}},
         'then': {'properties': {'resources': {'items': schema}}}}
        for resource_type, schema in sorted(RESOURCES.items())],
}

EVENT = {
    'type': 'object',
    'description': "one of the lease's events, as the API shows it",
    'properties': {
        'id': _text('the event id'),
        'lease_id': _text('the lease id'),
        'event_type': _text('start_lease, before_end_lease or end_lease'),
        'time': _date('when the event is due'),
        'status': _text('UNDONE, IN_PROGRESS, DONE or ERROR'),
        'created_at': _timestamp('when the event was made'),
        'updated_at': _timestamp('when it last changed', nullable=True),
    },
    'required': ['id', 'event_type', 'time', 'status'],
}

_VERSION_1 = {
    'type': 'string', 'pattern': r'^1\.\d+$',
    'description': 'the version of this payload: 1.x only adds fields'}

SCHEMA = {
    '$schema': 'https://json-schema.org/draft/2020-12/schema',
    'title': 'reservation-ext lease notification payload %s'
             % PAYLOAD_VERSION,
    'type': 'object',
    'properties': {
        'payload_version': _VERSION_1,
        'event_time': _date('when the change happened, by the clock of '
                            'the service that sent it'),
        'id': _text('the lease id'),
        'name': _text('the lease name'),
        'status': _text('the lease status after the change (DELETING in '
                        'lease.delete)'),
        'status_reason': _text('why the lease is in ERROR', nullable=True),
        'degraded': {'type': 'boolean',
                     'description': 'a reserved resource was lost'},
        'project_id': _text('the project that owns the lease (and pays)'),
        'user_id': _text('the user who made the lease', nullable=True),
        'trust_id': _text('the Keystone trust, if any', nullable=True),
        'projects': {'type': 'array', 'items': {'type': 'string'},
                     'description': 'other projects the lease is shared '
                                    'with'},
        'start_date': _date('when the lease starts'),
        'end_date': _date('when the lease ends'),
        'before_end_date': _date('when the before_end_lease event fires'),
        'created_at': _timestamp('when the lease was made'),
        'updated_at': _timestamp('when it last changed', nullable=True),
        'reservations': {'type': 'array', 'items': RESERVATION},
        'events': {'type': 'array', 'items': EVENT},
    },
    'required': ['payload_version', 'event_time', 'id', 'name', 'status',
                 'project_id', 'user_id', 'start_date', 'end_date',
                 'before_end_date', 'created_at', 'updated_at',
                 'reservations', 'events'],
}


PREEMPTED_VERSION = '1.2'
# Why a preemptible server was stopped (``reason``, since 1.2).
REASON_BOOKING = 'booking'
REASON_POWER_OFF = 'power_off'

PREEMPTED = {
    '$schema': 'https://json-schema.org/draft/2020-12/schema',
    'title': 'reservation-ext instance.preempted payload %s'
             % PREEMPTED_VERSION,
    'type': 'object',
    'properties': {
        'payload_version': _VERSION_1,
        'event_time': _date('when the server was stopped, by the '
                            "engine's clock"),
        'server_id': _text('the preemptible Nova server that was stopped'),
        'project_id': _text("the server's project"),
        'host': _text('the hypervisor hostname it ran on'),
        'lease_id': _text('the lease whose booking needed the host; '
                          'null (since 1.1) when it was stopped to switch '
                          'the idle host off ([power] '
                          'reclaim_preemptible_for_power)', nullable=True),
        'reservation_id': _text('the reservation of that booking (null '
                                'as lease_id)', nullable=True),
        'action': {'enum': ['delete', 'shelve'],
                   'description': 'what became of the server '
                                  '([reservation] preemptible_on_reclaim; '
                                  'shelve also offloads it)'},
        'reason': {'enum': [REASON_BOOKING, REASON_POWER_OFF],
                   'description': 'why (since 1.2): booking, a booking '
                                  'starts on the host at booking_start; '
                                  'power_off, the idle host is switched '
                                  'off'},
        'booking_start': _date('when that booking starts (since 1.2; null '
                               'as lease_id)', nullable=True),
    },
    'required': ['payload_version', 'event_time', 'server_id', 'project_id',
                 'host', 'lease_id', 'reservation_id', 'action', 'reason',
                 'booking_start'],
    'additionalProperties': False,
}


def dumps():
    """Return the schema as the docs print it: JSON, indented, keys sorted."""
    return json.dumps(SCHEMA, indent=2, sort_keys=True) + '\n'


if __name__ == '__main__':
    print(dumps(), end='')
