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

"""Policy rules of reservation-ext, in code (oslo.policy).

The defaults are those of Nova and Placement: the personas of a project
(roles ``reader`` and ``member``; Keystone's bootstrap makes ``admin``
imply ``member`` and ``member`` imply ``reader``), the administrator of
the cloud (role ``admin``) and the service users (role ``service``), all
with project-scoped tokens. Operators override the rules in a policy file
(in nova-api and cinder-api, the one of Nova or Cinder);
``etc/reservation/policy.yaml.sample`` lists them with their defaults
(``tox -e genpolicy``).
"""

from oslo_config import cfg
from oslo_log import versionutils
from oslo_policy import policy

from reservation_ext import exceptions

ADMIN = 'rule:context_is_admin'
PROJECT_MEMBER_OR_ADMIN = 'rule:project_member_or_admin'
PROJECT_READER_OR_ADMIN = 'rule:project_reader_or_admin'
SERVICE_OR_ADMIN = 'rule:service_or_admin'
LEASES = 'reservation:leases:%s'
HOSTS = 'reservation:hosts:%s'
FLOATINGIPS = 'reservation:floatingips:%s'
NETWORKS = 'reservation:networks:%s'
STORAGE_POOLS = 'reservation:storage_pools:%s'
SERVERS = 'reservation:servers:%s'
VOLUMES = 'reservation:volumes:%s'
AVAILABILITY = 'reservation:availability:%s'
PLUGINS = 'reservation:plugins:%s'
_PATH = '/reservation/v1/leases'
_HOSTS_PATH = '/reservation/v1/os-hosts'
_FLOATINGIPS_PATH = '/reservation/v1/floatingips'
_NETWORKS_PATH = '/reservation/v1/networks'
_STORAGE_POOLS_PATH = '/reservation/v1/storage-pools'
# Only the project-scoped tokens of Nova's and Placement's personas: a
# system-scoped token reaches none of these APIs.
_SCOPE = ['project']

_DEPRECATED_REASON = """
The rules of reservation-ext default to the reader, member and admin
personas with project scope, as Nova's and Placement's do. An override of
admin_api or admin_or_owner still applies to the rules that replace them;
move it to those rules.
"""
_DEPRECATED_SINCE = versionutils.deprecated.HIBISCUS
_OLD_ADMIN = 'is_admin:True or role:admin'
_OLD_ADMIN_OR_OWNER = 'rule:admin_api or project_id:%(project_id)s'

# The old base rules, which overrides may name. Each new base rule takes
# the override of the old one it replaces (and, while [oslo_policy]
# enforce_new_defaults is off, also accepts what the old default did).
_DEPRECATED_ADMIN = policy.DeprecatedRule(
    name='admin_api', check_str=_OLD_ADMIN,
    deprecated_reason=_DEPRECATED_REASON,
    deprecated_since=_DEPRECATED_SINCE)
_DEPRECATED_ADMIN_OR_OWNER = policy.DeprecatedRule(
    name='admin_or_owner', check_str=_OLD_ADMIN_OR_OWNER,
    deprecated_reason=_DEPRECATED_REASON,
    deprecated_since=_DEPRECATED_SINCE)


def _deprecated_base_rule(name, check_str, description):
    return policy.RuleDefault(
        name, check_str, description=description,
        deprecated_for_removal=True, deprecated_reason=_DEPRECATED_REASON,
        deprecated_since=_DEPRECATED_SINCE)


