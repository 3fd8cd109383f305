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

"""An HTTP proxy in front of a sandbox's APIs, for one client: the engine.

The engine finds its endpoints in the catalog of the token its service
user gets (``[reservation_client]``). Pointed at ``<proxy>/keystone/v3``
instead of Keystone (``[reservation_client] auth_url``, in a config file
of the engine only), it gets its token through the proxy, which rewrites
every backend URL in the bodies it passes on (Keystone's version
document and catalog included) into ``<proxy>/<service>``: every call the
engine makes then goes through the proxy, and nobody else's does.

The proxy records each call (:class:`Call`: when its answer went back,
service, method, path, status, the action a POST names) and can inject
faults per service (:class:`Faults`): a delay before every call, and a
share of calls failing with 503, half of them before they reach the
service, half after it carried them out (the answer is lost). With
``stuck_image_prefix``, the image API shows every image whose name
starts with it as ``queued``, whatever its real status: a snapshot that
never becomes active.
"""

import collections
import datetime
import http.client
import http.server
import json
import random
import threading
import time
import urllib.parse

HOST = '127.0.0.1'
# Hop-by-hop headers, and those the proxy sets itself.
DROPPED_HEADERS = {'connection', 'keep-alive', 'transfer-encoding',
                   'content-length', 'accept-encoding', 'host'}
BACKEND_TIMEOUT = 300

Faults = collections.namedtuple('Faults', 'delay failure_rate')
Faults.__doc__ = """Seconds of delay before each call; share of calls failing.
"""

Call = collections.namedtuple(
    'Call', 'at service method path status action body answer injected took',
    defaults=(None,))
Call.__doc__ = """One call through the proxy.

``at``: naive UTC time its answer came from the service; ``action``:
the first key of a POST's JSON body (``add_host``,
``os-reservation-start``...), or None;
``body`` and ``answer``: a POST's JSON body and the service's JSON
answer to it, or None; ``status``: what the service answered, or 503 if
the call never reached it; ``injected``: the engine got the proxy's 503
instead; ``took``: seconds the service took to answer (None if not
reached).
"""


def _utcnow():
    """Naive UTC now, as the services' databases keep time."""
    return datetime.datetime.now(datetime.timezone.utc).replace(tzinfo=None)


def _json(data):
    """The JSON document in ``data``, or None."""
    try:
        return json.loads(data) if data else None
    except ValueError:
        return None


class FaultProxy:
    """The proxy, serving on a port of its own in a thread.

    :param backends: ``{service name: base URL}``, e.g. the sandbox's
        ``{'keystone': 'http://127.0.0.1:5000', ...}``.
    """

    def __init__(self, backends, faults=None, stuck_image_prefix=None,
                 seed=0, port=0):
        """Start serving at once (see the class doc); port 0: a free one."""
        self.backends = dict(backends)
        self.faults = dict(faults or {})
        self.stuck_image_prefix = stuck_image_prefix
        self.calls = []
        self._random = random.Random(seed)
        self._lock = threading.Lock()
        self._server = http.server.ThreadingHTTPServer(
            (HOST, port), _handler_class(self))
        self._server.daemon_threads = True
        self.url = 'http://%s:%d' % (HOST, self._server.server_address[1])
        self._thread = threading.Thread(target=self._server.serve_forever,
                                        daemon=True)
        self._thread.start()

    def service_url(self, service):
        """The proxy's URL standing for ``service``'s base URL."""
        return '%s/%s' % (self.url, service)

    def stop(self):
        """Stop serving."""
        self._server.shutdown()
        self._server.server_close()

    def calls_since(self, moment):
        """The calls answered at or after ``moment`` (naive UTC)."""
        with self._lock:
            return [call for call in self.calls if call.at >= moment]

    def fault_of(self, service):
        """``(delay, fail before, fail after)`` drawn for one call."""
        faults = self.faults.get(service)
        if faults is None:
            return 0, False, False
        with self._lock:
            failing = self._random.random() < faults.failure_rate
            before = self._random.random() < 0.5
        return faults.delay, failing and before, failing and not before

    def record(self, call):
        """Keep one call's record."""
        with self._lock:
            self.calls.append(call)

    def rewrite(self, service, path, data):
        """A backend's answer as the engine must see it."""
        if (self.stuck_image_prefix and service == 'image' and
                path.startswith('/v2/images')):
            data = self._stuck(data)
        for name, base in self.backends.items():
            data = data.replace(base.encode(),
                                self.service_url(name).encode())
        return data

    def _stuck(self, data):
        """An image API answer with the stuck images ``queued``."""
        document = _json(data)
        if not isinstance(document, dict):
            return data
        for image in document.get('images', [document]):
            if str(image.get('name', '')).startswith(
                    self.stuck_image_prefix):
                image['status'] = 'queued'
        return json.dumps(document).encode()


