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

"""JSON Schemas of the lease API's request bodies (Blazar v1) and of the
lease list's query parameters.

They check the shape of a body; :mod:`reservation_ext.leases.parsing`
parses what they let through (dates, durations, names, windows) and each
resource plugin checks the fields of its reservations. They live beside
the lease service rather than in :mod:`reservation_ext.api` because the
service checks every body it is given, whoever calls it.
"""

from reservation_ext.states import LeaseStatus
from reservation_ext import validation

# Blazar clients always send "events": []; events are the service's.
_EVENTS = {'type': 'array', 'maxItems': 0, 'description': 'an empty list'}
_ID = {'type': 'string', 'minLength': 1, 'maxLength': 64}

_RESERVATION = {
    'type': 'object',
    'properties': {'resource_type': {'type': 'string'}},
    'required': ['resource_type'],
}

CREATE = {
    'type': 'object',
    'properties': {
        'name': validation.NAME,
        'proposal_id': dict(_ID, description='a schedule proposal id'),
        'start_date': validation.DATE,
        'end_date': validation.DATE,
        'duration': validation.DURATION,
        'before_end_date': validation.nullable(validation.DATE),
        'reservations': {'type': 'array', 'items': _RESERVATION},
        'events': _EVENTS,
        'projects': {
            'type': 'array', 'description': 'a list of project ids',
            'items': dict(_ID, description='a project id'),
        },
        'trust_id': {'type': ['string', 'null'], 'maxLength': 64,
                     'description': 'a trust id'},
    },
    'additionalProperties': False,
    'required': ['name'],
}

UPDATE = {
    'type': 'object',
    'properties': {
        'name': validation.NAME,
        'start_date': validation.nullable(validation.DATE),
        'end_date': validation.nullable(validation.DATE),
        'before_end_date': validation.nullable(validation.DATE),
        'prolong_for': validation.nullable(validation.DURATION),
        'reduce_by': validation.nullable(validation.DURATION),
        'reservations': {
            'type': 'array',
            'items': {
                'type': 'object',
                'properties': {'id': {'type': 'string'}},
                'required': ['id'],
            },
        },
        'events': _EVENTS,
    },
    'additionalProperties': False,
}

# A schedule proposals request: the reservations of a lease create, and
# where and how long the windows may be.
PROPOSE = {
    'type': 'object',
    'properties': {
        'reservations': {'type': 'array', 'items': _RESERVATION,
                         'minItems': 1},
        'duration': validation.DURATION,
        'not_before': validation.DATE,
        'not_after': validation.DATE,
        'count': {'type': 'integer', 'minimum': 1,
                  'description': 'an integer of at least 1'},
    },
    'additionalProperties': False,
    'required': ['reservations', 'duration'],
}

# The filters of GET /v1/leases (Blazar has none; a query string here
# names only these). Values are text, each given once.
LIST_QUERY = {
    'type': 'object',
    'properties': {
        'status': {'enum': list(LeaseStatus.ALL)},
        'name': validation.TEXT,
        'project_id': dict(_ID, description='a project id'),
        'start': validation.DATE,
        'end': validation.DATE,
        'all_projects': {'type': 'string'},  # a boolean, read later
    },
    'additionalProperties': False,
}
