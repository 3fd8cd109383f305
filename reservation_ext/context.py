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

"""Keystone-style request contexts, usable as oslo.db transaction contexts."""

from keystoneauth1.identity import access
from oslo_context import context
from oslo_db.sqlalchemy import enginefacade


@enginefacade.transaction_context_provider
class RequestContext(context.RequestContext):
    """Carry who is asking (user, project, roles) through every call.

    ``user_auth_plugin``: the caller's keystoneauth1 auth plugin, with
    which a call to another service is made as the caller (None: there
    is none, the service user's is used).
    """

    # keystonemiddleware's plugin of the request's user token.
    AUTH_ENVIRON = 'keystone.token_auth'

    def __init__(self, *args, user_auth_plugin=None, **kwargs):
        super().__init__(*args, **kwargs)
        self.user_auth_plugin = user_auth_plugin

    @classmethod
    def from_environ(cls, environ, **kwargs):
        """Return the context of a request keystonemiddleware let through.

        Its ``user_auth_plugin`` sends the user's token alone: with the
        service token keystonemiddleware's own plugin adds, Nova refuses
        the call (the sandbox's service user has no ``service`` role).
        """
        token_auth = environ.get(cls.AUTH_ENVIRON)
        if getattr(token_auth, 'user', None) is not None:
            kwargs.setdefault('user_auth_plugin',
                              access.AccessInfoPlugin(token_auth.user))
        return super().from_environ(environ, **kwargs)

    def to_policy_values(self):
        """Return the values policy rules test, ``is_admin`` included."""
        # As in Nova: rules may test is_admin (the deprecated admin_api
        # rule does; the admin persona is role:admin).
        values = super().to_policy_values()
        values['is_admin'] = self.is_admin
        return values


def from_service_context(ctx):
    """Return our request context for a Nova or Cinder context ``ctx``.

    nova-api's middleware and cinder-api's extension act on leases for
    the caller of the compute or volume API: same user, project, roles
    and request id.
    """
    return RequestContext(
        user_id=ctx.user_id, project_id=ctx.project_id, roles=ctx.roles,
        is_admin=ctx.is_admin, request_id=ctx.request_id, overwrite=False)


def get_admin_context():
    """Return a context for the service itself (engine, commands).

    It has the admin role, as Cinder's admin contexts do: the admin
    persona of the policy rules.
    """
    return RequestContext(is_admin=True, roles=['admin'], overwrite=False)
