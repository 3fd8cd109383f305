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

"""The policy rules: the personas' defaults, and an operator's overrides."""

import json
import os
import warnings

import fixtures
from oslo_config import cfg
from oslo_config import fixture as config_fixture
from oslo_context import context as oslo_context

from reservation_ext import context
from reservation_ext import exceptions
from reservation_ext import policy
from tests import base

LEASE_ACTIONS = ('create', 'get', 'list', 'update', 'delete')
READ_ACTIONS = ('get', 'list')
WRITE_ACTIONS = ('create', 'update', 'delete')
HOST_ACTIONS = ('create', 'get', 'list', 'update', 'delete',
                'get_allocations', 'get_properties', 'update_properties')
# The actions the engine calls on Nova and Cinder: (rules, action).
ENGINE_ACTIONS = ((policy.SERVERS, 'start'), (policy.VOLUMES, 'start'),
                  (policy.VOLUMES, 'end'))


def _user(project_id, *roles):
    """A project-scoped token's context, with Keystone's implied roles."""
    return context.RequestContext(project_id=project_id, user_id='u-' +
                                  project_id, roles=list(roles))


class PolicyTestCase(base.TestCase):

    def setUp(self):
        super().setUp()
        self.reader = _user('p1', 'reader')
        self.member = _user('p1', 'member', 'reader')
        self.admin = _user('p0', 'admin', 'member', 'reader')
        self.other_member = _user('p2', 'member', 'reader')
        self.service = _user('service', 'service')

    def use_policy_file(self, rules):
        path = os.path.join(self.useFixture(fixtures.TempDir()).path,
                            'policy.yaml')
        with open(path, 'w') as f:
            json.dump(rules, f)
        policy.get_enforcer()  # registers [oslo_policy] on CONF
        self.useFixture(config_fixture.Config(cfg.CONF)).config(
            policy_file=path, group='oslo_policy')
        policy.reset()  # the enforcer reads policy_file when it is built

    def assertAllowed(self, ctx, actions, project_id, rules=policy.LEASES):
        for action in actions:
            self.assertTrue(policy.allowed(ctx, action, project_id, rules),
                            rules % action)

    def assertDenied(self, ctx, actions, project_id, rules=policy.LEASES):
        for action in actions:
            self.assertFalse(policy.allowed(ctx, action, project_id, rules),
                             rules % action)


class LeaseDefaultsTest(PolicyTestCase):

    def test_a_project_reader_may_list_and_show_its_projects_leases(self):
        self.assertAllowed(self.reader, READ_ACTIONS, 'p1')

    def test_a_project_reader_may_not_create_update_or_delete(self):
        self.assertDenied(self.reader, WRITE_ACTIONS, 'p1')

    def test_a_project_member_may_do_everything_with_its_leases(self):
        self.assertAllowed(self.member, LEASE_ACTIONS, 'p1')

    def test_a_member_of_another_project_may_do_nothing_with_them(self):
        self.assertDenied(self.other_member, LEASE_ACTIONS, 'p1')

    def test_the_member_role_alone_does_not_make_a_reader(self):
        # Keystone's implied roles put reader in the member's token.
        self.assertDenied(_user('p1', 'member'), READ_ACTIONS, 'p1')

    def test_a_project_token_without_roles_may_do_nothing(self):
        self.assertDenied(_user('p1'), LEASE_ACTIONS, 'p1')

    def test_an_admin_may_do_everything_with_any_projects_leases(self):
        self.assertAllowed(self.admin, LEASE_ACTIONS, 'p2')

    def test_the_services_own_context_is_an_admin(self):
        self.assertAllowed(context.get_admin_context(), LEASE_ACTIONS, 'p2')

    def test_a_service_user_has_no_say_over_leases(self):
        self.assertDenied(self.service, LEASE_ACTIONS, 'p1')

    def test_only_an_admin_lists_the_leases_of_every_project(self):
        for ctx in (self.reader, self.member, self.service):
            self.assertRaises(exceptions.Forbidden, policy.authorize, ctx,
                              'list_all_projects', ctx.project_id)
        policy.authorize(self.admin, 'list_all_projects', 'p0')

    def test_a_system_scoped_admin_token_is_out_of_scope(self):
        system_admin = context.RequestContext(
            user_id='a', roles=['admin', 'member', 'reader'],
            system_scope='all')
        self.assertDenied(system_admin, LEASE_ACTIONS + ('list_all_projects',),
                          'p1')


