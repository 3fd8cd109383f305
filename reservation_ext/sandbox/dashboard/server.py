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

"""The dashboard child: Horizon's WSGI application on the sandbox's port.

    python -m reservation_ext.sandbox.dashboard --state-dir DIR \
        --listen dashboard=FD --ready-fd FD

Builds the static files into the cache unless they are there (under a
file lock, so that sandboxes starting together build them once, and
marked complete only at the end, so that an interrupted build is redone),
then serves Horizon with :mod:`reservation_ext.sandbox.wsgi_server`, and
the static files beside it (Horizon leaves them to the web server).
"""

import fcntl
import mimetypes
import os
import shutil
import sys
from wsgiref import util as wsgi_util

import django
from django.conf import settings as django_settings
from django.core import management
from django.core import wsgi

from reservation_ext.sandbox import config
from reservation_ext.sandbox.dashboard import settings
from reservation_ext.sandbox import process
from reservation_ext.sandbox import wsgi_server

# In the static root once its build has finished.
BUILT_MARK = '.built'


def build_static(static_root):
    """Collect and compress the static files, unless already built.

    Django must be set up.
    """
    os.makedirs(os.path.dirname(static_root), exist_ok=True)
    with open(static_root + '.lock', 'w') as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        mark = os.path.join(static_root, BUILT_MARK)
        if os.path.exists(mark):
            return
        shutil.rmtree(static_root, ignore_errors=True)
        management.call_command('collectstatic', interactive=False,
                                verbosity=0)
        management.call_command('compress', force=True, verbosity=0)
        with open(mark, 'w'):
            pass


class StaticFiles:
    """WSGI: the files under ``root`` at ``prefix``, the rest to ``app``."""

    def __init__(self, app, prefix, root):
        self.app = app
        self.prefix = prefix
        self.root = os.path.realpath(root)

    def __call__(self, environ, start_response):
        path = environ.get('PATH_INFO', '')
        if not path.startswith(self.prefix):
            return self.app(environ, start_response)
        full = os.path.realpath(os.path.join(self.root,
                                             path[len(self.prefix):]))
        if not (full.startswith(self.root + os.sep) and
                os.path.isfile(full)):
            start_response('404 Not Found',
                           [('Content-Type', 'text/plain')])
            return [b'Not Found']
        content_type = (mimetypes.guess_type(full)[0] or
                        'application/octet-stream')
        start_response('200 OK', [
            ('Content-Type', content_type),
            ('Content-Length', str(os.path.getsize(full)))])
        return wsgi_util.FileWrapper(open(full, 'rb'))


def application(static_root):
    """Horizon's WSGI application with the static files."""
    return StaticFiles(wsgi.get_wsgi_application(),
                       django_settings.STATIC_URL, static_root)


def main(argv=None):
    args = process.parse_args(argv, 'The dashboard of reservation-sandbox.')
    layout = config.Layout.load(args.state_dir)
    stop = process.stop_event()
    sys.path.insert(0, settings.directory(layout))
    os.environ['DJANGO_SETTINGS_MODULE'] = 'openstack_dashboard.settings'
    django.setup()
    static_root = django_settings.STATIC_ROOT
    build_static(static_root)
    server = wsgi_server.Server(config.DASHBOARD, application(static_root),
                                args.listen[config.DASHBOARD])
    server.start()
    process.signal_ready(args.ready_fd)
    stop.wait()
    server.stop()
