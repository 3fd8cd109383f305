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

"""Volume reservation inside Cinder's own functional harness.

The tests run in a child process of their own (see
:mod:`tests.cinder_child`), on :class:`cinder_base.CinderTestCase`.
"""

from tests import cinder_child

IN_CINDER = cinder_child.IN_CINDER


class CinderHarness(cinder_child.CinderHarness):
    """Run this module's tests in Cinder's harness, in a child process."""

    module = __name__


if IN_CINDER:
    import datetime
    import json
    import time

    from cinder.tests.functional.api import client
    from cinder.tests.unit import fake_constants as cinder_fake
    from oslo_config import cfg
    from oslo_utils import units
    import sqlalchemy as sa

    from db import models
    from reservation_ext import clock as clock_mod
    from reservation_ext import context
    from reservation_ext import dates
    from reservation_ext import exceptions
    from reservation_ext.leases import notifications
    from reservation_ext.leases import proposals
    from reservation_ext.leases import service as lease_service
    from reservation_ext import plugins as plugins_mod
    from reservation_ext.plugins import virtual_volume
    from tests.functional import cinder_base

    CAPACITY = 10

    def _later(seconds):
        return (datetime.datetime.utcnow() + datetime.timedelta(
            seconds=seconds)).strftime('%Y-%m-%dT%H:%M:%SZ')

    class ReservedVolumeTest(cinder_base.CinderTestCase):

        def setUp(self):
            super().setUp()
            self.override_config('volume_reservable_gb', CAPACITY,
                                 'reservation')

        def create(self, size=1, status=(202,), volume=None, **hints):
            body = {'volume': dict(volume or {}, size=size, name='scratch')}
            if hints:
                body['OS-SCH-HNT:scheduler_hints'] = hints
            response = self.api.api_request(
                '/volumes', method='POST', body=json.dumps(body),
                headers={'Content-Type': 'application/json'})
            self.assertIn(response.status_code, status, response.text)
            return response.json()

        def reserve(self, size=1, start=None, end=None):
            params = {'start': start or _later(3600),
                      'end': end or _later(7200)}
            return self.create(size, reserved='True',
                               lease_params=json.dumps(params))['volume']

        def rows(self, table):
            with self.database.engine.connect() as conn:
                return conn.execute(sa.select(table)).all()

        def cinder_volumes(self):
            return self.api.get_volumes()

        def test_reserved_create_writes_record_and_lease(self):
            volume = self.reserve(size=2)
            self.assertEqual('reserved', volume['status'])
            self.assertEqual(2, volume['size'])
            lease_id = volume['metadata']['reservation:lease_id']
            shown = self.api.get_volume(volume['id'])
            self.assertEqual(('reserved', lease_id),
                             (shown['status'],
                              shown['metadata']['reservation:lease_id']))
            self.assertEqual(
                [lease_id], [v['metadata'].get('reservation:lease_id')
                             for v in self.cinder_volumes()])
            # The list without details has no metadata, and no key of ours.
            self.assertEqual(
                [{'id', 'name', 'links'}],
                [set(v) for v in self.api.get_volumes(detail=False)])
            [request] = self.rows(models.VolumeReservation.__table__)
            self.assertEqual((2, volume['id'], 'delete'),
                             (request.size_gb, request.volume_id,
                              request.on_end))

        def test_a_proposal_gives_a_reserved_volume_its_window(self):
            proposer = proposals.ProposalService(
                cfg.CONF, clock_mod.SYSTEM,
                plugins_mod.load_plugins(cfg.CONF, clock_mod.SYSTEM))
            owner = context.RequestContext(
                user_id=cinder_fake.USER_ID,
                project_id=cinder_fake.PROJECT_ID, roles=['member', 'reader'])
            found = proposer.propose(owner, {
                'reservations': [{'resource_type': 'virtual:volume',
                                  'size_gb': CAPACITY}],
                'duration': '1h', 'count': 2, 'not_before': _later(3600)})
            volume = self.create(CAPACITY, reserved='True',
                                 proposal=found[1]['id'])['volume']
            lease = self.rows(models.Lease.__table__)[0]
            self.assertEqual(
                (found[1]['start_date'], found[1]['end_date']),
                tuple(dates.format_date(date) for date in (
                    lease.start_date, lease.end_date)))
            self.assertEqual('reserved', volume['status'])
            # The first proposal was released with it: its hour is free.
            self.reserve(size=CAPACITY, start=found[0]['start_date'],
                         end=found[0]['end_date'])

        def test_ordinary_create_is_cinders(self):
            volume = self.create(size=1)['volume']
            self.assertNotIn('reservation:lease_id', volume['metadata'])
            self.assertEqual([], self.rows(models.Lease.__table__))
            self.create(size=1, reserved='false')
            self.assertEqual([], self.rows(models.Lease.__table__))

        def assertRefused(self, status, field, size=1, volume=None,
                          **hints):
            error = self.create(size, status=(status,), volume=volume,
                                **hints)
            self.assertIn(field, json.dumps(error))
            self.assertEqual([], self.cinder_volumes())
            self.assertEqual([], self.rows(models.Lease.__table__))

        def test_bad_hints_are_400_and_create_nothing(self):
            self.assertRefused(400, 'reserved', reserved='maybe')
            self.assertRefused(400, 'lease_params', reserved='true',
                               lease_params='{not json')
            self.assertRefused(400, 'lease_params.colour', reserved='true',
                               lease_params='{"colour": "red"}')
            self.assertRefused(400, 'lease_params.start', reserved='true',
                               lease_params='{"start": "2001-01-01 00:00",'
                                            ' "end": "2001-01-02 00:00"}')
            self.assertRefused(400, 'lease_params.end', reserved='true',
                               lease_params=json.dumps(
                                   {'start': _later(7200),
                                    'end': _later(3600)}))
            self.assertRefused(400, 'lease_params.on_end', reserved='true',
                               lease_params='{"on_end": "shelve"}')

        def test_reserved_alone_leases_from_now_for_30_days(self):
            volume = self.create(size=1, reserved='yes')['volume']
            self.assertEqual('reserved', volume['status'])
            [lease] = self.rows(models.Lease.__table__)
            self.assertEqual(datetime.timedelta(days=30),
                             lease.end_date - lease.start_date)
            self.assertEqual('scratch-' + volume['id'], lease.name)

        def test_unknown_volume_type_is_404_and_creates_nothing(self):
            body = {'volume': {'size': 1, 'volume_type': 'no-such-type'},
                    'OS-SCH-HNT:scheduler_hints': {'reserved': 'true'}}
            response = self.api.api_request(
                '/volumes', method='POST', body=json.dumps(body),
                headers={'Content-Type': 'application/json'})
            self.assertEqual(404, response.status_code, response.text)
            self.assertEqual([], self.cinder_volumes())
            self.assertEqual([], self.rows(models.Lease.__table__))

        def test_sources_are_refused(self):
            self.assertRefused(
                400, 'snapshot_id', reserved='true',
                volume={'snapshot_id': '6f3c5b1e-2a4d-4c8e-9b7a-1d2e3f405162'})

        def test_over_capacity_is_409_and_creates_nothing(self):
            self.assertRefused(409, 'volume_reservable_gb',
                               size=CAPACITY + 1, reserved='true',
                               lease_params=json.dumps(
                                   {'start': _later(3600),
                                    'end': _later(7200)}))

        def started(self, on_end):
            """A started volume; its plugin, lease and reservation."""
            volume = self.reserve(size=1, start=_later(3600))
            plugin = virtual_volume.VirtualVolumePlugin(cfg.CONF,
                                                        clock_mod.SYSTEM)
            reservation = {'volume_id': volume['id'], 'status': 'active',
                           'on_end': on_end}
            lease = {'id': volume['metadata']['reservation:lease_id']}
            plugin.on_start(None, lease, reservation)
            return plugin, lease, reservation

        def test_start_and_end_through_the_plugin(self):
            plugin, lease, reservation = self.started('delete')
            self.assertEqual('available', self.api.get_volume(
                reservation['volume_id'])['status'])
            # Idempotent: another engine may run it again.
            plugin.on_start(None, lease, reservation)
            plugin.on_end(None, lease, reservation)
            self.assertEqual([], self.cinder_volumes())
            self.assertEqual({}, self.images.images)
            plugin.on_end(None, lease, reservation)

        def test_snapshot_delete_uploads_to_an_image_then_deletes(self):
            plugin, lease, reservation = self.started('snapshot_delete')
            plugin.on_end(None, lease, reservation)
            self.assertEqual([], self.cinder_volumes())
            [image] = self.images.images.values()
            self.assertEqual(
                ('scratch-snapshot', 'active', units.Gi, 'raw',
                 cinder_fake.PROJECT_ID),
                (image['name'], image['status'], image['size'],
                 image['disk_format'], image['owner']))
            # Done once: the volume is gone.
            plugin.on_end(None, lease, reservation)
            self.assertEqual(1, len(self.images.images))

        def test_a_failed_upload_is_a_conflict_and_is_retried(self):
            plugin, lease, reservation = self.started('snapshot_delete')
            end = {'os-reservation-end': {'lease_id': lease['id'],
                                          'snapshot': True}}
            path = '/volumes/%s/action' % reservation['volume_id']
            self.api.api_post(path, end, check_response_status=[202])
            self.wait_for('available', reservation['volume_id'])
            # As Cinder does when the upload fails: the image goes.
            self.images.images.clear()
            error = self.assertRaises(
                client.OpenStackApiException, self.api.api_post, path, end,
                check_response_status=[202])
            self.assertEqual(409, error.response.status_code)
            self.assertIn('upload', error.response.text)
            self.assertEqual(
                {'deleting': False},
                self.api.api_post(path, end, check_response_status=[202]))
            self.assertEqual(1, len(self.images.images))
            self.wait_for('available', reservation['volume_id'])

        def test_an_attached_volume_is_not_uploaded(self):
            plugin, lease, reservation = self.started('snapshot_delete')
            self.api.api_post(
                '/volumes/%s/action' % reservation['volume_id'],
                {'os-reserve': {}}, check_response_status=[202])
            error = self.assertRaises(
                exceptions.PluginError, plugin.on_end, None, lease,
                reservation)
            self.assertIn('only an available volume', str(error))
            self.assertEqual({}, self.images.images)

        def wait_for(self, status, volume_id):
            # A hang guard: uploading the fake GiB takes seconds on a busy
            # machine.
            for _ in range(600):
                if self.api.get_volume(volume_id)['status'] == status:
                    return
                time.sleep(0.1)
            self.fail('volume %s never became %s' % (volume_id, status))

        def test_deleting_a_started_volume_deletes_its_lease(self):
            plugin, lease, reservation = self.started('snapshot_delete')
            self.api.delete_volume(reservation['volume_id'])
            self.assertEqual([], self.rows(models.Lease.__table__))
            self.assertEqual({}, self.images.images)

        def test_actions_of_other_leases_are_refused(self):
            volume = self.reserve()
            error = self.assertRaises(
                client.OpenStackApiException, self.api.api_post,
                '/volumes/%s/action' % volume['id'],
                {'os-reservation-start': {'lease_id': 'another'}},
                check_response_status=[202])
            self.assertEqual(409, error.response.status_code)
            self.assertEqual('reserved',
                             self.api.get_volume(volume['id'])['status'])

        def test_actions_on_a_reserved_volume_are_refused(self):
            volume = self.reserve()
            for action in ({'os-extend': {'new_size': 2}},
                           {'os-retype': {'new_type': '__DEFAULT__'}}):
                error = self.assertRaises(
                    client.OpenStackApiException, self.api.api_post,
                    '/volumes/%s/action' % volume['id'], action,
                    check_response_status=[202])
                self.assertIn(error.response.status_code, (400, 404, 409))
            error = self.assertRaises(
                client.OpenStackApiException, self.api.api_post,
                '/snapshots', {'snapshot': {'volume_id': volume['id']}},
                check_response_status=[202])
            self.assertEqual(400, error.response.status_code)

        def owner_and_service(self, volume):
            """The lease's owner's context and a lease service."""
            [lease] = self.rows(models.Lease.__table__)
            owner = context.RequestContext(
                project_id=lease.project_id, user_id=lease.user_id,
                roles=['member', 'reader'])
            return owner, lease_service.LeaseService(
                cfg.CONF, clock_mod.SYSTEM,
                plugins_mod.load_plugins(cfg.CONF, clock_mod.SYSTEM),
                notifications.get_notifier(cfg.CONF))

        def resize(self, service, owner, volume, size):
            lease_id = volume['metadata']['reservation:lease_id']
            [reservation] = service.get(owner, lease_id)['reservations']
            return service.update(owner, lease_id, {'reservations': [
                {'id': reservation['id'], 'size_gb': size}]})

        def test_a_reserved_volume_is_resized_with_its_lease(self):
            volume = self.reserve(size=2)
            owner, service = self.owner_and_service(volume)
            lease = self.resize(service, owner, volume, 5)
            self.assertEqual(('PENDING', 5), (
                lease['status'], lease['reservations'][0]['size_gb']))
            self.assertEqual(('reserved', 5), tuple(
                self.api.get_volume(volume['id'])[key]
                for key in ('status', 'size')))
            self.assertRaises(exceptions.NotEnoughResources, self.resize,
                              service, owner, volume, CAPACITY + 1)
            self.assertEqual(lease, service.get(owner, lease['id']))
            self.assertEqual(5, self.api.get_volume(volume['id'])['size'])

        def test_only_a_reserved_volume_changes_size(self):
            plugin, lease, reservation = self.started('delete')
            error = self.assertRaises(
                client.OpenStackApiException, self.api.api_post,
                '/volumes/%s/action' % reservation['volume_id'],
                {'os-reservation-size': {'lease_id': lease['id'],
                                         'size': 3}},
                check_response_status=[202])
            self.assertEqual(409, error.response.status_code)
            self.assertEqual(1, self.api.get_volume(
                reservation['volume_id'])['size'])

        def test_deleting_a_reserved_volume_deletes_its_lease(self):
            volume = self.reserve()
            self.api.delete_volume(volume['id'])
            self.assertEqual([], self.cinder_volumes())
            self.assertEqual([], self.rows(models.Lease.__table__))