class HostDefaultsTest(PolicyTestCase):

    def test_only_an_admin_manages_the_reservable_hosts(self):
        for ctx in (self.reader, self.member, self.service):
            self.assertDenied(ctx, HOST_ACTIONS, ctx.project_id, policy.HOSTS)
        self.assertAllowed(self.admin, HOST_ACTIONS, 'p0', policy.HOSTS)


class EngineActionDefaultsTest(PolicyTestCase):

    def assertEngineActions(self, check, ctx):
        for rules, action in ENGINE_ACTIONS:
            check(ctx, [action], ctx.project_id, rules)

    def test_a_service_user_may_start_and_end_reserved_resources(self):
        self.assertEngineActions(self.assertAllowed, self.service)

    def test_an_admin_may_start_and_end_reserved_resources(self):
        # As the sandbox's engine does, with a project-scoped admin token.
        self.assertEngineActions(self.assertAllowed, self.admin)

    def test_readers_and_members_may_not(self):
        self.assertEngineActions(self.assertDenied, self.reader)
        self.assertEngineActions(self.assertDenied, self.member)

    def test_nova_and_cinder_contexts_are_checked_with_the_same_rules(self):
        # nova.context and cinder.context subclass oslo.context's context.
        service = oslo_context.RequestContext(project_id='service',
                                              roles=['service'])
        self.assertEngineActions(self.assertAllowed, service)
        member = oslo_context.RequestContext(project_id='p1',
                                             roles=['member', 'reader'])
        self.assertEngineActions(self.assertDenied, member)


class OverrideTest(PolicyTestCase):

    def test_an_operator_overrides_a_rule_by_its_name(self):
        self.use_policy_file(
            {'reservation:leases:create': 'role:lease_creator'})
        error = self.assertRaises(exceptions.Forbidden, policy.authorize,
                                  self.member, 'create', 'p1')
        self.assertIn('reservation:leases:create', str(error))
        policy.authorize(_user('p1', 'lease_creator'), 'create', 'p1')

    def test_an_operator_overrides_the_engine_actions(self):
        self.use_policy_file({'reservation:servers:start': 'role:engine'})
        self.assertDenied(self.service, ['start'], 'service', policy.SERVERS)
        self.assertAllowed(_user('service', 'engine'), ['start'], 'service',
                           policy.SERVERS)

    def test_an_override_of_admin_or_owner_still_applies(self):
        with warnings.catch_warnings():
            warnings.simplefilter('ignore')  # the deprecation, as intended
            self.use_policy_file({'admin_or_owner': 'rule:admin_api or '
                                  '(project_id:%(project_id)s and '
                                  'role:lease_user)'})
            self.assertDenied(self.member, LEASE_ACTIONS, 'p1')
            self.assertAllowed(_user('p1', 'lease_user'), LEASE_ACTIONS,
                               'p1')
            self.assertAllowed(self.admin, LEASE_ACTIONS, 'p1')

    def test_an_override_of_admin_api_still_applies(self):
        with warnings.catch_warnings():
            warnings.simplefilter('ignore')
            self.use_policy_file({'admin_api': 'role:cloud_admin'})
            self.assertDenied(self.admin, HOST_ACTIONS, 'p0', policy.HOSTS)
            self.assertAllowed(_user('p0', 'cloud_admin'), HOST_ACTIONS,
                               'p0', policy.HOSTS)

    def test_without_new_defaults_the_old_ones_still_allow(self):
        # [oslo_policy] enforce_new_defaults = false: a cloud whose tokens
        # do not carry the member and reader roles yet.
        self.use_policy_file({})
        self.useFixture(config_fixture.Config(cfg.CONF)).config(
            enforce_new_defaults=False, group='oslo_policy')
        with warnings.catch_warnings():
            warnings.simplefilter('ignore')
            self.assertAllowed(_user('p1'), LEASE_ACTIONS, 'p1')
            self.assertDenied(_user('p2'), LEASE_ACTIONS, 'p1')
            self.assertDenied(_user('p1'), HOST_ACTIONS, 'p1', policy.HOSTS)