# The names and check strings of Nova's base rules: in nova-api both
# enforcers read the same policy file, so an operator's override of one
# of them means the same to both.
_base_rules = [
    policy.RuleDefault(
        'context_is_admin', 'role:admin',
        description='An administrator of the cloud.',
        deprecated_rule=_DEPRECATED_ADMIN),
    policy.RuleDefault(
        'project_member_api', 'role:member and project_id:%(project_id)s',
        description='A member of the project that owns the object.'),
    policy.RuleDefault(
        'project_reader_api', 'role:reader and project_id:%(project_id)s',
        description='A reader of the project that owns the object.'),
    policy.RuleDefault(
        'service_api', 'role:service',
        description='A service user (the reservation engine).'),
    policy.RuleDefault(
        'project_member_or_admin',
        'rule:project_member_api or rule:context_is_admin',
        description='A member of the project that owns the object, or an '
                    'administrator.',
        deprecated_rule=_DEPRECATED_ADMIN_OR_OWNER),
    policy.RuleDefault(
        'project_reader_or_admin',
        'rule:project_reader_api or rule:context_is_admin',
        description='A reader of the project that owns the object, or an '
                    'administrator.',
        deprecated_rule=_DEPRECATED_ADMIN_OR_OWNER),
    policy.RuleDefault(
        'service_or_admin', 'rule:service_api or rule:context_is_admin',
        description='A service user, or an administrator.'),
    # Still defined: the deprecated check strings above refer to them.
    _deprecated_base_rule('admin_api', _OLD_ADMIN,
                          'An administrator of the cloud (now '
                          'context_is_admin).'),
    _deprecated_base_rule('admin_or_owner', _OLD_ADMIN_OR_OWNER,
                          'An administrator, or any user of the project '
                          'that owns the object (now project_member_or_'
                          'admin and project_reader_or_admin).'),
]


def _rule(name, check_str, description, method, path):
    return policy.DocumentedRuleDefault(
        name=name, check_str=check_str, description=description,
        operations=[{'method': method, 'path': path}], scope_types=_SCOPE)


def _lease_rule(action, check_str, description, method, path):
    return _rule(LEASES % action, check_str, description, method, path)


def _host_rule(action, description, method, path=''):
    return _rule(HOSTS % action, ADMIN, description, method,
                 _HOSTS_PATH + path)


_lease_rules = [
    _lease_rule('create', PROJECT_MEMBER_OR_ADMIN, 'Create a lease.',
                'POST', _PATH),
    _lease_rule('get', PROJECT_READER_OR_ADMIN, 'Show a lease.', 'GET',
                _PATH + '/{lease_id}'),
    _lease_rule('list', PROJECT_READER_OR_ADMIN,
                "List the project's leases.", 'GET', _PATH),
    _lease_rule('list_all_projects', ADMIN,
                'List the leases of every project: who may, does so '
                'unless the request says all_projects=false (as in '
                "Blazar, an administrator's list shows every project's "
                'leases).', 'GET', _PATH),
    _lease_rule('propose', PROJECT_MEMBER_OR_ADMIN,
                'Ask for schedule proposals: windows held for a while for '
                'a lease of the project. Who may list the reservable hosts '
                'also sees the hosts held.', 'POST', _PATH + '/proposals'),
    _lease_rule('update', PROJECT_MEMBER_OR_ADMIN, 'Update a lease.', 'PUT',
                _PATH + '/{lease_id}'),
    _lease_rule('delete', PROJECT_MEMBER_OR_ADMIN, 'Delete a lease.',
                'DELETE', _PATH + '/{lease_id}'),
]

_availability_rules = [
    _rule(AVAILABILITY % 'get', PROJECT_READER_OR_ADMIN,
          'See how much matching reservable capacity is free over time '
          '(counts; who may list the reservable hosts also sees which).',
          'GET', '/reservation/v1/availability'),
]

