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

"""The hosts calendar's page: each reservable host with its bookings.

The hosts (with their power and failure fields), every host's
allocations and the leases (which name the allocations' leases and
projects) are read once per page, and so are every project's servers,
which give each host's preemptible and gap-filling load
(:mod:`reservation_ext.calendars.load`); the page's script draws them.
"""

from django.utils.translation import gettext_lazy as _
from horizon import exceptions
from horizon import messages
from horizon import views

from reservation_ext.calendars import api
from reservation_ext.calendars import common
from reservation_ext.calendars import load
from reservation_ext.calendars import timeline


class IndexView(views.HorizonTemplateView):
    """Hosts x time, with the leases and the load on each host."""

    template_name = 'admin/reservation_calendar/index.html'
    page_title = _('Hosts Calendar')

    def get_context_data(self, **kwargs):
        """The page's data: a row per host."""
        context = super().get_context_data(**kwargs)
        try:
            leases = api.all_leases(self.request)
            rows = timeline.host_rows(api.hosts(self.request),
                                      api.allocations(self.request), leases)
        except common.API_ERRORS:
            exceptions.handle(self.request,
                              _('Unable to load the hosts and leases.'))
            rows = []
        if rows:
            rows = self.with_load(rows, leases)
        context['calendar'] = {'hosts': rows, 'now': common.now_text()}
        return context

    def with_load(self, rows, leases):
        """``rows`` with each host's preemptible and gap-filling servers."""
        try:
            servers = api.all_servers(self.request)
        except common.API_ERRORS as error:
            # The hosts and their leases are worth showing without it.
            messages.warning(self.request, _(
                'Unable to list the servers, so the preemptible and '
                'gap-filling load is not shown: %s') % error)
            return rows
        return load.with_load(rows, servers, leases)
