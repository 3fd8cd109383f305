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

"""Resource plugins: one per reservable resource type.

Plugins are found through stevedore in the ``reservation_ext.plugins``
namespace; the entry point name is the resource type:

* :mod:`.base` is the interface every plugin implements;
* :mod:`.physical_host` is ``physical:host``: whole compute hosts for a
  lease;
* :mod:`.host_end_policies` carries out what happens to those hosts
  when their lease ends (``before_end``, ``on_end``, grace period,
  recycling);
* :mod:`.virtual_instance` is ``virtual:instance``: one Nova server for
  a lease, and it hands a request with ``amount`` to
  :mod:`.instance_capacity`;
* :mod:`.instance_capacity` is ``flavor:instance`` and that ``amount``
  form: ``amount`` servers of one size, on seats;
* :mod:`.virtual_volume` is ``virtual:volume``: a Cinder volume for a
  lease;
* :mod:`.floating_ip` is ``virtual:floatingip``: floating IPs of an
  external Neutron network for a lease;
* :mod:`.network_segment` is ``network``: a VLAN or VXLAN segment for a
  lease, made a Neutron provider network at its start;
* :mod:`.storage_pool` is ``storage:pool``: whole Cinder storage pools
  for a lease, dedicated to its volumes while it is active;
* :mod:`.heat_stack` is ``heat:stack``: what a Heat stack needs, booked
  at the create, and the stack made at the start.

This module loads them (:func:`load_plugins`).
"""

from stevedore import extension

from reservation_ext.clients import plugin_clients

NAMESPACE = 'reservation_ext.plugins'


def load_plugins(conf, clock, clients=None):
    """Return ``{resource_type: plugin}`` for every installed plugin.

    :param clients: the Nova and Cinder clients the plugins act through
        (:class:`~reservation_ext.clients.plugin_clients.PluginClients`);
        by default the service user's, made at first use (the engine's
        and the lease API's).
    """
    manager = extension.ExtensionManager(
        NAMESPACE, invoke_on_load=True, invoke_args=(conf, clock),
        invoke_kwds={'clients': clients or plugin_clients.PluginClients(conf)},
        propagate_map_exceptions=True,
        on_load_failure_callback=_raise)
    return {ext.name: ext.obj for ext in manager}


def _raise(manager, entrypoint, exc):
    raise exc
