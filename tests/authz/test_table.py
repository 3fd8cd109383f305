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

"""The authorization table covers every policy rule; the base rules hold.

The calls of the table run in the harnesses
(``tests.functional.test_authorization_nova`` and ``_cinder``); the base
rules, which no call names alone, are checked here with each persona's
credentials against the owner's project.
"""

import collections

from reservation_ext import context
from reservation_ext import policy
from tests.authz import table
from tests import base


def _credentials(persona):
    if persona.project is None:
        return context.RequestContext()
    return context.RequestContext(user_id=persona.user,
                                  project_id=persona.project,
                                  roles=list(persona.roles))


class TableTest(base.TestCase):

    def test_every_policy_rule_has_a_row(self):
        covered = {rule for row in table.ROWS for rule in row.rules}
        missing = [rule.name for rule in policy.list_rules()
                   if rule.name not in covered]
        self.assertEqual([], missing, 'rules without a row in '
                         'tests/authz/table.py')

    def test_every_row_names_rules_that_exist(self):
        names = {rule.name for rule in policy.list_rules()}
        self.assertEqual([], [(row.name, rule) for row in table.ROWS
                              for rule in row.rules if rule not in names])

    def test_every_row_has_an_outcome_for_every_persona(self):
        personas = {persona.name for persona in table.PERSONAS}
        self.assertEqual([], [row.name for row in table.ROWS
                              if set(row.expect) != personas])

    def test_every_call_is_named_once(self):
        counts = collections.Counter(row.name for row in table.ROWS)
        self.assertEqual([], [name for name, n in counts.items() if n > 1])

    def test_the_base_rules_hold_for_the_personas_the_table_says(self):
        self.addCleanup(policy.reset)
        enforcer = policy.get_enforcer()
        wrong = []
        for row in table.rows('policy'):
            for persona in table.PERSONAS:
                holds = enforcer.authorize(
                    row.name, {'project_id': table.OWNER_PROJECT},
                    _credentials(persona))
                if holds != row.outcome(persona):
                    wrong.append((row.name, persona.name, holds))
        self.assertEqual([], wrong)
