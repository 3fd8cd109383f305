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

"""ExternalServiceFilter against a real HTTP service (Blazar's protocol)."""

import datetime
import ipaddress
import json
import os
import socket

from cryptography.hazmat.primitives.asymmetric import ec
from cryptography.hazmat.primitives import hashes
from cryptography.hazmat.primitives import serialization
from cryptography import x509
from cryptography.x509 import oid
import fixtures
from oslo_config import cfg

from reservation_ext import clock as clock_mod
from reservation_ext import conf as conf_mod
from reservation_ext.enforcement import filters
from reservation_ext.enforcement.filters import external_service
from reservation_ext import exceptions
from tests import base
from tests import enforcement_service

CONTEXT = {'user_id': 'u1', 'project_id': 'p1',
           'auth_url': 'http://keystone/v3', 'region_name': 'RegionOne'}
LEASE = {'name': 'lease1', 'start_date': datetime.datetime(2027, 1, 10),
         'end_date': datetime.datetime(2027, 1, 11), 'reservations': []}


def free_port_url():
    """A URL on which nothing listens."""
    with socket.socket() as sock:
        sock.bind(('127.0.0.1', 0))
        return 'http://127.0.0.1:%d/' % sock.getsockname()[1]


class ServiceTestCase(base.TestCase):
    """A test with an enforcement service and options that point at it."""

    def serve(self, **kwargs):
        """Start the enforcement service; ``[enforcement]`` points at it."""
        self.service = self.useFixture(
            enforcement_service.EnforcementService(**kwargs))
        self.conf = cfg.ConfigOpts()
        conf_mod.register_opts(self.conf)
        self.conf([])
        self.override(external_service_base_endpoint=self.service.url)

    def override(self, **values):
        """Set ``[enforcement]`` options of the test's configuration."""
        for name, value in values.items():
            self.conf.set_override(name, value, group='enforcement')


class ExternalServiceFilterTest(ServiceTestCase):

    def setUp(self):
        super().setUp()
        self.serve()

    def make(self):
        return filters.load(self.conf, clock_mod.SYSTEM,
                            ['ExternalServiceFilter'])[0]

    def test_a_create_is_posted_to_check_create_with_blazars_body(self):
        self.make().check_create(CONTEXT, LEASE)
        [call] = self.service.calls
        self.assertEqual('/v1/check-create', call['path'])
        self.assertEqual('application/json', call['headers']['Content-Type'])
        self.assertNotIn('X-Auth-Token', call['headers'])
        self.assertEqual({'context': CONTEXT, 'lease': dict(
            LEASE, start_date='2027-01-10T00:00:00',
            end_date='2027-01-11T00:00:00')}, call['body'])

    def test_an_update_sends_the_current_lease_and_the_new_one(self):
        new = dict(LEASE, end_date=datetime.datetime(2027, 1, 12))
        self.make().check_update(CONTEXT, LEASE, new)
        [call] = self.service.calls
        self.assertEqual('/v1/check-update', call['path'])
        self.assertEqual(['context', 'current_lease', 'lease'],
                         sorted(call['body']))
        self.assertEqual('2027-01-11T00:00:00',
                         call['body']['current_lease']['end_date'])
        self.assertEqual('2027-01-12T00:00:00',
                         call['body']['lease']['end_date'])

    def test_the_end_is_posted_to_on_end(self):
        self.make().on_end(CONTEXT, LEASE)
        self.assertEqual(['/v1/on-end'], self.service.paths())

    def test_a_403_refuses_with_the_services_message(self):
        self.service.refuse_names['lease1'] = 'Not enough SUs left.'
        exc = self.assertRaises(exceptions.EnforcementRefused,
                                self.make().check_create, CONTEXT, LEASE)
        self.assertEqual((403, 'Not enough SUs left.'),
                         (exc.code, exc.message))

    def test_a_403_without_a_message_refuses_with_the_generic_one(self):
        self.service.raw_answers['lease1'] = (403, b'<html>no</html>')
        exc = self.assertRaises(exceptions.EnforcementRefused,
                                self.make().check_create, CONTEXT, LEASE)
        self.assertEqual(external_service.GENERIC_REFUSAL, exc.message)

    def test_another_status_refuses_without_showing_the_answer(self):
        self.service.raw_answers['lease1'] = (
            500, json.dumps({'message': 'secret detail'}).encode())
        exc = self.assertRaises(exceptions.EnforcementRefused,
                                self.make().check_create, CONTEXT, LEASE)
        self.assertEqual(external_service.GENERIC_REFUSAL, exc.message)

    def test_a_service_that_does_not_answer_makes_the_check_fail_503(self):
        self.override(external_service_base_endpoint=free_port_url())
        exc = self.assertRaises(exceptions.EnforcementUnavailable,
                                self.make().check_create, CONTEXT, LEASE)
        self.assertEqual(503, exc.code)

    def test_the_static_token_is_sent_as_x_auth_token(self):
        self.override(external_service_token='s3cret')
        self.make().check_create(CONTEXT, LEASE)
        self.assertEqual('s3cret',
                         self.service.calls[0]['headers']['X-Auth-Token'])

    def test_an_endpoint_option_replaces_its_url_only(self):
        self.override(external_service_check_create_endpoint=(
            self.service.url + 'custom/create'))
        service_filter = self.make()
        service_filter.check_create(CONTEXT, LEASE)
        service_filter.on_end(CONTEXT, LEASE)
        self.assertEqual(['/v1/custom/create', '/v1/on-end'],
                         self.service.paths())

    def test_without_a_base_only_the_hooks_with_a_url_are_called(self):
        self.override(external_service_base_endpoint=None,
                      external_service_on_end_endpoint=(
                          self.service.url + 'ended'))
        service_filter = self.make()
        service_filter.check_create(CONTEXT, LEASE)
        service_filter.check_update(CONTEXT, LEASE, LEASE)
        service_filter.on_end(CONTEXT, LEASE)
        self.assertEqual(['/v1/ended'], self.service.paths())

    def test_the_base_is_joined_as_blazar_joins_it(self):
        # urljoin: without the final "/" the last segment is replaced.
        self.override(external_service_base_endpoint=(
            self.service.url.rstrip('/')))
        self.make().check_create(CONTEXT, LEASE)
        self.assertEqual(['/check-create'], self.service.paths())


