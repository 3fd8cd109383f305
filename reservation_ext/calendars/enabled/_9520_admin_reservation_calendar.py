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

"""Horizon enabled file: Admin > Reservation > Calendar (administrators).

Needs _9510_project_reservation_calendar.py beside it, which installs
the static files both panels use.
"""

PANEL = 'reservation_calendar'
PANEL_DASHBOARD = 'admin'
PANEL_GROUP = 'reservation'
ADD_PANEL = 'reservation_ext.calendars.admin.panel.Calendar'
