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

"""The ML2 mechanism driver of the sandbox: it binds every host's ports.

The sandbox's compute hosts are Nova's fakes, with no L2 agent beside
them, so no agent-based driver of Neutron binds their ports, and Nova
fails a boot whose port is ``binding_failed``. This driver binds a port
on whatever host Nova names, as an Open vSwitch port (VIF type ``ovs``,
which nova.virt.fake accepts), and marks it ACTIVE at once: there is no
agent to say the port is up. ML2 loads it by its entry-point name,
``reservation_sandbox`` (``neutron.ml2.mechanism_drivers`` in setup.cfg).
"""

from neutron_lib.api.definitions import portbindings
from neutron_lib import constants
from neutron_lib.plugins.ml2 import api

NAME = 'reservation_sandbox'


class BindEveryHost(api.MechanismDriver):
    """Bind any port to its host on the first segment ML2 offers."""

    def initialize(self):
        pass

    def bind_port(self, context):
        if not context.host or not context.segments_to_bind:
            return
        context.set_binding(
            context.segments_to_bind[0][api.ID], portbindings.VIF_TYPE_OVS,
            {portbindings.CAP_PORT_FILTER: False,
             portbindings.OVS_HYBRID_PLUG: False},
            status=constants.PORT_STATUS_ACTIVE)
