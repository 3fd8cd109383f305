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

"""A base for tests that run inside Cinder's own functional harness.

Real Cinder: the API on a real port (the project's
``etc/cinder/api-paste.ini``, noauth as in Cinder's harness, with the
reservation extension loaded beside the standard ones), the scheduler and
a volume service with the sandbox's driver (Cinder's fake driver with a
sparse file per volume), over the fake RPC transport. Glance is
:class:`ImageStore`, in-process.
The leases DB is an SQLite file. The service user of
``[reservation_client]`` reaches this cinder-api with a noauth token
(keystoneauth1's ``admin_token`` plugin), so the real
:class:`reservation_ext.clients.block_storage.CinderClient` is what the
plugin uses.

Cinder monkey patches the process with eventlet, and its global
configuration clashes with Nova's: these tests run in a child process of
their own (see :mod:`tests.functional.test_cinder_extension`).
"""

import copy
import datetime
import json
import os
import threading
import uuid

from cinder import exception as cinder_exc
from cinder.image import glance
from cinder import policy as cinder_policy
from cinder import service
from cinder.tests.functional import functional_helpers
from cinder.tests.unit import fake_notifier
import fixtures as lib_fixtures
from keystoneauth1 import loading as ks_loading
from keystonemiddleware import fixture as ksm_fixture
from oslo_config import cfg
from oslo_service import wsgi
import requests
import sqlalchemy as sa

from db import models
from reservation_ext import clock as clock_mod
from reservation_ext import conf as conf_mod
from reservation_ext import dates
from reservation_ext import policy
from reservation_ext.sandbox.cinder import volume_driver
from tests.authz import table
from tests import fixtures

TOP = os.path.dirname(os.path.dirname(os.path.dirname(
    os.path.abspath(__file__))))
API_PASTE = os.path.join(TOP, 'etc', 'cinder', 'api-paste.ini')
EXTENSION = 'cinder_ext.extension.Reservation'
# What cinder-api answers to the noauth token of this user and project.
ADMIN_TOKEN = 'admin:admin'
DRIVER = '%s.%s' % (volume_driver.__name__,
                    volume_driver.SparseFileVolumeDriver.__name__)
CHUNK = 65536
VERSION = {'OpenStack-API-Version': 'volume 3.70'}
HOUR = datetime.timedelta(hours=1)


class ImageStore:
    """Glance as Cinder's image service sees it.

    Created images are ``queued`` and become ``active`` with the data they
    are given, which is read in chunks, counted and dropped.
    """

    def __init__(self):
        self.images = {}
        self._lock = threading.Lock()

    def create(self, context, metadata, data=None):
        image = dict(copy.deepcopy(metadata), id=str(uuid.uuid4()),
                     status='queued', size=None)
        with self._lock:
            self.images[image['id']] = image
        return copy.deepcopy(image)

    def update(self, context, image_id, metadata, data=None, **kwargs):
        image = self.images[image_id]
        image.update(metadata)
        if data is not None:
            image['size'] = sum(len(chunk) for chunk in
                                iter(lambda: data.read(CHUNK), b''))
            image['status'] = 'active'
        return copy.deepcopy(image)

    def show(self, context, image_id):
        try:
            return copy.deepcopy(self.images[image_id])
        except KeyError:
            raise cinder_exc.ImageNotFound(image_id=image_id)

    def delete(self, context, image_id):
        self.images.pop(image_id, None)


