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

"""A volume's lease in its metadata, inside Cinder's functional harness.

``reservation:lease_id`` and ``reservation:end`` are computed in the
volume views by the extension (what ``openstack volume show`` prints as
``properties``), never stored, never set by a user, and shown only to
who may show the lease; the metadata is the only place where a view shows
the lease (see :mod:`tests.functional.test_cinder_volume_view_schemas`).
cinder-api runs its ``keystone`` pipeline
(:class:`cinder_base.KeystoneCinderTestCase`), so each persona is who it
says; the tests run in a child process (:mod:`tests.cinder_child`).
"""

from tests import cinder_child

IN_CINDER = cinder_child.IN_CINDER


class CinderHarness(cinder_child.CinderHarness):
    """Run this module's tests in Cinder's harness, in a child process."""

    module = __name__


if IN_CINDER:
    import json
    import time

    from oslo_config import cfg

    from reservation_ext import clock as clock_mod
    from reservation_ext.plugins import virtual_volume
    from tests.authz import table
    from tests import fixtures
    from tests.functional import cinder_base

    ADMIN, MEMBER, READER, OTHER = table.PERSONAS[:4]
    LEASE_ID = 'reservation:lease_id'
    END = 'reservation:end'
    USERS = {'tier': 'scratch'}
    # Bounds of the wait for a volume (a hang guard).
    WAIT = 60
    POLL = 0.1

    class LeaseMetadataTest(cinder_base.ReservedVolumeTestCase):

        def call(self, persona, method, path, body=None, status=200):
            response = self.request(persona, method, path, body)
            self.assertEqual(status, response.status_code, response.text)
            return response.json() if response.content else None

        def reserve(self, name='scratch'):
            """A reserved volume of the owner's member, with USERS."""
            return self.call(MEMBER, 'POST', '/volumes',
                             self.reserved_volume(name, USERS),
                             status=202)['volume']

        def shown(self, persona, volume_id, status=200):
            return self.call(persona, 'GET', '/volumes/%s' % volume_id,
                             status=status).get('volume')

        def expected(self, lease_id, metadata=USERS):
            return dict(metadata, **{
                LEASE_ID: lease_id,
                END: self.end.strftime('%Y-%m-%dT%H:%M:%SZ')})

        def test_a_leased_volume_shows_its_lease_in_its_metadata(self):
            volume = self.reserve()
            expected = self.expected(self.lease_of(volume))
            self.assertEqual(expected, volume['metadata'])
            # In the metadata only: Cinder's schema has no key of ours.
            for persona in (MEMBER, READER, ADMIN):
                shown = self.shown(persona, volume['id'])
                self.assertEqual((expected, False),
                                 (shown['metadata'], LEASE_ID in shown))
            [detailed] = self.call(MEMBER, 'GET', '/volumes/detail')[
                'volumes']
            self.assertEqual(expected, detailed['metadata'])
            updated = self.call(MEMBER, 'PUT', '/volumes/%s' % volume['id'],
                                {'volume': {'name': 'renamed'}})['volume']
            self.assertEqual(('renamed', expected),
                             (updated['name'], updated['metadata']))
            # Nothing is stored: Cinder's metadata API has the user's keys.
            self.assertEqual({'metadata': USERS}, self.call(
                MEMBER, 'GET', '/volumes/%s/metadata' % volume['id']))
            plain = self.call(MEMBER, 'POST', '/volumes', {'volume': {
                'size': 1, 'name': 'plain', 'metadata': USERS}},
                status=202)['volume']
            self.assertEqual(USERS, self.shown(MEMBER, plain['id'])[
                'metadata'])

        def test_metadata_naming_a_lease_key_is_400_and_changes_nothing(
                self):
            volume = self.reserve()
            path = '/volumes/%s' % volume['id']
            for method, where, body, field in (
                    ('POST', path + '/metadata',
                     {'metadata': {'a': 'b', END: 'x'}}, 'metadata.' + END),
                    ('PUT', path + '/metadata', {'metadata': {LEASE_ID: 'x'}},
                     'metadata.' + LEASE_ID),
                    ('PUT', path + '/metadata/' + END, {'meta': {END: 'x'}},
                     'metadata.' + END),
                    ('DELETE', path + '/metadata/' + LEASE_ID, None,
                     'metadata.' + LEASE_ID),
                    ('PUT', path, {'volume': {'metadata': {END: 'x'}}},
                     'volume.metadata.' + END),
                    ('POST', '/volumes', {'volume': {
                        'size': 1, 'metadata': {LEASE_ID: 'x'}}},
                     'volume.metadata.' + LEASE_ID)):
                error = self.call(MEMBER, method, where, body, status=400)
                self.assertIn(field + ': is shown from the lease',
                              json.dumps(error), (method, where))
            self.assertEqual(self.expected(self.lease_of(volume)),
                             self.shown(MEMBER, volume['id'])['metadata'])
            self.assertEqual([volume['id']], [listed['id'] for listed in
                                              self.call(MEMBER, 'GET',
                                                        '/volumes')[
                                                  'volumes']])
            # The user's own keys are the user's; the lease's stay.
            self.call(MEMBER, 'PUT', path + '/metadata', {'metadata': {}})
            self.assertEqual(self.expected(self.lease_of(volume), {}),
                             self.shown(MEMBER, volume['id'])['metadata'])

        def wait_for(self, status, volume_id):
            deadline = time.monotonic() + WAIT
            while time.monotonic() < deadline:
                if self.shown(ADMIN, volume_id)['status'] == status:
                    return
                time.sleep(POLL)
            self.fail('volume %s never became %s' % (volume_id, status))

        def test_a_project_given_the_volume_learns_nothing_of_its_lease(
                self):
            volume = self.reserve()
            virtual_volume.VirtualVolumePlugin(
                cfg.CONF, clock_mod.SYSTEM).on_start(
                None, {'id': self.lease_of(volume)},
                {'volume_id': volume['id'], 'status': 'active',
                 'on_end': 'delete'})
            self.wait_for('available', volume['id'])
            transfer = self.call(MEMBER, 'POST', '/volume-transfers', {
                'transfer': {'volume_id': volume['id'], 'name': 'give'}},
                status=202)['transfer']
            self.call(OTHER, 'POST', '/volume-transfers/%s/accept'
                      % transfer['id'],
                      {'accept': {'auth_key': transfer['auth_key']}},
                      status=202)
            for view in (self.shown(OTHER, volume['id']), self.call(
                    OTHER, 'GET', '/volumes/detail')['volumes'][0]):
                self.assertEqual((volume['id'], USERS, None),
                                 (view['id'], view['metadata'],
                                  view.get(LEASE_ID)))
            # The lease is still the first project's: the admin sees it.
            self.assertEqual(self.expected(self.lease_of(volume)),
                             self.shown(ADMIN, volume['id'])['metadata'])

        def test_the_volume_list_reads_the_leases_db_once_per_page(self):
            volumes = [self.reserve('v%d' % k) for k in range(3)]
            statements = self.useFixture(fixtures.Statements(
                self.database.engine))
            listed = self.call(MEMBER, 'GET', '/volumes/detail')['volumes']
            reads = statements.reading('volume_reservations')
            self.assertEqual(1, len(reads), reads)
            self.assertEqual(
                {volume['id']: self.expected(self.lease_of(volume))
                 for volume in volumes},
                {volume['id']: volume['metadata'] for volume in listed})
