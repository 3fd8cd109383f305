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

"""Lease notification payloads as the tests that receive them check them.

Every payload a test receives is checked against the documented schema
(:mod:`reservation_ext.leases.notification_schema`) before anything else
is asserted about it.
"""

import jsonschema

from reservation_ext.leases import notification_schema

VALIDATOR = jsonschema.Draft202012Validator(notification_schema.SCHEMA)
# What the payload adds to the lease view, at its top and in reservations.
ADDED = ('payload_version', 'event_time', 'before_end_date')
ADDED_TO_RESERVATIONS = ('resources',)


def checked(payload):
    """``payload``, once it is valid (else jsonschema's ValidationError)."""
    VALIDATOR.validate(payload)
    return payload


def as_view(payload):
    """The lease view that ``payload`` (checked first) extends."""
    view = _without(checked(payload), ADDED)
    view['reservations'] = [_without(reservation, ADDED_TO_RESERVATIONS)
                            for reservation in view['reservations']]
    return view


def _without(mapping, keys):
    return {key: value for key, value in mapping.items() if key not in keys}