_plugin_rules = [
    _rule(PLUGINS % 'get', PROJECT_READER_OR_ADMIN,
          'List the resource types that leases may reserve.', 'GET',
          '/reservation/v1/plugins'),
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


def _network_rule(action, description, method, path=''):
    return _rule(NETWORKS % action, ADMIN, description, method,
                 _NETWORKS_PATH + path)


_network_rules = [
    _network_rule('create', 'Register a reservable network segment (VLAN '
                  'or VXLAN).', 'POST'),
    _network_rule('get', 'Show a reservable network segment.', 'GET',
                  '/{network_id}'),
    _network_rule('list', 'List the reservable network segments.', 'GET'),
    _network_rule('update', "Update a network segment's extra "
                  'capabilities.', 'PUT', '/{network_id}'),
    _network_rule('delete', 'Remove a reservable network segment.',
                  'DELETE', '/{network_id}'),
    _network_rule('get_allocations', 'Show the reservations of network '
                  'segments.', 'GET', '/allocations'),
]

_floatingip_rules = [
    _rule(FLOATINGIPS % 'create', ADMIN,
          'Register a reservable floating IP of an external network.',
          'POST', _FLOATINGIPS_PATH),
    _rule(FLOATINGIPS % 'get', ADMIN, 'Show a reservable floating IP.',
          'GET', _FLOATINGIPS_PATH + '/{floatingip_id}'),
    _rule(FLOATINGIPS % 'list', ADMIN, 'List the reservable floating IPs.',
          'GET', _FLOATINGIPS_PATH),
    _rule(FLOATINGIPS % 'delete', ADMIN,
          'Remove a floating IP from the reservable ones.', 'DELETE',
          _FLOATINGIPS_PATH + '/{floatingip_id}'),
]


def _storage_pool_rule(action, description, method, path=''):
    return _rule(STORAGE_POOLS % action, ADMIN, description, method,
                 _STORAGE_POOLS_PATH + path)


_storage_pool_rules = [
    _storage_pool_rule('create', 'Register a Cinder storage pool as '
                       'reservable.', 'POST'),
    _storage_pool_rule('get', 'Show a reservable storage pool.', 'GET',
                       '/{pool_id}'),
    _storage_pool_rule('list', 'List the reservable storage pools.', 'GET'),
    _storage_pool_rule('update', "Update a storage pool's extra "
                       'capabilities.', 'PUT', '/{pool_id}'),
    _storage_pool_rule('delete', 'Remove a storage pool from the '
                       'reservable ones.', 'DELETE', '/{pool_id}'),
]

# The actions the engine calls on Nova's and Cinder's APIs.
_engine_rules = [
    _rule(SERVERS % 'start', SERVICE_OR_ADMIN,
          'Start a reserved server when its lease starts.', 'POST',
          '/servers/{server_id}/action (os-reservation-start)'),
    _rule(VOLUMES % 'start', SERVICE_OR_ADMIN,
          'Create a reserved volume when its lease starts.', 'POST',
          '/volumes/{volume_id}/action (os-reservation-start)'),
    _rule(VOLUMES % 'end', SERVICE_OR_ADMIN,
          'Delete (or upload, then delete) a reserved volume when its '
          'lease ends.', 'POST',
          '/volumes/{volume_id}/action (os-reservation-end)'),
]

_enforcer = None


def list_rules():
    """Return every rule with its default (entry point of oslo.policy).

    The entry point is ``oslo.policy.policies``.
    """
    return (_base_rules + _lease_rules + _availability_rules +
            _plugin_rules + _host_rules + _network_rules +
            _floatingip_rules + _storage_pool_rules + _engine_rules)


def get_enforcer(conf=None):
    """Return the process-wide enforcer (entry point oslo.policy.enforcer).

    It reads ``[oslo_policy]`` of the process's configuration: in nova-api
    and cinder-api that of Nova or Cinder, their policy file included.
    """
    global _enforcer
    if _enforcer is None:
        # Published with its rules: a thread that finds it set checks
        # with them (two threads may both build one; either is right).
        enforcer = policy.Enforcer(conf or cfg.CONF)
        enforcer.register_defaults(list_rules())
        _enforcer = enforcer
    return _enforcer


def reset():
    """Forget the enforcer; the next check builds it from the config."""
    global _enforcer
    _enforcer = None


def allowed(ctx, action, project_id, rules=LEASES):
    """Return whether ``ctx`` may do ``action`` on a ``project_id`` object.

    ``rules`` names the family of the rule: :data:`LEASES`,
    :data:`AVAILABILITY`, :data:`PLUGINS`, :data:`HOSTS`,
    :data:`NETWORKS`, :data:`FLOATINGIPS`, :data:`STORAGE_POOLS`,
    :data:`SERVERS` or :data:`VOLUMES`. ``ctx`` is any
    oslo.context request context: ours, or Nova's or Cinder's.
    """
    return get_enforcer().authorize(rules % action,
                                    {'project_id': project_id}, ctx)


def authorize(ctx, action, project_id, rules=LEASES):
    """Raise Forbidden unless :func:`allowed`."""
    if not allowed(ctx, action, project_id, rules):
        raise exceptions.Forbidden(
            'Policy does not allow %s to be performed.' % (rules % action))
