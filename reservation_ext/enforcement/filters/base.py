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

"""What every enforcement filter is: three hooks that allow by default."""


class Filter:
    """A usage enforcement filter (see :mod:`.filters`).

    :param conf: the ``[enforcement]`` options group.
    :param clock: where "now" comes from (:mod:`reservation_ext.clock`).
    """

    def __init__(self, conf, clock):
        self.conf = conf
        self.clock = clock

    def check_create(self, context, lease):
        """Allow (return) or refuse (raise) the lease to be created."""

    def check_update(self, context, current_lease, lease):
        """Allow or refuse ``current_lease`` to become ``lease``."""

    def on_end(self, context, lease):
        """Hear that ``lease`` ended (or was deleted before its end)."""
