"""Keystone-style request contexts, usable as oslo.db transaction contexts."""

from oslo_context import context
from oslo_db.sqlalchemy import enginefacade


@enginefacade.transaction_context_provider
class RequestContext(context.RequestContext):
    """Who is asking (user, project, roles), carried through every call."""


def get_admin_context():
    """A context for the service itself (engine, management commands)."""
    return RequestContext(is_admin=True, overwrite=False)
