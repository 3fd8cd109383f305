"""Policy rules of the lease API, in code (oslo.policy).

Operators override them in a policy file; ``etc/reservation/policy.yaml
.sample`` lists them with their defaults (``tox -e genpolicy``).
"""

from oslo_config import cfg
from oslo_policy import policy

from reservation_ext import exceptions

ADMIN = 'rule:admin_api'
ADMIN_OR_OWNER = 'rule:admin_or_owner'
LEASES = 'reservation:leases:%s'
HOSTS = 'reservation:hosts:%s'
_PATH = '/reservation/v1/leases'
_HOSTS_PATH = '/reservation/v1/os-hosts'

_base_rules = [
    policy.RuleDefault('admin_api', 'is_admin:True or role:admin',
                       description='An administrator of the cloud.'),
    policy.RuleDefault('admin_or_owner',
                       'rule:admin_api or project_id:%(project_id)s',
                       description='An administrator, or a member of the '
                                   'project that owns the object.'),
]


def _rule(name, check_str, description, method, path):
    return policy.DocumentedRuleDefault(
        name=name, check_str=check_str, description=description,
        operations=[{'method': method, 'path': path}])


def _lease_rule(action, check_str, description, method, path):
    return _rule(LEASES % action, check_str, description, method, path)


def _host_rule(action, description, method, path=''):
    return _rule(HOSTS % action, ADMIN, description, method,
                 _HOSTS_PATH + path)


_lease_rules = [
    _lease_rule('create', ADMIN_OR_OWNER, 'Create a lease.', 'POST', _PATH),
    _lease_rule('get', ADMIN_OR_OWNER, 'Show a lease.', 'GET',
                _PATH + '/{lease_id}'),
    _lease_rule('list', ADMIN_OR_OWNER, "List the project's leases.", 'GET',
                _PATH),
    _lease_rule('list_all_projects', ADMIN,
                'List the leases of every project.', 'GET',
                _PATH + '?all_projects=1'),
    _lease_rule('update', ADMIN_OR_OWNER, 'Update a lease.', 'PUT',
                _PATH + '/{lease_id}'),
    _lease_rule('delete', ADMIN_OR_OWNER, 'Delete a lease.', 'DELETE',
                _PATH + '/{lease_id}'),
]

_host_rules = [
    _host_rule('create', 'Add a Nova compute host to the reservable pool.',
               'POST'),
    _host_rule('get', 'Show a reservable host.', 'GET', '/{host_id}'),
    _host_rule('list', 'List the reservable hosts.', 'GET'),
    _host_rule('update', "Update a host's extra capabilities.", 'PUT',
               '/{host_id}'),
    _host_rule('delete', 'Remove a host from the reservable pool.',
               'DELETE', '/{host_id}'),
    _host_rule('get_allocations', 'Show the reservations of hosts.', 'GET',
               '/allocations'),
    _host_rule('get_properties', 'List the extra capabilities in use.',
               'GET', '/properties'),
    _host_rule('update_properties',
               'Make an extra capability private or public.', 'PATCH',
               '/properties/{property_name}'),
]

_enforcer = None


def list_rules():
    """Every rule with its default (entry point oslo.policy.policies)."""
    return _base_rules + _lease_rules + _host_rules


def get_enforcer(conf=None):
    """The process-wide enforcer (entry point oslo.policy.enforcer)."""
    global _enforcer
    if _enforcer is None:
        _enforcer = policy.Enforcer(conf or cfg.CONF)
        _enforcer.register_defaults(list_rules())
    return _enforcer


def reset():
    """Forget the enforcer; the next check builds it from the config."""
    global _enforcer
    _enforcer = None


def allowed(ctx, action, project_id, rules=LEASES):
    """True when ``ctx`` may do ``action`` on an object of ``project_id``.

    ``rules`` names the family of the rule: :data:`LEASES` or
    :data:`HOSTS`.
    """
    return get_enforcer().authorize(rules % action,
                                    {'project_id': project_id}, ctx)


def authorize(ctx, action, project_id, rules=LEASES):
    """Raise Forbidden unless :func:`allowed`."""
    if not allowed(ctx, action, project_id, rules):
        raise exceptions.Forbidden(
            'Policy does not allow %s to be performed.' % (rules % action))
