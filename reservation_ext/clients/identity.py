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

"""Keystone trusts: acting later in a lease's project for its caller.

A lease that makes something in its project at its start (a Heat stack)
gets, at its create, a trust from the caller to the reservation service
user of ``[reservation_client]``, in the lease's project, with the
caller's roles there. The engine acts at the start with a token scoped
to that trust (:meth:`TrustClient.auth`). The trust impersonates the
caller and allows redelegation, because Heat makes a trust of its own
from the token it is given, for its deferred work (Keystone lets a
trust-scoped token make another trust only so). The trust goes when the
reservation does.
"""

import functools

from keystoneauth1 import exceptions as ks_exc
from keystoneauth1 import loading as ks_loading

from reservation_ext.clients import service_user
from reservation_ext import conf as conf_mod
from reservation_ext import exceptions

SERVICE = 'Keystone'
TRUSTS = '/OS-TRUST/trusts'
# The scope options a trust-scoped auth must not carry as well.
_SCOPE = ('project_id', 'project_name', 'project_domain_id',
          'project_domain_name', 'domain_id', 'domain_name',
          'system_scope')


class TrustClient:
    """Make, use and remove the trusts of the reservation service user.

    :param transport: the ``requests.Session`` that sends the requests
        (see :func:`.service_user.adapter`).
    """

    def __init__(self, conf, transport=None):
        self._conf = conf
        self._transport = transport
        self._adapter = service_user.adapter(conf, 'identity', transport)

    @functools.cached_property
    def _service_user_id(self):
        return service_user.sdk_call(SERVICE, 'for the service user',
                                     self._adapter.get_user_id)

    def create(self, auth, project_id, roles):
        """Return the id of a new trust from ``auth``'s user to ours.

        :param auth: the caller's keystoneauth1 plugin (their token: only
            the trustor may make a trust).
        :param roles: the names of the roles it delegates.
        """
        body = {'trust': {
            'trustor_user_id': self._adapter.get_user_id(auth=auth),
            'trustee_user_id': self._service_user_id,
            'project_id': project_id, 'impersonation': True,
            'allow_redelegation': True,
            'roles': [{'name': name} for name in roles]}}
        return service_user.call(
            self._adapter, SERVICE, 'POST', TRUSTS, once=True, auth=auth,
            json=body)['trust']['id']

    def delete(self, trust_id):
        """Remove a trust (one that is gone is fine)."""
        service_user.call(self._adapter, SERVICE, 'DELETE',
                          '%s/%s' % (TRUSTS, trust_id), ok=(404,))

    def auth(self, trust_id):
        """Return the service user's keystoneauth1 plugin scoped to a trust.

        :raises PluginError: the trust is gone or unusable.
        """
        found = ks_loading.load_auth_from_conf_options(
            self._conf, conf_mod.CLIENT_GROUP, trust_id=trust_id,
            **dict.fromkeys(_SCOPE))
        try:
            found.get_access(self._adapter.session)
        except ks_exc.ClientException as exc:
            raise exceptions.PluginError(
                'Keystone refused trust %s: %s' % (trust_id, exc)) from None
        return found
