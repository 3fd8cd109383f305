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

"""Nova's check of the flavor extra specs that reservation-ext reads.

From microversion 2.86 on, nova-api checks each extra spec that is set
(``POST /flavors/{id}/os-extra_specs``, ``PUT .../{key}``) against the
validators its registry knows by name, and refuses a bad value with a
400. :func:`install` adds ours by name: ``reservation:preemptible_runtime``
(:func:`reservation_ext.planning.preemptible_placement.check_runtime`).
The ``reservation`` namespace itself is not registered: Nova would then
refuse every other key in it (an operator's, Blazar's own).
"""

import dataclasses

from nova.api.validation.extra_specs import base
from nova.api.validation.extra_specs import validators
from nova import exception as nova_exc

from reservation_ext import exceptions
from reservation_ext.planning import preemptible_placement


@dataclasses.dataclass
class _RuntimeValidator(base.ExtraSpecValidator):
    """A preemptible flavor's runtime, as the hint's is checked."""

    def validate(self, name, value):
        """Refuse a value that is not a runtime, naming the extra spec."""
        try:
            preemptible_placement.check_runtime(value, name)
        except exceptions.InvalidInput as exc:
            raise nova_exc.ValidationError(detail=exc.message)


RUNTIME = _RuntimeValidator(
    name=preemptible_placement.RUNTIME_EXTRA_SPEC,
    description=(
        'How long the work of a preemptible server of this flavor runs: '
        'the ReservationFilter passes only the hosts where it would end '
        'before a booking reclaims it. The scheduler hint '
        'preemptible_runtime wins over it.'),
    value={'type': int, 'min': 1, 'max': preemptible_placement.MAX_RUNTIME,
           'description': 'seconds'})


def install():
    """Register the validators in nova-api's registry (once is enough)."""
    validators.VALIDATORS.setdefault(RUNTIME.name, RUNTIME)
