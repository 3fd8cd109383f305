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

"""The ``redfish`` power driver: a host's BMC, through sushy.

Each call opens a connection to the host's BMC (found by
:func:`reservation_ext.power.credentials.bmc_access`), reads the
ComputerSystem's PowerState and, if the host is not already in the wanted
state, posts the ComputerSystem.Reset action: ``ForceOff`` to switch off
(the engine has drained the host before), ``On`` to switch on. A BMC
applies a reset when it can: :meth:`RedfishDriver.state` reports what the
BMC says at the time, ``PoweringOn`` as on and ``PoweringOff`` as off.

Every failure (the BMC unreachable, refusing the credentials, without
that system, answering an error) is a :class:`drivers.PowerError` whose
message names the host and the BMC's address, never the password.
"""

import requests
import sushy
from sushy import auth as sushy_auth
from sushy import connector as sushy_connector

from reservation_ext.power import credentials
from reservation_ext.power import drivers

# Seconds to wait for the BMC's TCP connection, then for an answer. A
# BMC is slow, but an engine's poll must not hang on a dead one; the
# engine retries a failed transition at a later poll, so sushy's own
# retries of server errors are kept few.
CONNECT_TIMEOUT = 10
READ_TIMEOUT = 60
SERVER_SIDE_RETRIES = 2
SERVER_SIDE_RETRIES_DELAY = 2

_STATES = {
    sushy.PowerState.ON: drivers.ON,
    sushy.PowerState.POWERING_ON: drivers.ON,
    sushy.PowerState.OFF: drivers.OFF,
    sushy.PowerState.POWERING_OFF: drivers.OFF,
}


class RedfishDriver(drivers.PowerDriver):
    """Switches hosts through their BMCs' Redfish API."""

    def state(self, target):
        """Return the host's power state, as its BMC reports it."""
        return self._call(target, _state)

    def power_on(self, target):
        """Reset the host ``On``, unless the BMC says on or powering on."""
        self._call(target, lambda system, name: _switch(
            system, name, drivers.ON, sushy.ResetType.ON))

    def power_off(self, target):
        """Reset the host ``ForceOff`` unless the BMC says off or going off."""
        self._call(target, lambda system, name: _switch(
            system, name, drivers.OFF, sushy.ResetType.FORCE_OFF))

    def _call(self, target, action):
        """Run ``action(system, hostname)`` on the host's ComputerSystem."""
        access = credentials.bmc_access(
            target, self.conf.power.credentials_file)
        name = target.hypervisor_hostname
        try:
            with sushy_connector.Connector(
                    access.address, verify=access.verify,
                    server_side_retries=SERVER_SIDE_RETRIES,
                    server_side_retries_delay=SERVER_SIDE_RETRIES_DELAY,
                    default_request_timeout=READ_TIMEOUT,
                    connect_timeout=CONNECT_TIMEOUT) as connector:
                # Basic authentication, not a Redfish session: a session
                # per call would pile up on the BMC, which allows few.
                root = sushy.Sushy(
                    access.address, connector=connector,
                    auth=sushy_auth.BasicAuth(access.username,
                                              access.password))
                return action(root.get_system(access.system_path), name)
        except (sushy.exceptions.SushyError,
                requests.RequestException) as exc:
            raise drivers.PowerError('host %s: BMC %s: %s' % (
                name, access.address,
                _redacted(str(exc), access.password))) from exc


def _state(system, name):
    state = _STATES.get(system.power_state)
    if state is None:
        raise drivers.PowerError('host %s: the BMC reports power state %s' % (
            name, system.power_state))
    return state


def _switch(system, name, wanted, reset):
    if _state(system, name) != wanted:
        system.reset_system(reset)


def _redacted(text, password):
    # A BMC's error may echo what it was sent; the password never shows.
    return text.replace(password, '***') if password else text
