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

"""The lease API's volume reservations count against Cinder's quotas.

The lease service as the lease API builds it in nova-api, with the reader
of Cinder's quotas through Cinder's API
(:class:`reservation_ext.clients.block_storage_quotas.BlockStorageQuotas`),
against a real cinder-api: Cinder's harness on its ``keystone`` pipeline
with the policy defaults of a new cloud, the service user with the
admin's token (:class:`cinder_base.KeystoneCinderTestCase`). The quotas
are set through Cinder's ``os-quota-sets`` API as ``openstack quota
set`` does. The lease API's WSGI module imports Nova, whose options
clash with Cinder's in one process: its error body for these errors is
tested in :mod:`tests.functional.test_window_quotas`.

Cinder's harness runs in a child process (:mod:`tests.cinder_child`).
"""

from tests import cinder_child


class CinderHarness(cinder_child.CinderHarness):
    """Run this module's tests in Cinder's harness, in a child process."""

    module = __name__


if cinder_child.IN_CINDER:
    import datetime
    import json
    import uuid

    from oslo_config import cfg
    import sqlalchemy as sa

    from db import models
    from reservation_ext.clients import block_storage_quotas
    from reservation_ext import clock as clock_mod
    from reservation_ext import conf as conf_mod
    from reservation_ext import context
    from reservation_ext import dates
    from reservation_ext.enforcement import enforcer
    from reservation_ext import exceptions
    from reservation_ext.leases import notifications
    from reservation_ext.leases import service as lease_service
    from reservation_ext import plugins as plugins_mod
    from reservation_ext.plugins import virtual_volume
    from tests.authz import table
    from tests.functional import cinder_base

    HOUR = datetime.timedelta(hours=1)
    # How a lease create request writes its dates.
    LEASE_DATE = '%Y-%m-%d %H:%M'
    PERSONAS = {persona.name: persona for persona in table.PERSONAS}
    OWNER = PERSONAS[table.MEMBER]

    class LeaseAPIVolumeQuotasTest(cinder_base.KeystoneCinderTestCase):

        def setUp(self):
            super().setUp()
            self.override_config('volume_reservable_gb', 100,
                                 'reservation')
            self.start = (datetime.datetime.utcnow() + HOUR).replace(
                second=0, microsecond=0)
            self.service = lease_service.LeaseService(
                cfg.CONF, clock_mod.SYSTEM,
                plugins_mod.load_plugins(cfg.CONF, clock_mod.SYSTEM),
                notifications.get_notifier(cfg.CONF),
                enforcer.from_conf(
                    cfg.CONF, clock_mod.SYSTEM,
                    volume_quotas=block_storage_quotas.BlockStorageQuotas(
                        cfg.CONF)))
            self.owner = context.RequestContext(
                user_id=OWNER.user, project_id=OWNER.project,
                roles=list(OWNER.roles))

        def set_quota(self, **quotas):
            """Set the owner's Cinder quotas, as the admin."""
            response = self.request(
                PERSONAS[table.ADMIN], 'PUT',
                '/os-quota-sets/%s' % OWNER.project, {'quota_set': quotas})
            self.assertEqual(200, response.status_code, response.text)

        def body(self, size, start=None, name='lease'):
            start = start or self.start
            return {'name': name, 'start_date': start.strftime(LEASE_DATE),
                    'end_date': (start + HOUR).strftime(LEASE_DATE),
                    'reservations': [{'resource_type': 'virtual:volume',
                                      'size_gb': size,
                                      'volume_id': str(uuid.uuid4())}],
                    'events': []}

        def lease(self, size=1, **kwargs):
            """Create a volume lease through the lease service."""
            return self.service.create(self.owner, self.body(size, **kwargs))

        def refused(self, size=1, error=exceptions.VolumeQuotaExceeded,
                    **kwargs):
            """Create a lease that must be refused; nothing is written."""
            before = self.leases()
            refusal = self.assertRaises(error, self.lease, size, **kwargs)
            self.assertEqual(before, self.leases())
            return refusal

        def leases(self):
            with self.database.engine.connect() as conn:
                return sorted(conn.execute(
                    sa.select(models.Lease.__table__.c.name)).scalars())

        def cinder_create(self, size, hints=None):
            """Create a volume as the owner through cinder-api."""
            body = {'volume': {'size': size, 'name': 'vol'}}
            if hints:
                body['OS-SCH-HNT:scheduler_hints'] = hints
            response = self.request(OWNER, 'POST', '/volumes', body)
            self.assertEqual(202, response.status_code, response.text)
            return response.json()['volume']

        def test_a_lease_over_the_volumes_quota_is_a_403_naming_volumes(self):
            self.set_quota(volumes=2)
            # A volume reserved through Cinder counts in its window too.
            self.cinder_create(1, {'reserved': 'True', 'lease_params':
                                   json.dumps({
                                       'start': dates.format_date(
                                           self.start),
                                       'end': dates.format_date(
                                           self.start + HOUR)})})
            self.lease(name='a')
            refusal = self.refused(name='b')
            self.assertEqual(
                (403, 'VolumeQuotaExceeded', "Maximum number of volumes "
                 "allowed (2) exceeded for quota 'volumes'."),
                (refusal.code, refusal.name, refusal.message))

        def test_a_lease_over_the_gigabytes_quota_is_a_403_naming_gigabytes(
                self):
            self.set_quota(gigabytes=10)
            self.lease(6, name='a')
            refusal = self.refused(5, name='b')
            self.assertEqual(
                (403, 'Requested volume or snapshot exceeds allowed '
                 'gigabytes quota. Requested 5G, quota is 10G and 6G has '
                 'been consumed.'), (refusal.code, refusal.message))

        def test_growing_a_volume_over_the_gigabytes_quota_is_refused(self):
            self.set_quota(gigabytes=10)
            self.lease(6, name='a')
            lease = self.lease(2, name='b')
            [reservation] = lease['reservations']
            refusal = self.assertRaises(
                exceptions.VolumeQuotaExceeded, self.service.update,
                self.owner, lease['id'], {'reservations': [
                    {'id': reservation['id'], 'size_gb': 5}]})
            self.assertIn('Requested 5G, quota is 10G and 6G',
                          refusal.message)
            [kept] = self.service.get(self.owner, lease['id'])[
                'reservations']
            self.assertEqual(2, kept['size_gb'])

        def test_leases_in_disjoint_windows_do_not_compete(self):
            self.set_quota(volumes=1, gigabytes=10)
            self.lease(10, name='a')
            self.lease(10, start=self.start + HOUR, name='b')
            self.refused(1, start=self.start + HOUR / 2, name='c')
            self.assertEqual(['a', 'b'], self.leases())

        def test_a_volume_outside_leases_counts_in_every_window(self):
            self.set_quota(volumes=2)
            self.cinder_create(1)
            self.lease(name='a')
            self.refused(name='b')
            self.lease(start=self.start + 24 * HOUR, name='c')

        def test_a_started_leased_volume_counts_in_its_window_only(self):
            self.set_quota(volumes=1)
            volume = self.cinder_create(1, {
                'reserved': 'True', 'lease_params': json.dumps({
                    'start': dates.format_date(self.start),
                    'end': dates.format_date(self.start + HOUR)})})
            # Its start, as the engine's: Cinder counts it in in_use now.
            virtual_volume.VirtualVolumePlugin(
                cfg.CONF, clock_mod.SYSTEM).on_start(
                    None, {'id': volume['metadata']['reservation:lease_id']},
                    {'volume_id': volume['id']})
            self.lease(start=self.start + HOUR, name='after')
            self.refused(start=self.start + HOUR / 2, name='overlapping')

        def test_cinder_unreachable_is_a_503_and_creates_nothing(self):
            self.set_quota(volumes=2)
            # Nothing listens on port 9 (discard) here.
            self.override_config('endpoint', 'http://127.0.0.1:9/v3',
                                 conf_mod.CLIENT_GROUP)
            refusal = self.refused(error=exceptions.EnforcementUnavailable)
            self.assertEqual(
                (503, "Cinder's quotas cannot be read; please retry later."),
                (refusal.code, refusal.message))