def _handler_class(proxy):
    """The request handler class of ``proxy``'s server."""

    class Handler(_Handler):
        """Handles requests for this proxy."""

    Handler.proxy = proxy
    return Handler


class _Handler(http.server.BaseHTTPRequestHandler):
    """Forwards one request to its backend, with the service's faults."""

    protocol_version = 'HTTP/1.1'
    proxy = None

    def log_message(self, format, *args):
        """Log nothing: the calls are recorded instead."""

    def do_GET(self):
        """Forward a GET."""
        self._forward()

    do_POST = do_PUT = do_DELETE = do_PATCH = do_HEAD = do_GET

    def _forward(self):
        """Forward the request, faults included; record the call."""
        service, _, rest = self.path.lstrip('/').partition('/')
        base = self.proxy.backends.get(service)
        length = int(self.headers.get('Content-Length') or 0)
        body = self.rfile.read(length) if length else None
        if base is None:
            return self._reply(404, {}, b'')
        delay, fail_before, fail_after = self.proxy.fault_of(service)
        time.sleep(delay)
        path = '/' + rest
        status, headers, data, took = 503, {}, b'', None
        if not fail_before:
            sent = time.monotonic()
            status, headers, data = self._send(base, path, body)
            took = time.monotonic() - sent
        carried_out, answer = status, data
        if fail_before or fail_after:
            status, headers, data = 503, {}, b''
        posted = self.command == 'POST'
        document = _json(body) if posted else None
        action = (next(iter(document), None)
                  if isinstance(document, dict) else None)
        # What the service did, even when its answer was lost: an action
        # carried out was issued, and a create repeated is a double.
        # Recorded before the answer goes back, so that a client that
        # has its answer finds the call recorded.
        self.proxy.record(Call(_utcnow(), service, self.command,
                               path.split('?')[0], carried_out, action,
                               document, _json(answer) if posted else None,
                               fail_before or fail_after, took))
        data = self.proxy.rewrite(service, path, data)
        try:
            self._reply(status, headers, data)
        except ConnectionError:
            # The engine went away (stopped at the end of a case); the
            # call still happened.
            pass

    def _send(self, base, path, body):
        """``(status, headers, body)`` of the backend's answer."""
        target = urllib.parse.urlsplit(base)
        headers = {key: value for key, value in self.headers.items()
                   if key.lower() not in DROPPED_HEADERS}
        conn = http.client.HTTPConnection(target.hostname, target.port,
                                          timeout=BACKEND_TIMEOUT)
        try:
            conn.request(self.command, target.path + path, body=body,
                         headers=headers)
            response = conn.getresponse()
            data = response.read()
            return response.status, dict(response.getheaders()), data
        finally:
            conn.close()

    def _reply(self, status, headers, data):
        """Send an answer, with the backend URLs in headers rewritten."""
        self.send_response(status)
        for key, value in headers.items():
            if key.lower() in DROPPED_HEADERS:
                continue
            if key.lower() == 'location':
                value = self.proxy.rewrite('', '', value.encode()).decode()
            self.send_header(key, value)
        self.send_header('Content-Length', str(len(data)))
        self.end_headers()
        if self.command != 'HEAD':
            self.wfile.write(data)
