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

"""Horizon's enabled files of the calendar panels.

_9510_project_reservation_calendar (the project's calendar, and the app
with the static files) and _9520_admin_reservation_calendar (the hosts'
calendar); Horizon reads them from its ``openstack_dashboard/local/
enabled/`` directory, where an operator copies them.
"""
