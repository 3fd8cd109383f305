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

"""The Django application of the calendar panels: their static files.

Its label is not the package's last name: ``horizon`` is Horizon's own
application's.
"""

from django import apps


class CalendarConfig(apps.AppConfig):
    """The package as the Django app ``reservation_calendar``."""

    name = 'reservation_ext.calendars'
    label = 'reservation_calendar'
    verbose_name = 'Reservation calendar'
