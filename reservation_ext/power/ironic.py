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

"""The ``ironic`` power driver: computes that are Ironic nodes.

The Bare Metal API is reached as the reservation service user
(``[reservation_client]``, service type ``baremetal`` in the catalog),
through openstacksdk's baremetal proxy (:func:`service_user.proxy`).
A host's node is its extra capability ``ironic_node`` (a node's UUID or
name), else its hypervisor hostname, which Ironic's Nova driver sets to
the node's UUID.

The state is the node's ``power_state``, or, while Ironic switches it,
its ``target_power_state`` (a node powering on counts as on, one
powering off as off). Switching reads the node first and, unless it is
already (or becoming) what is wanted, asks openstacksdk's
``set_node_power_state`` for ``power on`` or ``power off`` without
waiting: Ironic switches asynchronously, and the power manager reads the
state again later. openstacksdk retries that request when Ironic answers
409 (the node is locked by another task) or 503. Every failure is a
:class:`drivers.PowerError` naming the host and its node.
"""

import functools

from reservation_ext.clients import service_user
from reservation_ext import exceptions
from reservation_ext.power import drivers

SERVICE = 'Ironic'
SERVICE_TYPE = 'baremetal'
NODE_PROPERTY = 'ironic_node'

_STATES = {'power on': drivers.ON, 'power off': drivers.OFF}
_TARGETS = {drivers.ON: 'power on', drivers.OFF: 'power off'}


class IronicDriver(drivers.PowerDriver):
    """Switches hosts through Ironic's power states.

    :param baremetal: openstacksdk's baremetal proxy; default: the service
        user's, made at first use.
    """

    def __init__(self, conf, baremetal=None):
        super().__init__(conf)
        if baremetal is not None:
            self.baremetal = baremetal

    @functools.cached_property
    def baremetal(self):
        """The service user's baremetal proxy (:func:`service_user.proxy`).

        :raises PluginError: Ironic's endpoint cannot be found.
        """
        return service_user.proxy(
            service_user.adapter(self.conf, SERVICE_TYPE), SERVICE)

    def state(self, target):
        return self._state(target, self._node(target))

    def power_on(self, target):
        """Ask Ironic for ``power on``, unless the node is (becoming) on."""
        self._switch(target, drivers.ON)

    def power_off(self, target):
        """Ask Ironic for ``power off``, unless it is (becoming) off."""
        self._switch(target, drivers.OFF)

    def _switch(self, target, wanted):
        node = self._node(target)
        if self._state(target, node) != wanted:
            self._call(target, 'PUT /v1/nodes/%s/states/power' % node.id,
                       lambda: self.baremetal.set_node_power_state(
                           node, _TARGETS[wanted], wait=False))

    def _node(self, target):
        return self._call(target, 'GET /v1/nodes/%s' % node_of(target),
                          lambda: self.baremetal.get_node(node_of(target)))

    def _state(self, target, node):
        shown = node.target_power_state or node.power_state
        state = _STATES.get(shown)
        if state is None:
            raise drivers.PowerError(
                'host %s: Ironic node %s has power state %s' % (
                    target.hypervisor_hostname, node_of(target), shown))
        return state

    def _call(self, target, request, function):
        """``function()``, whose failures are PowerErrors naming the node.

        :param request: the request as errors name it.
        """
        try:
            return service_user.sdk_call(SERVICE, request, function)
        except exceptions.PluginError as exc:
            raise drivers.PowerError('host %s (Ironic node %s): %s' % (
                target.hypervisor_hostname, node_of(target), exc)) from exc


def node_of(target):
    """The Ironic node (UUID or name) of ``target``."""
    return target.properties.get(NODE_PROPERTY) or target.hypervisor_hostname