def self_signed(directory, name, ip=None):
    """``(certfile, keyfile)``: a new self-signed certificate for ``name``.

    ``ip`` is the address it is valid for as a server.
    """
    key = ec.generate_private_key(ec.SECP256R1())
    subject = x509.Name([x509.NameAttribute(oid.NameOID.COMMON_NAME, name)])
    now = datetime.datetime.now(datetime.timezone.utc)
    builder = x509.CertificateBuilder().subject_name(subject).issuer_name(
        subject).public_key(key.public_key()).serial_number(
        x509.random_serial_number()).not_valid_before(
        now - datetime.timedelta(minutes=5)).not_valid_after(
        now + datetime.timedelta(days=1)).add_extension(
        x509.BasicConstraints(ca=True, path_length=None), critical=True)
    if ip:
        builder = builder.add_extension(x509.SubjectAlternativeName(
            [x509.IPAddress(ipaddress.ip_address(ip))]), critical=False)
    certfile = os.path.join(directory, name + '.crt')
    keyfile = os.path.join(directory, name + '.key')
    with open(certfile, 'wb') as out:
        out.write(builder.sign(key, hashes.SHA256()).public_bytes(
            serialization.Encoding.PEM))
    with open(keyfile, 'wb') as out:
        out.write(key.private_bytes(
            serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8,
            serialization.NoEncryption()))
    return certfile, keyfile


class ExternalServiceTLSTest(ServiceTestCase):
    """The [enforcement] TLS options reach the calls to an https service.

    The service's certificate and the client's are self-signed, each its
    own CA; the service accepts only the client's.
    """

    def setUp(self):
        super().setUp()
        directory = self.useFixture(fixtures.TempDir()).path
        self.server_cert = self_signed(directory, 'service', '127.0.0.1')
        self.client_cert = self_signed(directory, 'reservation')
        self.serve(tls=self.server_cert + (self.client_cert[0],))

    def check(self):
        filters.load(self.conf, clock_mod.SYSTEM, ['ExternalServiceFilter'])[
            0].check_create(CONTEXT, LEASE)

    def test_the_ca_file_verifies_the_service_and_the_client_is_shown(self):
        self.override(external_service_cafile=self.server_cert[0],
                      external_service_certfile=self.client_cert[0],
                      external_service_keyfile=self.client_cert[1])
        self.check()
        self.assertEqual(['/v1/check-create'], self.service.paths())
        self.assertEqual([{'commonName': 'reservation'}],
                         self.service.client_certificates)

    def test_a_service_the_ca_file_does_not_verify_is_not_called(self):
        self.override(external_service_certfile=self.client_cert[0],
                      external_service_keyfile=self.client_cert[1])
        exc = self.assertRaises(exceptions.EnforcementUnavailable,
                                self.check)
        self.assertEqual(503, exc.code)
        self.assertEqual([], self.service.calls)

    def test_insecure_skips_the_verification_of_the_service(self):
        self.override(external_service_insecure=True,
                      external_service_certfile=self.client_cert[0],
                      external_service_keyfile=self.client_cert[1])
        self.check()
        self.assertEqual(['/v1/check-create'], self.service.paths())

    def test_without_the_client_certificate_the_service_refuses_tls(self):
        self.override(external_service_cafile=self.server_cert[0])
        self.assertRaises(exceptions.EnforcementUnavailable, self.check)
        self.assertEqual([], self.service.calls)

    def test_the_options_make_the_sessions_verify_and_cert(self):
        self.override(external_service_cafile='/etc/ca.pem',
                      external_service_certfile='/etc/c.pem',
                      external_service_keyfile='/etc/k.pem',
                      external_service_timeout=2.5)
        session = external_service.session_from(self.conf.enforcement)
        self.assertEqual(('/etc/ca.pem', ('/etc/c.pem', '/etc/k.pem'), 2.5),
                         (session.verify, session.cert, session.timeout))
        self.override(external_service_insecure=True,
                      external_service_keyfile=None)
        session = external_service.session_from(self.conf.enforcement)
        self.assertEqual((False, '/etc/c.pem'),
                         (session.verify, session.cert))
