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

"""JSON Schemas of the ``/v1/storage-pools`` request bodies.

As ``/v1/os-hosts``: a registration names the pool (``name``, Cinder's
``host@backend#pool``, or ``host#pool`` for a volume service without
``enabled_backends``) and every other key is an extra capability, a
string of at most 255 characters or a number; an update's keys are
extra capabilities only (``null`` removes one).
"""

from reservation_ext import validation

# Cinder's limit on a volume's host column, which holds a pool's name.
NAME_MAX_LENGTH = 255
# As the hosts' and network segments' (Blazar's limit).
CAPABILITY_KEY_MAX_LENGTH = 64

CREATE = {
    'type': 'object',
    'properties': {
        # Every pool name Cinder reports has one "#", before the pool;
        # control characters are in none.
        'name': {'type': 'string', 'maxLength': NAME_MAX_LENGTH,
                 'pattern': r'^[^#\x00-\x1f\x7f]+#[^#\x00-\x1f\x7f]+\Z',
                 'description': "a pool's name as Cinder reports it, "
                                'host@backend#pool, of at most %d '
                                'characters' % NAME_MAX_LENGTH},
    },
    'additionalProperties': validation.CAPABILITY,
    'required': ['name'],
}

UPDATE = {
    'type': 'object',
    'additionalProperties': validation.CAPABILITY_UPDATE,
}
