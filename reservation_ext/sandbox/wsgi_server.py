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

"""A small threaded WSGI server for the sandbox's APIs.

The sandbox runs Keystone, nova-api, Placement and the image API as WSGI
applications in its child processes. The standard library's ``wsgiref``
with one thread per request is enough for a developer cloud and adds no
dependency. The listening socket is made by the supervisor
(:mod:`reservation_ext.sandbox.main`) and inherited, so that the ports are
known, and taken, before any child starts.
"""

import socket
import socketserver
import threading
from wsgiref import simple_server

from oslo_log import log as logging

LOG = logging.getLogger(__name__)


class _Handler(simple_server.WSGIRequestHandler):

    def log_message(self, format, *args):
        # wsgiref writes every request to stderr; the apps log their own
        # requests (request_log middleware), so keep this at debug.
        LOG.debug('%s %s', self.address_string(), format % args)


class _Server(simple_server.WSGIServer):
    """wsgiref's server on a socket that is already bound and listening."""

    def __init__(self, sock):
        super().__init__(sock.getsockname(), _Handler,
                         bind_and_activate=False)
        self.socket.close()
        self.socket = sock
        self.server_bind()

    def server_bind(self):
        # Instead of binding: what HTTPServer.server_bind records, without
        # its reverse DNS lookup of the address.
        self.server_name, self.server_port = self.server_address[:2]
        self.setup_environ()


class _ThreadingServer(socketserver.ThreadingMixIn, _Server):
    """One thread per request."""

    # Request threads must not keep a stopping process alive.
    daemon_threads = True


class Server:
    """Serve ``app`` on the inherited listening socket ``fd`` in a thread.

    With ``threaded`` (the default), each request has its own thread;
    otherwise requests are served one after the other.
    """

    def __init__(self, name, app, fd, threaded=True):
        self.name = name
        server_class = _ThreadingServer if threaded else _Server
        self._httpd = server_class(socket.socket(fileno=fd))
        self._httpd.set_app(app)
        self._thread = threading.Thread(target=self._httpd.serve_forever,
                                        name='wsgi-' + name, daemon=True)

    def start(self):
        self._thread.start()
        LOG.info('%s listening on http://%s:%d', self.name,
                 *self._httpd.server_address[:2])

    def stop(self):
        """Stop accepting requests and close the socket."""
        self._httpd.shutdown()
        self._httpd.server_close()
