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

"""Heat's configuration in the sandbox: heat.conf.

As an operator sets Heat up beside Keystone (DevStack does the same):
the stack-user domain ``heat`` with its admin user ``heat_domain_admin``,
trusts for deferred operations, with the services' user as trustee, an
SQLite database, oslo.messaging's in-memory transport and no
notifications. heat-api's pipeline is Heat's stock ``api-paste.ini``,
which the wheel installs under ``<sys.prefix>/etc/heat``.
"""

import hashlib
import os
import sys

CONF_FILE = 'heat.conf'
STACK_USER_DOMAIN = 'heat'
STACK_DOMAIN_ADMIN = 'heat_domain_admin'
# The role of the users Heat makes in its domain for a stack's servers.
STACK_USER_ROLE = 'heat_stack_user'


def paste_path():
    """Heat's stock api-paste.ini, as the openstack-heat wheel installs it."""
    return os.path.join(sys.prefix, 'etc', 'heat', 'api-paste.ini')


def encryption_key(password):
    """The 32 characters that encrypt the credentials Heat keeps."""
    return hashlib.sha256(('heat:' + password).encode()).hexdigest()[:32]


def sections(state_dir, db_url, password, auth_url, region, authtoken,
             trustee):
    """heat.conf's sections (``{section: [(key, value)]}``).

    :param authtoken: ``[keystone_authtoken]``'s options.
    :param trustee: ``[trustee]``'s options: the user that Heat's trusts
        delegate to (keystoneauth1 password options without a project).
    """
    state = os.path.join(state_dir, 'heat')
    return {
        'DEFAULT': [
            ('host', 'sandbox'),
            ('transport_url', 'fake://'),
            ('auth_encryption_key', encryption_key(password)),
            ('stack_user_domain_name', STACK_USER_DOMAIN),
            ('stack_domain_admin', STACK_DOMAIN_ADMIN),
            ('stack_domain_admin_password', password),
            ('heat_stack_user_role', STACK_USER_ROLE),
            ('deferred_auth_method', 'trusts'),
            # A stack reservation's servers are seated by the stack's
            # name, which Heat's scheduler hints carry.
            ('stack_scheduler_hints', 'true'),
            ('region_name_for_services', region),
        ],
        'database': [('connection', db_url)],
        'paste_deploy': [('api_paste_config', paste_path())],
        'keystone_authtoken': authtoken,
        'trustee': trustee,
        'clients_keystone': [('auth_uri', auth_url.rsplit('/v3', 1)[0])],
        'clients': [('endpoint_type', 'publicURL')],
        'oslo_messaging_notifications': [('driver', 'noop')],
        'oslo_concurrency': [('lock_path', os.path.join(state, 'locks'))],
    }
