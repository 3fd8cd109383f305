"""The lease policy rules: defaults, and an operator's override."""

import json
import os

import fixtures
from oslo_config import cfg
from oslo_config import fixture as config_fixture

from reservation_ext import context
from reservation_ext import exceptions
from reservation_ext import policy
from tests import base


class PolicyTest(base.TestCase):

    def setUp(self):
        super().setUp()
        self.member = context.RequestContext(
            project_id='p1', user_id='u1', roles=['member'])
        self.admin = context.RequestContext(
            project_id='p0', user_id='a', roles=['admin'])

    def use_policy_file(self, rules):
        path = os.path.join(self.useFixture(fixtures.TempDir()).path,
                            'policy.yaml')
        with open(path, 'w') as f:
            json.dump(rules, f)
        policy.get_enforcer()  # registers [oslo_policy] on CONF
        self.useFixture(config_fixture.Config(cfg.CONF)).config(
            policy_file=path, group='oslo_policy')
        policy.reset()  # the enforcer reads policy_file when it is built

    def test_defaults(self):
        self.use_policy_file({})
        self.assertTrue(policy.allowed(self.member, 'get', 'p1'))
        self.assertFalse(policy.allowed(self.member, 'get', 'p2'))
        self.assertTrue(policy.allowed(self.admin, 'delete', 'p2'))
        self.assertTrue(policy.allowed(
            context.get_admin_context(), 'update', 'p2'))
        self.assertRaises(exceptions.Forbidden, policy.authorize,
                          self.member, 'list_all_projects', 'p1')
        policy.authorize(self.admin, 'list_all_projects', 'p0')

    def test_operator_override(self):
        self.use_policy_file(
            {'reservation:leases:create': 'role:lease_creator'})
        error = self.assertRaises(exceptions.Forbidden, policy.authorize,
                                  self.member, 'create', 'p1')
        self.assertIn('reservation:leases:create', str(error))
        creator = context.RequestContext(
            project_id='p1', user_id='u1', roles=['lease_creator'])
        policy.authorize(creator, 'create', 'p1')
