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

"""The authorization table's Cinder rows, inside Cinder's functional harness.

The owner's world: a volume in status ``reserved`` and a schedule
proposal of volume capacity. cinder-api runs its ``keystone`` pipeline of
the project's api-paste.ini: the real keystonemiddleware, whose test
fixture stands in for Keystone's token validation (each persona has a
token with its project and roles; the engine's service user has the
admin's), and Cinder's own keystone context. A request without a token
is refused by keystonemiddleware itself.

Cinder's harness runs in a child process of its own, as
:mod:`tests.cinder_child` explains.
"""

from tests import cinder_child

IN_CINDER = cinder_child.IN_CINDER


class CinderHarness(cinder_child.CinderHarness):
    """Run the Cinder rows in a process of their own."""

    module = __name__


if IN_CINDER:
    import datetime
    import json
    import time

    from oslo_config import cfg

    from reservation_ext import clock as clock_mod
    from reservation_ext import context
    from reservation_ext import dates
    from reservation_ext.leases import proposals
    from reservation_ext import plugins as plugins_mod
    from tests.authz import table
    from tests.functional import cinder_base

    HOUR = datetime.timedelta(hours=1)
    MEMBER = table.PERSONAS[1]
    # Bounds of the wait for a volume (a hang guard).
    WAIT = 60
    POLL = 0.1

    class CinderWorld:
        """The owner's reserved volume and proposal, and fresh ones."""

        def __init__(self, test):
            self.test = test
            self.now = clock_mod.SYSTEM.now()
            self._windows = 0
            self._volume = self._new_volume()
            self._proposal = self._new_proposal()

        def reserved_volume(self, own):
            return self._new_volume() if own else self._volume

        def engine_call(self, action, own, **args):
            volume_id = self.reserved_volume(own)
            lease_id = self.test.volume_view(volume_id)['metadata'][
                'reservation:lease_id']
            return table.Call('POST', '/volumes/%s/action' % volume_id, {
                action: dict(args, lease_id=lease_id)}, volume_id)

        def proposal_create(self, own):
            proposal_id = self._new_proposal() if own else self._proposal
            return table.Call('POST', '/volumes', {
                'volume': {'size': 1, 'name': 'proposed'},
                'OS-SCH-HNT:scheduler_hints': {
                    'reserved': 'True', 'proposal': proposal_id}},
                proposal_id)

        def _new_volume(self):
            self._windows += 1
            start = self.now + self._windows * HOUR
            response = self.test.request(MEMBER, 'POST', '/volumes', {
                'volume': {'size': 1, 'name': 'reserved'},
                'OS-SCH-HNT:scheduler_hints': {
                    'reserved': 'True', 'lease_params': json.dumps({
                        'start': dates.format_date(start),
                        'end': dates.format_date(start + HOUR)})}})
            self.test.assertEqual(202, response.status_code, response.text)
            return response.json()['volume']['id']

        def _new_proposal(self):
            proposer = proposals.ProposalService(
                cfg.CONF, clock_mod.SYSTEM,
                plugins_mod.load_plugins(cfg.CONF, clock_mod.SYSTEM))
            owner = context.RequestContext(
                user_id=MEMBER.user, project_id=MEMBER.project,
                roles=list(MEMBER.roles))
            return proposer.propose(owner, {
                'reservations': [{'resource_type': 'virtual:volume',
                                  'size_gb': 1}],
                'duration': '1h', 'count': 1,
                'not_before': dates.format_date(
                    self.now + 100 * HOUR)})[0]['id']

    class AuthorizationTest(cinder_base.KeystoneCinderTestCase):
        """Every Cinder row of the authorization table, every persona."""

        def setUp(self):
            super().setUp()
            self.override_config('volume_reservable_gb', 100, 'reservation')
            self.world = CinderWorld(self)

        def send(self, persona, api, call):
            response = self.request(persona, call.method, call.path,
                                    call.body)
            if call.path.endswith('/action') and (
                    response.status_code == 202):
                self._wait_settled(call.target)
            return response.status_code, response.text

        def volume_view(self, volume_id):
            response = self.request(table.PERSONAS[0], 'GET',
                                    '/volumes/%s' % volume_id)
            return response.json().get('volume')

        def _wait_settled(self, volume_id):
            """Wait until a started volume is no longer being created."""
            deadline = time.monotonic() + WAIT
            while time.monotonic() < deadline:
                volume = self.volume_view(volume_id)
                if volume is None or volume['status'] != 'creating':
                    return
                time.sleep(POLL)
            self.fail('volume %s still creating after %ss'
                      % (volume_id, WAIT))

        def test_reserved_volumes_answer_each_persona_as_the_table_says(
                self):
            cells, problems = table.run(table.rows('cinder'), self.world,
                                        self.send)
            self.assertEqual([], problems, '%d of %d cells'
                             % (len(problems), cells))
            self.assertEqual('reserved', self.volume_view(
                self.world.reserved_volume(False))['status'])
