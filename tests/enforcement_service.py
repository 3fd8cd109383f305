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

"""A small enforcement service speaking Blazar's protocol, for tests.

It serves ``POST /v1/check-create``, ``/v1/check-update`` and
``/v1/on-end`` on 127.0.0.1 from a thread, records every call (path,
headers, JSON body) and answers by a rule the test sets::

    service = self.useFixture(EnforcementService())
    service.refuse_names['big'] = 'Too big for your allocation.'
    conf.set_override('external_service_base_endpoint', service.url, ...)

A lease whose ``name`` is in ``refuse_names`` gets 403 with
``{"message": ...}``; one in ``raw_answers`` gets that ``(status,
body)`` as is; any other 204.

With ``tls=(certfile, keyfile, client_cafile)`` it serves https with
that certificate (``url`` then starts with ``https``) and, when
``client_cafile`` is given, accepts only clients whose certificate that
file verifies; ``client_certificates`` has the subject of each.
"""

import http.server
import json
import ssl
import threading

import fixtures


class _Handler(http.server.BaseHTTPRequestHandler):

    def do_POST(self):
        body = json.loads(self.rfile.read(
            int(self.headers['Content-Length'])))
        service = self.server.service
        peer = self.connection.getpeercert() if isinstance(
            self.connection, ssl.SSLSocket) else None
        if peer:
            service.client_certificates.append(dict(
                item for field in peer['subject'] for item in field))
        service.calls.append({'path': self.path,
                              'headers': dict(self.headers),
                              'body': body})
        status, answer = service.answer(body['lease'].get('name'))
        self.send_response(status)
        self.send_header('Content-Length', str(len(answer)))
        if answer:
            self.send_header('Content-Type', 'application/json')
        self.end_headers()
        self.wfile.write(answer)

    def log_message(self, *args):
        pass


class EnforcementService(fixtures.Fixture):
    """The service, running until the test's cleanup (see the module)."""

    def __init__(self, tls=None):
        super().__init__()
        self.tls = tls

    def _setUp(self):
        self.calls = []
        self.client_certificates = []
        self.refuse_names = {}
        self.raw_answers = {}
        server = http.server.ThreadingHTTPServer(('127.0.0.1', 0), _Handler)
        server.service = self
        scheme = 'http'
        if self.tls:
            server.socket = _tls_context(*self.tls).wrap_socket(
                server.socket, server_side=True)
            scheme = 'https'
        thread = threading.Thread(target=server.serve_forever, daemon=True)
        thread.start()
        self.addCleanup(thread.join)
        self.addCleanup(server.server_close)
        self.addCleanup(server.shutdown)
        self.url = '%s://127.0.0.1:%d/v1/' % (
            scheme, server.server_address[1])

    def answer(self, name):
        """``(status, body bytes)`` for a lease called ``name``."""
        if name in self.raw_answers:
            return self.raw_answers[name]
        if name in self.refuse_names:
            return 403, json.dumps(
                {'message': self.refuse_names[name]}).encode()
        return 204, b''

    def paths(self):
        return [call['path'] for call in self.calls]


def _tls_context(certfile, keyfile, client_cafile):
    """The server's TLS context (see the module doc)."""
    context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    context.load_cert_chain(certfile, keyfile)
    if client_cafile:
        context.verify_mode = ssl.CERT_REQUIRED
        context.load_verify_locations(client_cafile)
    return context
