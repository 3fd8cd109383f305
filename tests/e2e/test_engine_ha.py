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

"""Three engines killed (SIGKILL) at random points: every action once.

A sandbox without engines of its own (``--engines 0``); the test runs
three engines of :mod:`harness.killing_engine`, each replaced when it
dies, and 200 lease lifecycles of every kind (whole hosts, reserved
servers, instance capacity, reserved volumes; see
:mod:`harness.engine_ha`) through the real Nova and Cinder. Then it
reads Nova's, Cinder's and Placement's own state: each lease aggregate
created once and gone, every host back in the free pool, each server
built once and deleted, each volume created once and deleted, no flavor
or server group left; every lease TERMINATED; no event left due while an
engine was idle for longer than ``event_claim_timeout +
event_poll_interval``. ``bench/engine_ha.py`` runs the same for longer.
"""

import json

from testtools import content

from harness import engine_ha
from reservation_ext.sandbox import config
from tests.e2e import base

SETTINGS = engine_ha.Settings(
    lifecycles=200, engines=3,
    # About 20 kills in 600 events (three checkpoints each).
    kill_probability=0.012, parallel=12, window=4,
    # An engine busy reclaiming preemptible capacity or on a busy machine
    # holds no claim and counts as idle: 10 s saw 12.7 s stretches on a
    # machine loaded 12 times over, hence 20 s (Blazar's default is 300).
    claim_timeout=20, poll_interval=0.5, seed=16)


class TestEngineHA(base.SandboxTestCase):

    OPTIONS = ('--engines', '0')

    def test_killed_engines_leave_every_action_done_once(self):
        figures = engine_ha.run(config.Layout.load(self.sandbox.state_dir),
                                SETTINGS)
        self.addDetail('figures', content.text_content(
            json.dumps(figures, indent=1)))
        self.assertEqual([], figures['problems'])
        self.assertEqual({'TERMINATED': SETTINGS.lifecycles},
                         dict(figures['outcomes']))
        self.assertGreater(figures['kills'], 0)
        counts = figures['nova_cinder']
        per_kind = SETTINGS.lifecycles // len(engine_ha.KINDS)
        self.assertEqual(
            {'aggregates_created': per_kind, 'servers_built': per_kind,
             'volumes_created': per_kind, 'volume_quota_commits': per_kind},
            dict(counts))
