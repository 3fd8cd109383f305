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

"""Horizon with blazar-dashboard for ``reservation-sandbox --dashboard``.

The unmodified Horizon and blazar-dashboard (the ``[dashboard]`` extra)
run in a child process, ``python -m reservation_ext.sandbox.dashboard``
(:mod:`.__main__`), on the sandbox's ``dashboard`` port: :mod:`.server`
builds the static files and serves Horizon. Nothing of the installed
Horizon is changed; everything the sandbox sets lives in
``DIR/dashboard/``, written by :mod:`.settings`:

    local/local_settings.py  Horizon's local settings: the sandbox's
                             Keystone, in-memory sessions, offline
                             compression, static files in the cache
    enabled/                 blazar-dashboard's enabled files (the panels) and
                             the reservation calendars'

Horizon imports its local settings as the top-level module
``local.local_settings`` (its own directory is last on ``sys.path``), so
the child puts ``DIR/dashboard`` first.

The static files (``collectstatic`` and the offline ``compress`` that
Horizon needs) take a minute or two to build and depend only on the
installed packages and the constant part of the settings, so they are
built once into ``$XDG_CACHE_HOME/reservation-sandbox/dashboard-static/
<key>`` (default ``~/.cache``), the key a hash of both, and shared by
every later start.
"""
