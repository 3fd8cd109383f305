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

"""Horizon's settings for the sandbox, in ``DIR/dashboard/`` (see the package).

The settings that shape the static files (:data:`STATIC_SETTINGS`) are
the same for every sandbox, so that the static files built for one serve
all; the others (Keystone's URL, the secret key, the cache) are the
sandbox's own. Beside blazar-dashboard's enabled files, ``enabled/`` gets
the project's own (the reservation calendars, :mod:`reservation_ext.
horizon`), whose static files join the build and its key.
"""

import hashlib
import importlib.metadata
import importlib.util
import os
import secrets
import shutil

from reservation_ext.sandbox import config

# Horizon's settings that the compressed static files depend on; Horizon's
# second theme (material) would double the time of the offline build.
STATIC_SETTINGS = '''\
WEBROOT = '/'
STATIC_URL = '/static/'
COMPRESS_ENABLED = True
COMPRESS_OFFLINE = True
AVAILABLE_THEMES = [('default', 'Default', 'themes/default')]
DEFAULT_THEME = 'default'
'''
# The distributions whose files the static build collects or runs.
STATIC_DISTRIBUTIONS = ('horizon', 'blazar-dashboard', 'django',
                        'django-compressor', 'libsass')
ENABLED_PACKAGE = 'blazar_dashboard.enabled'
# The project's own panels (the reservation calendars), enabled beside
# blazar-dashboard's; their static files are in the build, so a change
# to them (or to the enabled files that list them) must change its key.
CALENDAR_ENABLED_PACKAGE = 'reservation_ext.calendars.enabled'
CALENDAR_STATIC_PACKAGE = 'reservation_ext.calendars'
CALENDAR_STATIC_DIRS = ('static', 'enabled')
MISSING = ('--dashboard needs Horizon and blazar-dashboard: pip install '
           "'reservation-ext[dashboard]'")


def directory(layout):
    """``DIR/dashboard``: first on the dashboard child's ``sys.path``."""
    return layout.path('dashboard')


def check_installed():
    """:raises SystemExit: Horizon or blazar-dashboard is not installed."""
    for module in ('openstack_dashboard', 'blazar_dashboard'):
        if importlib.util.find_spec(module) is None:
            raise SystemExit(MISSING)


def static_root():
    """Where the static files of the installed packages are built."""
    cache = os.environ.get('XDG_CACHE_HOME') or os.path.join(
        os.path.expanduser('~'), '.cache')
    return os.path.join(cache, 'reservation-sandbox', 'dashboard-static',
                        _static_key())


def _static_key():
    """The static build's cache key: what the build depends on, hashed."""
    versions = sorted(
        '%s==%s' % (dist.metadata['Name'].lower(), dist.version)
        for dist in importlib.metadata.distributions()
        if dist.metadata['Name'].lower() in STATIC_DISTRIBUTIONS or
        dist.metadata['Name'].lower().startswith('xstatic'))
    digest = hashlib.sha256('\n'.join(versions + [STATIC_SETTINGS]).encode())
    _hash_calendar_files(digest)
    return digest.hexdigest()[:16]


def _hash_calendar_files(digest):
    """Add the calendar panels' static and enabled files to ``digest``.

    They are this checkout's files, not an installed distribution's
    version, so their content counts: a changed script is rebuilt.
    """
    top = os.path.dirname(
        importlib.util.find_spec(CALENDAR_STATIC_PACKAGE).origin)
    for folder in CALENDAR_STATIC_DIRS:
        for dirpath, dirnames, filenames in os.walk(os.path.join(top,
                                                                 folder)):
            dirnames[:] = sorted(d for d in dirnames if d != '__pycache__')
            for name in sorted(filenames):
                path = os.path.join(dirpath, name)
                digest.update(os.path.relpath(path, top).encode() + b'\0')
                with open(path, 'rb') as f:
                    digest.update(f.read())


def write(layout):
    """Write ``DIR/dashboard/``: local settings and the enabled files."""
    top = directory(layout)
    local = os.path.join(top, 'local')
    enabled = os.path.join(top, 'enabled')
    os.makedirs(local)
    _copy_enabled_files(enabled)
    with open(os.path.join(local, '__init__.py'), 'w'):
        pass
    config.write_file(os.path.join(local, 'local_settings.py'),
                      local_settings(layout, enabled))


def _copy_enabled_files(target):
    """Copy the panels' enabled files into ``target``."""
    # What blazar-dashboard's install guide says to copy into Horizon's
    # openstack_dashboard/local/enabled/, and what ours says (the
    # calendars, doc/source/user/dashboard.rst).
    os.makedirs(target)
    for package in (ENABLED_PACKAGE, CALENDAR_ENABLED_PACKAGE):
        source = os.path.dirname(importlib.util.find_spec(package).origin)
        for name in sorted(os.listdir(source)):
            if name.startswith('_9') and name.endswith('.py'):
                shutil.copy(os.path.join(source, name), target)


def local_settings(layout, enabled):
    """The text of ``local_settings.py``."""
    values = {
        'DEBUG': False,
        'ALLOWED_HOSTS': [config.HOST, 'localhost'],
        'SECRET_KEY': secrets.token_urlsafe(32),
        'OPENSTACK_HOST': config.HOST,
        'OPENSTACK_KEYSTONE_URL': layout.auth_url,
        'OPENSTACK_KEYSTONE_DEFAULT_ROLE': config.USERS['demo'],
        'OPENSTACK_KEYSTONE_DEFAULT_DOMAIN': config.DOMAIN,
        'OPENSTACK_ENDPOINT_TYPE': 'publicURL',
        # The sandbox has no Neutron: the project overview would ask it
        # for network quotas.
        'OPENSTACK_NEUTRON_NETWORK': {'enable_quotas': False},
        # One process serves the dashboard: its memory holds the sessions.
        'CACHES': {'default': {
            'BACKEND': 'django.core.cache.backends.locmem.LocMemCache'}},
        'SESSION_ENGINE': 'django.contrib.sessions.backends.cache',
        'TIME_ZONE': 'UTC',
        'STATIC_ROOT': static_root(),
        'LOGGING': _logging(),
    }
    return ''.join([
        '# Written by reservation-sandbox; Horizon reads it as '
        'local.local_settings.\n',
        '# blazar-dashboard\'s panels: its enabled files, in this '
        'sandbox\'s directory\n',
        '# rather than in the installed Horizon.\n',
        'from openstack_dashboard.local import enabled as _enabled\n',
        '_enabled.__path__.append(%r)\n\n' % enabled,
        STATIC_SETTINGS,
    ] + ['%s = %r\n' % item for item in values.items()])


def _logging():
    """Horizon's LOGGING setting."""
    # To stdout, which the supervisor keeps in DIR/logs/dashboard.log.
    handler = {'class': 'logging.StreamHandler',
               'formatter': 'plain', 'stream': 'ext://sys.stdout'}
    return {
        'version': 1,
        'disable_existing_loggers': False,
        'formatters': {'plain': {
            'format': '%(asctime)s %(levelname)s %(name)s %(message)s'}},
        'handlers': {'stdout': handler},
        'root': {'handlers': ['stdout'], 'level': 'INFO'},
    }
