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

"""Neutron's configuration in the sandbox: neutron.conf and api-paste.ini.

Neutron 29 agentless, as observed in ``NOTES-integration.md``: the ML2
core plugin with :mod:`.mechanism` binding every host's ports, the
``router`` service plugin, oslo.messaging's in-memory transport (no
agents, so nothing listens on RPC) and no notifications, an SQLite
database. The flat physical network ``public`` carries the external
network; ``physnet1`` takes VLAN provider networks; project networks
are ``local``.

The API pipeline is Neutron's stock ``keystone`` pipeline, whose
authentication filter is a parameter: keystonemiddleware's
``auth_token`` in the sandbox, a header filter in the tests' Neutron
(``tests/neutron_service.py``), which has no Keystone.
"""

import os

CONF_FILE = 'neutron.conf'
PASTE_FILE = 'neutron-api-paste.ini'
PUBLIC_PHYSNET = 'public'
VLAN_PHYSNET = 'physnet1'
# keystonemiddleware's filter, as in Neutron's own api-paste.ini.
KEYSTONE_AUTH = ('authtoken', 'keystonemiddleware.auth_token:filter_factory')

_PASTE = """[composite:neutron]
use = egg:Paste#urlmap
/: neutronversions
/v2.0: neutronapi_v2_0

[pipeline:neutronapi_v2_0]
pipeline = cors http_proxy_to_wsgi request_id catch_errors %(auth)s \
keystonecontext extensions neutronapiapp_v2_0

[filter:%(auth)s]
paste.filter_factory = %(auth_factory)s

[filter:request_id]
paste.filter_factory = oslo_middleware:RequestId.factory

[filter:catch_errors]
paste.filter_factory = oslo_middleware:CatchErrors.factory

[filter:cors]
paste.filter_factory = oslo_middleware.cors:filter_factory
oslo_config_project = neutron

[filter:http_proxy_to_wsgi]
paste.filter_factory = \
oslo_middleware.http_proxy_to_wsgi:HTTPProxyToWSGI.factory

[filter:keystonecontext]
paste.filter_factory = neutron.auth:NeutronKeystoneContext.factory

[filter:extensions]
paste.filter_factory = \
neutron.api.extensions:plugin_aware_extension_middleware_factory

[app:neutronversions]
paste.app_factory = neutron.pecan_wsgi.app:versions_factory

[app:neutronapiapp_v2_0]
paste.app_factory = neutron.api.v2.router:APIRouter.factory
"""


def sections(state_dir, db_url, keystone=None, nova=None):
    """neutron.conf's sections (``{section: [(key, value)]}``).

    :param keystone: ``[keystone_authtoken]``'s options, if the API
        authenticates with Keystone.
    :param nova: ``[nova]``'s options (a Keystone user that finds Nova in
        the catalog), if Neutron tells Nova of port events.
    """
    state = os.path.join(state_dir, 'neutron')
    result = {
        'DEFAULT': [
            ('host', 'sandbox'),
            ('state_path', state),
            ('core_plugin', 'ml2'),
            ('service_plugins', 'router'),
            ('auth_strategy', 'keystone'),
            ('api_paste_config', os.path.join(state_dir, PASTE_FILE)),
            ('transport_url', 'fake://'),
            # No DHCP agent: nothing to tell of networks and ports.
            ('dhcp_agent_notification', 'false'),
            ('notify_nova_on_port_status_changes', str(bool(nova)).lower()),
            ('notify_nova_on_port_data_changes', str(bool(nova)).lower()),
        ],
        'database': [('connection', db_url)],
        'oslo_messaging_notifications': [('driver', 'noop')],
        'oslo_concurrency': [('lock_path', os.path.join(state, 'locks'))],
        'ml2': [('type_drivers', 'flat,local,vlan,vxlan'),
                ('project_network_types', 'local'),
                ('mechanism_drivers', 'reservation_sandbox')],
        'ml2_type_flat': [('flat_networks', PUBLIC_PHYSNET)],
        'ml2_type_vlan': [('network_vlan_ranges', VLAN_PHYSNET)],
    }
    if keystone:
        result['keystone_authtoken'] = keystone
    if nova:
        result['nova'] = nova
    return result


def paste_text(auth_filter=KEYSTONE_AUTH):
    """The text of Neutron's api-paste.ini.

    :param auth_filter: ``(name, paste filter factory)`` of the filter that
        authenticates requests and says who made them in the headers
        Neutron's context middleware reads (``X-User-Id``,
        ``X-Project-Id``, ``X-Roles``).
    """
    name, factory = auth_filter
    return _PASTE % {'auth': name, 'auth_factory': factory}
