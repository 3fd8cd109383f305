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

"""Our volume views against Cinder's documented schemas, in its harness.

Strict clients (tempest) validate every volume answer against Cinder's
response schemas, which allow no key outside them: a reserved volume and
a leased (started) one show their lease in ``metadata`` only. Each view
is checked with tempest's schemas and check
(:mod:`tests.tempest_schemas`) at every microversion at which tempest's
volume schema changes, up to Cinder's newest, for the volume's owner and
the administrator. cinder-api runs its ``keystone`` pipeline; the tests
run in a child process (:mod:`tests.cinder_child`).
"""

from tests import cinder_child

IN_CINDER = cinder_child.IN_CINDER


class CinderHarness(cinder_child.CinderHarness):
    """Run this module's tests in Cinder's harness, in a child process."""

    module = __name__


if IN_CINDER:
    import time
    import uuid

    from cinder.api.openstack import api_version_request
    from oslo_config import cfg
    import requests
    from tempest.lib import exceptions as tempest_exc

    from reservation_ext import clock as clock_mod
    from reservation_ext.leases import metadata as lease_metadata
    from reservation_ext.plugins import virtual_volume
    from tests.authz import table
    from tests.functional import cinder_base
    from tests import tempest_schemas

    ADMIN, MEMBER = table.PERSONAS[:2]
    NEWEST = api_version_request.max_api_version().get_string()
    MICROVERSIONS = tempest_schemas.microversions(tempest_schemas.VOLUMES,
                                                  '3.0', NEWEST)
    USERS = {'tier': 'scratch'}
    # Bounds of the wait for a volume (a hang guard).
    WAIT = 60
    POLL = 0.1

    class VolumeViewSchemaTest(cinder_base.ReservedVolumeTestCase):
        """A reserved and a leased volume of the member's project."""

        def setUp(self):
            super().setUp()
            self.answers = {name: self.reserve(name)
                            for name in ('reserved', 'leased')}
            self.volumes = {name: answer['volume']['id']
                            for name, answer in self.answers.items()}
            self.leases = {name: self.lease_of(answer['volume'])
                           for name, answer in self.answers.items()}
            virtual_volume.VirtualVolumePlugin(
                cfg.CONF, clock_mod.SYSTEM).on_start(
                None, {'id': self.leases['leased']},
                {'volume_id': self.volumes['leased'], 'status': 'active',
                 'on_end': 'delete'})
            self.wait_for('available', self.volumes['leased'])

        def start_service(self, name, host=None, **kwargs):
            # The volume service as Cinder names a backend of
            # enabled_backends (host@backend), as deployments (and
            # tempest's schema of the admin's os-vol-host-attr:host) have
            # it; the harness's plain host has no backend.
            if name == 'volume' and host is None:
                host = '%s@fake' % uuid.uuid4().hex
            return super().start_service(name, host, **kwargs)

        def call(self, persona, method, path, body=None, status=200,
                 microversion=cinder_base.CinderTestCase._osapi_version):
            """The answer's JSON, as ``persona`` at ``microversion``."""
            response = requests.request(
                method, self.auth_url + path, json=body, headers={
                    'X-Auth-Token': self.token(persona),
                    'OpenStack-API-Version': 'volume ' + microversion})
            self.assertEqual(status, response.status_code, response.text)
            return response.json()

        def reserve(self, name):
            """The create's answer of a reserved volume of the member.

            At the microversion tempest creates volumes with (its client
            sends none), the one its create schema describes.
            """
            return self.call(MEMBER, 'POST', '/volumes',
                             self.reserved_volume(name, USERS), status=202,
                             microversion=MICROVERSIONS[0])

        def wait_for(self, status, volume_id):
            deadline = time.monotonic() + WAIT
            while time.monotonic() < deadline:
                if self.call(ADMIN, 'GET', '/volumes/' + volume_id)[
                        'volume']['status'] == status:
                    return
                time.sleep(POLL)
            self.fail('volume %s never became %s' % (volume_id, status))

        def valid(self, schema, body, microversion, status=200):
            """Assert tempest finds ``body`` valid by ``schema``."""
            try:
                tempest_schemas.validate(schema, status, body)
            except tempest_exc.InvalidHTTPResponseBody as exc:
                self.fail('%s: %s' % (microversion, exc))

        def assert_lease_in_metadata(self, name, volume, microversion):
            self.assertEqual(
                (self.leases[name],
                 self.end.strftime(lease_metadata.END_FORMAT),
                 USERS['tier']),
                (volume['metadata'].get(lease_metadata.LEASE_ID),
                 volume['metadata'].get(lease_metadata.END),
                 volume['metadata'].get('tier')), (microversion, name))

        def test_each_view_of_a_reserved_and_a_leased_volume_is_valid(self):
            names = {volume_id: name
                     for name, volume_id in self.volumes.items()}
            for microversion in MICROVERSIONS:
                schema = tempest_schemas.volume_schema(microversion)
                for persona in (MEMBER, ADMIN):
                    for name, volume_id in self.volumes.items():
                        shown = self.call(persona, 'GET',
                                          '/volumes/' + volume_id,
                                          microversion=microversion)
                        self.valid(schema.show_volume, shown, microversion)
                        self.assert_lease_in_metadata(
                            name, shown['volume'], microversion)
                    detailed = self.call(persona, 'GET', '/volumes/detail',
                                         microversion=microversion)
                    self.valid(schema.list_volumes_with_detail, detailed,
                               microversion)
                    for volume in detailed['volumes']:
                        self.assert_lease_in_metadata(
                            names[volume['id']], volume, microversion)
                    self.valid(schema.list_volumes_no_detail, self.call(
                        persona, 'GET', '/volumes',
                        microversion=microversion), microversion)

        def test_the_create_and_update_answers_are_valid(self):
            # tempest checks these two with one schema, of the answers
            # without a microversion (Cinder's own answers at later ones
            # have keys it does not describe).
            schemas = tempest_schemas.VOLUME_BASE
            for name, answer in self.answers.items():
                self.valid(schemas.create_volume, answer, 'create', 202)
                self.assert_lease_in_metadata(name, answer['volume'],
                                              'create')
                updated = self.call(
                    MEMBER, 'PUT', '/volumes/' + self.volumes[name],
                    {'volume': {'name': name + '-renamed'}},
                    microversion=MICROVERSIONS[0])
                self.valid(schemas.update_volume, updated, 'update')
                self.assert_lease_in_metadata(name, updated['volume'],
                                              'update')

        def test_a_key_of_ours_beside_metadata_would_fail_tempest(self):
            # The check above can fail: the same views with a top-level
            # key of ours are refused, naming it.
            for microversion in (MICROVERSIONS[0], MICROVERSIONS[-1]):
                schema = tempest_schemas.volume_schema(microversion)
                for volume_id in self.volumes.values():
                    shown = self.call(MEMBER, 'GET', '/volumes/' + volume_id,
                                      microversion=microversion)
                    shown['volume'][lease_metadata.LEASE_ID] = 'x'
                    error = self.assertRaises(
                        tempest_exc.InvalidHTTPResponseBody,
                        tempest_schemas.validate, schema.show_volume, 200,
                        shown)
                    self.assertIn("'%s' was unexpected"
                                  % lease_metadata.LEASE_ID, str(error))
