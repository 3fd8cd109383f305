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

"""The policy rule that Nova or Cinder documents for one of its calls.

nova-api's server middleware and cinder-api's extension refuse some
calls on resources that wait for their lease (a RESERVED server, a
``reserved`` volume). Before saying why, they ask the rule the service
itself would ask, so that a reader is refused as the service refuses it
(403) and an operator's policy file applies. oslo.policy's documented
rules name their operations (``'/servers/{server_id}/action
(reboot)'``); :class:`OperationRules` finds a call's rule among them.
"""

import re

_OPERATION = re.compile(r'^(?P<path>\S+)(?: \((?P<action>[^)]+)\))?$')
_PARAMETER = re.compile(r'\\\{[^}]+\\\}')


class OperationRules:
    """Find the rules of the calls below ``prefix`` (``/servers/{id}``).

    ``rules`` are the service's oslo.policy rule defaults. Where several
    document the same operation, the rule of the call is the one that
    documents the fewest operations, then has the shortest name: the
    call's own rule (``os_compute_api:servers:update``), not those of the
    fields an answer shows (``os-extended-server-attributes``) nor its
    variants (``os-lock-server:unlock:unlock_override``).
    """

    def __init__(self, rules, prefix):
        candidates = {}
        for rule in rules:
            operations = getattr(rule, 'operations', None) or ()
            for operation in operations:
                match = _OPERATION.match(operation['path'])
                if match is None or not match.group('path').startswith(
                        prefix):
                    continue
                pattern = re.compile('^%s$' % _PARAMETER.sub(
                    '[^/]+', re.escape(match.group('path'))))
                key = (operation['method'], pattern, match.group('action'))
                candidates.setdefault(key, []).append(
                    (len(operations), len(rule.name), rule.name))
        self.prefix = prefix
        self._rules = {key: min(found)[2]
                       for key, found in candidates.items()}

    def rule(self, method, sub=None, action=None):
        """Return the rule of a call, or None when the service has none.

        :param sub: the path below the prefix (None for the resource);
            ``action`` the name of an ``/action`` call's body.
        """
        path = self.prefix + (sub or '')
        for (op_method, pattern, op_action), rule in self._rules.items():
            if (op_method == method and op_action == action and
                    pattern.match(path)):
                return rule
        return None

    def actions(self):
        """Return the names of the documented ``/action`` calls."""
        return sorted({action for (_method, pattern, action) in self._rules
                       if action is not None and
                       pattern.match(self.prefix + '/action')})
