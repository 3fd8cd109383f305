"""Keystone-style request contexts, usable as oslo.db transaction contexts."""

from oslo_context import context
from oslo_db.sqlalchemy import enginefacade


@enginefacade.transaction_context_provider
class RequestContext(context.RequestContext):
    """Who is asking (user, project, roles), carried through every call."""

    def to_policy_values(self):
        # As in Nova: rules may test is_admin (the service's own context,
        # and the admin role once the API builds contexts from headers).
        values = super().to_policy_values()
        values['is_admin'] = self.is_admin
        return values


def get_admin_context():
    """A context for the service itself (engine, management commands)."""
    return RequestContext(is_admin=True, overwrite=False)
