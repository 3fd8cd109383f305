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

"""JSON Schemas of the ``/v1/networks`` request bodies (Chameleon's Blazar).

A create names the segment (``network_type``, ``physical_network``,
``segment_id``); every other key is an extra capability, a string of at
most 255 characters or a number, as a host's. python-blazarclient sends
``segment_id`` as text and ``physical_network`` as ``null`` for VXLAN.
An update's keys are extra capabilities only (``null`` removes one).
"""

from reservation_ext import validation

NETWORK_TYPES = ('vlan', 'vxlan')
# The segmentation ids Neutron accepts: 802.1Q VLAN ids, 24-bit VNIs.
SEGMENT_RANGES = {'vlan': (1, 4094), 'vxlan': (1, 2 ** 24 - 1)}
# Chameleon's Blazar's limit on the name of an extra capability.
CAPABILITY_KEY_MAX_LENGTH = 64

CREATE = {
    'type': 'object',
    'properties': {
        'network_type': {'enum': list(NETWORK_TYPES),
                         'description': 'vlan or vxlan'},
        'physical_network': validation.nullable(
            dict(validation.TEXT, maxLength=255)),
        'segment_id': validation.INTEGER,
    },
    'additionalProperties': validation.CAPABILITY,
    'required': ['network_type', 'segment_id'],
}

UPDATE = {
    'type': 'object',
    'additionalProperties': validation.CAPABILITY_UPDATE,
}
