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

"""Power drivers: switch a reservable host on and off, read its state.

A driver is loaded by name from the stevedore namespace
``reservation_ext.power`` (``[power] driver``) and built with the
ConfigOpts. Its methods take a :class:`Target`: the host's hypervisor
hostname, nova-compute service name and extra capabilities (text), from
which a driver reads how to reach the host's power controller. Switching
is idempotent: switching on a host that is on (or off one that is off)
succeeds and changes nothing. A driver raises :class:`PowerError` when the
controller cannot be reached or refuses; the engine then retries at a
later poll.
"""

import abc
import dataclasses

from stevedore import driver as stevedore_driver


NAMESPACE = 'reservation_ext.power'

ON = 'on'
OFF = 'off'


class PowerError(Exception):
    """A power controller could not be reached, or refused."""


@dataclasses.dataclass(frozen=True)
class Target:
    """Describe a host as power drivers see it."""

    hypervisor_hostname: str
    service_name: str
    properties: dict = dataclasses.field(default_factory=dict)


class PowerDriver(abc.ABC):
    """Define what a power driver does: read and switch a host's power.

    :param conf: a ConfigOpts with the ``[power]`` options.
    """

    #: Whether the driver switches anything; with ``noop`` the engine
    #: plans no transition at all.
    switches = True

    def __init__(self, conf):
        self.conf = conf

    @abc.abstractmethod
    def state(self, target):
        """Return :data:`ON` or :data:`OFF`, as the power controller says."""

    @abc.abstractmethod
    def power_on(self, target):
        """Switch the host on (nothing if it is on)."""

    @abc.abstractmethod
    def power_off(self, target):
        """Switch the host off (nothing if it is off)."""


class NoopDriver(PowerDriver):
    """Switches nothing: every host is on (the default)."""

    switches = False

    def state(self, target):
        """Return :data:`ON`: a host that nothing switches is on."""
        return ON

    def power_on(self, target):
        """Do nothing: the host is on."""

    def power_off(self, target):
        """Do nothing: the host stays on."""


def load(conf):
    """Return the driver that ``[power] driver`` names, built with ``conf``."""
    return stevedore_driver.DriverManager(
        NAMESPACE, conf.power.driver, invoke_on_load=True,
        invoke_args=(conf,)).driver
