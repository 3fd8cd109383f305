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

"""Volume leases inside Cinder's harness while Cinder's answers fail.

As :mod:`tests.functional.test_faults_nova`, for ``virtual:volume``: the
engine's Cinder client sends its requests to the real cinder-api
through :class:`tests.faults.FaultyTransport`; the engine runs with a
clock the test moves on by more than its longest retry backoff. Every
lease ends (its volume created at the start, deleted at the end,
uploaded to one image first for ``snapshot_delete``) or is in ERROR with
the reason; once the failed leases are deleted no volume is left.

Cinder's harness runs in a child process (:mod:`tests.cinder_child`).
"""

from tests import cinder_child


class CinderFaultsHarness(cinder_child.CinderHarness):
    """Run this module's tests in Cinder's harness, in a child process."""

    module = __name__


if cinder_child.IN_CINDER:
    import datetime
    import json

    from oslo_config import cfg
    import sqlalchemy as sa

    from db import models
    from reservation_ext.clients import plugin_clients
    from reservation_ext import clock as clock_mod
    from reservation_ext import context
    from reservation_ext import dates
    from reservation_ext.engine import runner
    from reservation_ext.leases import notifications
    from reservation_ext.leases import service as lease_service
    from reservation_ext.plugins import virtual_volume
    from reservation_ext import states
    from tests import faults
    from tests.functional import cinder_base

    SEED = 16
    RATE = 0.3
    CAPACITY = 10
    SECOND = datetime.timedelta(seconds=1)
    HOUR = datetime.timedelta(hours=1)
    # Longer than the engine's longest backoff between two tries.
    RETRY_STEP = datetime.timedelta(seconds=64)
    ON_END = ('delete', 'snapshot_delete')
    FINISHED = (states.LeaseStatus.TERMINATED, states.LeaseStatus.ERROR)

    class CinderFaultsTest(cinder_base.CinderTestCase):

        def setUp(self):
            super().setUp()
            self.override_config('volume_reservable_gb', CAPACITY,
                                 'reservation')
            for option, value in (('connect_retries', 3),
                                  ('status_code_retries', 3),
                                  ('connect_retry_delay', 0.01),
                                  ('status_code_retry_delay', 0.01)):
                self.override_config(option, value, 'reservation_client')
            self.start = datetime.datetime.utcnow().replace(
                microsecond=0) + HOUR
            self.end = self.start + HOUR
            self.admin = context.get_admin_context()

        def reserve(self, on_end, name='scratch'):
            """A reserved volume; its lease id."""
            body = {'volume': {'size': 1, 'name': '%s-%s' % (name, on_end)},
                    'OS-SCH-HNT:scheduler_hints': {
                        'reserved': 'True', 'lease_params': json.dumps({
                            'start': dates.format_date(self.start),
                            'end': dates.format_date(self.end),
                            'on_end': on_end})}}
            response = self.api.api_request(
                '/volumes', method='POST', body=json.dumps(body),
                headers={'Content-Type': 'application/json'})
            self.assertEqual(202, response.status_code, response.text)
            return response.json()['volume']['metadata'][
                'reservation:lease_id']

        def lease_service(self, transport):
            clients = plugin_clients.PluginClients(cfg.CONF,
                                                   transport=transport)
            plugin = virtual_volume.VirtualVolumePlugin(
                cfg.CONF, clock_mod.SYSTEM, clients)
            return lease_service.LeaseService(
                cfg.CONF, clock_mod.SYSTEM,
                {virtual_volume.RESOURCE_TYPE: plugin},
                notifications.get_notifier(cfg.CONF))

        def drive(self, at, transport):
            """Run the events due at ``at`` and every retry of them."""
            for attempt in range(cfg.CONF.reservation.event_max_attempts):
                clock = clock_mod.ManualClock(at + attempt * RETRY_STEP)
                plugin = virtual_volume.VirtualVolumePlugin(
                    cfg.CONF, clock, plugin_clients.PluginClients(
                        cfg.CONF, transport=transport))
                engine = runner.Engine(
                    cfg.CONF, clock, {virtual_volume.RESOURCE_TYPE: plugin},
                    notifications.get_notifier(cfg.CONF))
                while engine.run_once():
                    pass

        def lease(self, lease_id):
            return self.lease_service(None).get(self.admin, lease_id)

        def assertShowsItsState(self, lease):
            """ACTIVE with an available volume, or ERROR with a reason."""
            if lease['status'] == states.LeaseStatus.ERROR:
                self.assertNotIn(lease['status_reason'], (None, ''))
                return
            self.assertEqual(states.LeaseStatus.ACTIVE, lease['status'])
            [reservation] = lease['reservations']
            self.assertEqual('available', self.api.get_volume(
                reservation['volume_id'])['status'])

        def assertFinished(self, lease_ids):
            """Each lease TERMINATED or ERROR with a reason; none pending.

            Return ``{status: count}``.
            """
            outcomes = {}
            for lease_id in lease_ids:
                lease = self.lease(lease_id)
                self.assertIn(lease['status'], FINISHED, lease)
                if lease['status'] == states.LeaseStatus.ERROR:
                    self.assertNotIn(lease['status_reason'], (None, ''))
                outcomes[lease['status']] = outcomes.get(
                    lease['status'], 0) + 1
            events = models.Event.__table__
            with self.database.engine.connect() as conn:
                self.assertEqual([], conn.execute(sa.select(events).where(
                    events.c.status.not_in(
                        states.EventStatus.FINISHED))).all())
            return outcomes

        def snapshots(self, leases):
            """How many ``snapshot_delete`` leases of ``leases`` ended.

            ``leases``: ``{lease id: on_end}``.
            """
            return sum(1 for lease_id, on_end in leases.items()
                       if on_end == 'snapshot_delete' and self.lease(
                           lease_id)['status'] ==
                       states.LeaseStatus.TERMINATED)

        def delete_failed(self, lease_ids):
            """Delete the leases in ERROR (Cinder answers again)."""
            service = self.lease_service(None)
            for lease_id in lease_ids:
                if self.lease(lease_id)['status'] == (
                        states.LeaseStatus.ERROR):
                    service.delete(self.admin, lease_id)

        def orphans(self, snapshots, images_before=0):
            """What Cinder holds without a lease, once leases are done.

            Any volume; images other than one per ``snapshot_delete``
            lease that ended (``images_before`` were there before).
            """
            found = ['volume %s (%s)' % (volume['id'], volume['status'])
                     for volume in self.api.get_volumes()]
            images = len(self.images.images) - images_before
            if images != snapshots:
                found.append('%d images for %d snapshots' % (images,
                                                             snapshots))
            return found

        def assertNothingOrphaned(self, snapshots):
            self.assertEqual([], self.orphans(snapshots))

        def test_every_volume_lease_ends_or_shows_why_at_30_percent(self):
            leases = {self.reserve(on_end): on_end
                      for on_end in ON_END * 2}
            transport = faults.FaultyTransport(SEED, RATE)
            self.drive(self.start + SECOND, transport)
            for lease_id in leases:
                self.assertShowsItsState(self.lease(lease_id))
            self.drive(self.end + SECOND, transport)
            self.assertFinished(leases)
            # Faults did meet the leases (how many depends on how often
            # the clients poll, which the machine's speed decides).
            self.assertGreater(sum(transport.counts.values()), 5)
            snapshots = self.snapshots(leases)
            self.delete_failed(leases)
            self.assertNothingOrphaned(snapshots)

        def test_a_volume_lease_shows_why_when_cinder_stays_down(self):
            lease_id = self.reserve('delete')
            down = faults.FaultyTransport(SEED, rate=1.0,
                                          kinds=('refused', '503'))
            self.drive(self.start + SECOND, down)
            shown = self.lease(lease_id)
            self.assertEqual(states.LeaseStatus.ERROR, shown['status'])
            self.assertRegex(shown['status_reason'],
                             '^on_start: Cinder (refused|call) POST '
                             '/volumes/.*/action os-reservation-start')
            self.drive(self.end + SECOND, down)
            self.assertRegex(self.lease(lease_id)['status_reason'],
                             '^on_end: Cinder ')
            self.assertFinished([lease_id])
            self.delete_failed([lease_id])
            self.assertNothingOrphaned(0)

        def test_actions_that_timed_out_after_cinder_acted_end_once(self):
            leases = [self.reserve(on_end) for on_end in ON_END]
            # Each POST times out the first time, after Cinder acted.
            timeouts = faults.FaultyTransport(
                SEED, rate=1.0, kinds=('timeout',),
                where=faults.first_time(
                    lambda method, url, body: method == 'POST'))
            self.drive(self.start + SECOND, timeouts)
            self.drive(self.end + SECOND, timeouts)
            self.assertEqual({states.LeaseStatus.TERMINATED: 2},
                             self.assertFinished(leases))
            self.assertGreater(timeouts.counts['timeout'], 3)
            self.assertNothingOrphaned(1)

        def test_a_volume_in_error_ends_without_a_snapshot(self):
            lease_id = self.reserve('snapshot_delete')
            self.drive(self.start + SECOND, faults.FaultyTransport(SEED, 0))
            [reservation] = self.lease(lease_id)['reservations']
            # As when the backend loses it; the upload would be refused.
            self.api.api_post(
                '/volumes/%s/action' % reservation['volume_id'],
                {'os-reset_status': {'status': 'error'}},
                check_response_status=[202])
            self.drive(self.end + SECOND, faults.FaultyTransport(SEED, 0))
            self.assertEqual({states.LeaseStatus.TERMINATED: 1},
                             self.assertFinished([lease_id]))
            self.assertNothingOrphaned(0)
