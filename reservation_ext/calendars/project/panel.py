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

"""The project calendar's Horizon panel."""

from django.utils.translation import gettext_lazy as _
import horizon


class Calendar(horizon.Panel):
    """Project > Reservations > Calendar, for clouds with the lease API."""

    name = _('Calendar')
    slug = 'reservation_calendar'
    # Shown only where the catalog has the lease API, as Leases is.
    permissions = ('openstack.services.reservation',)
