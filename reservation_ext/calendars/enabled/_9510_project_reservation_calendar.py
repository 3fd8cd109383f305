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

"""Horizon enabled file: Project > Reservations > Calendar.

Copy it (and _9520_admin_reservation_calendar.py) into Horizon's
``openstack_dashboard/local/enabled/``, beside blazar-dashboard's
enabled files, whose panel groups it joins; then collect and compress
the static files again. This file also installs the Django app with the
panels' static files (the timeline script and its style) for both.
"""

PANEL = 'reservation_calendar'
PANEL_DASHBOARD = 'project'
PANEL_GROUP = 'reservations'
ADD_PANEL = 'reservation_ext.calendars.project.panel.Calendar'

ADD_INSTALLED_APPS = ['reservation_ext.calendars']
ADD_JS_FILES = ['reservation_calendar/calendar.js']
ADD_SCSS_FILES = ['reservation_calendar/calendar.scss']
