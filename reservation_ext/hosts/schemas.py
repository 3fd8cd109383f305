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

"""JSON Schemas of the ``/v1/os-hosts`` request bodies (Blazar v1).

Every key of a host create or update but ``name`` is an extra capability:
a string of at most 255 characters (its column's) or a number (``null``
removes it in an update). ``name`` is what Nova's hypervisor search takes
(Nova's ``fqdn``), so that Nova never refuses the name we pass on. An
update's ``power_managed`` is no capability but the host's own flag.
"""

from reservation_ext import validation

CREATE = {
    'type': 'object',
    'properties': {
        # Nova's parameter_types.fqdn, which its hypervisor search checks
        # (with \Z: Python's $ also matches before a final newline).
        'name': {'type': 'string', 'minLength': 1, 'maxLength': 255,
                 'pattern': r'^[a-zA-Z0-9._-]*\Z',
                 'description': 'a host name, an id or a hypervisor '
                                'hostname: letters, digits, "-", "." and '
                                '"_", at most 255 characters'},
    },
    'additionalProperties': validation.CAPABILITY,
    'required': ['name'],
}

# Keys of a host update that set the host's own columns, not capabilities.
UPDATE_COLUMNS = ('power_managed',)

UPDATE = {
    'type': 'object',
    'properties': {
        # Also as text: blazarclient's "host set --extra" sends strings.
        'power_managed': {'type': ['boolean', 'string'],
                          'enum': [True, False, 'true', 'false', 'True',
                                   'False'],
                          'description': 'true or false (whether the '
                                         'power manager switches the '
                                         'host)'},
    },
    'additionalProperties': validation.CAPABILITY_UPDATE,
}

PROPERTY_UPDATE = {
    'type': 'object',
    'properties': {'private': {'type': 'boolean'}},
    'additionalProperties': False,
    'required': ['private'],
}