class CinderTestCase(functional_helpers._FunctionalTestBase):
    """Cinder with the reservation extension and a leases DB."""

    # Microversion 3.0 answers on /v3/{project_id}/...; the clients use
    # the latest, so do we.
    _osapi_version = '3.70'

    def setUp(self):
        self.database = self.useFixture(fixtures.Database())
        self.images = ImageStore()
        super().setUp()
        self.mock_object(glance, 'get_remote_image_service',
                         lambda context, image_href: (self.images,
                                                      image_href))
        self.mock_object(glance, 'get_default_image_service',
                         lambda: self.images)
        # Cinder's harness replaces oslo.messaging's Notifier by a fake
        # that predates Notifier.is_enabled(), which the lease service's
        # notifications ask.
        self.useFixture(lib_fixtures.MockPatchObject(
            fake_notifier.FakeNotifier, 'is_enabled', lambda self: True,
            create=True))
        self.override_config('auth_type', 'admin_token',
                             conf_mod.CLIENT_GROUP)
        self.override_config('connect_retries', 0, conf_mod.CLIENT_GROUP)
        cfg.CONF.register_opts(
            ks_loading.get_auth_plugin_conf_options('admin_token'),
            group=conf_mod.CLIENT_GROUP)
        self.override_config('token', ADMIN_TOKEN, conf_mod.CLIENT_GROUP)
        self.override_config('endpoint', self.auth_url,
                             conf_mod.CLIENT_GROUP)

    def _get_flags(self):
        flags = super()._get_flags()
        flags['osapi_volume_extension'] = {'v': [
            'cinder.api.contrib.standard_extensions', EXTENSION]}
        flags['volume_driver'] = {'v': DRIVER, 'g': 'backend_defaults'}
        flags['state_path'] = {'v': self.useFixture(
            lib_fixtures.TempDir()).path}
        return flags

    def _start_api_service(self):
        # As the harness does, but with our api-paste.ini: the harness
        # looks for Cinder's where the wheel does not install it.
        wsgi.register_opts(cfg.CONF)
        self.override_config('api_paste_config', API_PASTE)
        self.osapi = service.WSGIService('osapi_volume')
        self.osapi.start()
        self.auth_url = 'http://%s:%s/v3' % (self.osapi.host,
                                             self.osapi.port)


class KeystoneCinderTestCase(CinderTestCase):
    """Cinder on its ``keystone`` pipeline, with the defaults of a new cloud.

    The real keystonemiddleware, whose test fixture stands in for
    Keystone's token validation: each persona of
    :data:`tests.authz.table.PERSONAS` has a token with its project and
    roles (:meth:`request` sends it); the engine's service user has the
    admin's. No policy file, ``enforce_new_defaults``: Cinder's harness
    has a policy file that overrides ``admin_or_owner``, which the rules
    of reservation-ext would take (see :mod:`reservation_ext.policy`).
    """

    def _get_flags(self):
        flags = super()._get_flags()
        flags['auth_strategy'] = {'v': 'keystone'}
        flags['www_authenticate_uri'] = {
            'v': 'http://keystone.invalid/identity',
            'g': 'keystone_authtoken'}
        return flags

    def setUp(self):
        tokens = self.useFixture(ksm_fixture.AuthTokenFixture())
        for persona in table.PERSONAS:
            if persona.project is not None:
                tokens.add_token_data(
                    token_id=self.token(persona), user_id=persona.user,
                    project_id=persona.project,
                    role_list=list(persona.roles))
        tokens.add_token_data(
            token_id=ADMIN_TOKEN, user_id='admin', project_id='admin',
            role_list=['admin', 'member', 'reader'])
        super().setUp()
        self.override_config('policy_file', self.useFixture(
            lib_fixtures.TempDir()).join('policy.yaml'), 'oslo_policy')
        self.override_config('enforce_new_defaults', True, 'oslo_policy')
        cinder_policy.reset()
        policy.reset()
        self.addCleanup(policy.reset)

    @staticmethod
    def token(persona):
        """The token of ``persona``."""
        return 'token-%s' % persona.name

    def request(self, persona, method, path, body=None):
        """Call cinder-api (microversion 3.70) as ``persona``."""
        headers = dict(VERSION)
        if persona.project is not None:
            headers['X-Auth-Token'] = self.token(persona)
        return requests.request(method, self.auth_url + path,
                                json=body, headers=headers)


class ReservedVolumeTestCase(KeystoneCinderTestCase):
    """Reserved volumes, leased from in an hour for an hour (100 GB)."""

    def setUp(self):
        super().setUp()
        self.override_config('volume_reservable_gb', 100, 'reservation')
        now = clock_mod.SYSTEM.now().replace(second=0, microsecond=0)
        self.start = now + HOUR
        self.end = now + 2 * HOUR

    def reserved_volume(self, name, metadata):
        """The create request of a 1 GB volume reserved in the window."""
        return {'volume': {'size': 1, 'name': name, 'metadata': metadata},
                'OS-SCH-HNT:scheduler_hints': {
                    'reserved': 'True', 'lease_params': json.dumps({
                        'start': dates.format_date(self.start),
                        'end': dates.format_date(self.end)})}}

    def lease_of(self, volume):
        """The id of ``volume``'s lease, from the leases DB."""
        requests = models.VolumeReservation.__table__
        reservations = models.Reservation.__table__
        with self.database.engine.connect() as conn:
            return conn.execute(sa.select(reservations.c.lease_id).join(
                requests, requests.c.reservation_id ==
                reservations.c.id).where(
                requests.c.volume_id == volume['id'])).scalar_one()
