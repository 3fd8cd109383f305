"""A base for tests that run inside Cinder's own functional harness.

Real Cinder: the API on a real port (the project's
``etc/cinder/api-paste.ini``, noauth as in Cinder's harness, with the
reservation extension loaded beside the standard ones), the scheduler and
a volume service with Cinder's fake driver, over the fake RPC transport.
The leases DB is an SQLite file. The service user of
``[reservation_client]`` reaches this cinder-api with a noauth token
(keystoneauth1's ``admin_token`` plugin), so the real
:class:`reservation_ext.cinder.CinderClient` is what the plugin uses.

Cinder monkey patches the process with eventlet, and its global
configuration clashes with Nova's: these tests run in a child process of
their own (see :mod:`tests.functional.test_cinder_extension`).
"""

import os

from cinder import service
from cinder.tests.functional import functional_helpers
from cinder.tests.unit import fake_notifier
import fixtures as lib_fixtures
from keystoneauth1 import loading as ks_loading
from oslo_config import cfg
from oslo_service import wsgi

from reservation_ext import conf as conf_mod
from tests import fixtures

TOP = os.path.dirname(os.path.dirname(os.path.dirname(
    os.path.abspath(__file__))))
API_PASTE = os.path.join(TOP, 'etc', 'cinder', 'api-paste.ini')
EXTENSION = 'cinder_ext.extension.Reservation'
# What cinder-api answers to the noauth token of this user and project.
ADMIN_TOKEN = 'admin:admin'


class CinderTestCase(functional_helpers._FunctionalTestBase):
    """Cinder with the reservation extension and a leases DB."""

    # Microversion 3.0 answers on /v3/{project_id}/...; the clients use
    # the latest, so do we.
    _osapi_version = '3.70'

    def setUp(self):
        self.database = self.useFixture(fixtures.Database())
        super().setUp()
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
