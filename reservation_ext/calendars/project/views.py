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

"""The project calendar: the page and its JSON calls.

The page draws the timeline from :func:`leases_json` (embedded at
first, fetched again after a lease is made); the request form posts to
:func:`search_json` (availability and proposals at once) and a slot's
click to :func:`create_json`.
"""

from django import http
from django.utils.translation import gettext_lazy as _
from django.views.decorators import http as http_methods
from horizon import exceptions
from horizon import views

from reservation_ext.calendars import api
from reservation_ext.calendars import common
from reservation_ext.calendars import search
from reservation_ext.calendars import timeline


class IndexView(views.HorizonTemplateView):
    """The calendar page: the timeline, the request form, the results."""

    template_name = 'project/reservation_calendar/index.html'
    page_title = _('Calendar')

    def get_context_data(self, **kwargs):
        """The page's data: the leases' rows and the form's types."""
        context = super().get_context_data(**kwargs)
        try:
            rows = timeline.lease_rows(api.project_leases(self.request))
        except common.API_ERRORS:
            exceptions.handle(self.request, _('Unable to load leases.'))
            rows = []
        context['calendar'] = {'rows': rows, 'now': common.now_text()}
        context['request_types'] = [
            {'type': name, 'label': label, 'unit': unit,
             'fields': [{'name': field, 'label': text, 'default': default}
                        for field, text, default in fields]}
            for name, label, unit, fields in timeline.REQUEST_TYPES]
        return context


@http_methods.require_GET
def leases_json(request):
    """The timeline's rows of the project's leases."""
    try:
        rows = timeline.lease_rows(api.project_leases(request))
    except common.API_ERRORS as error:
        return common.api_error(error)
    return http.JsonResponse({'rows': rows, 'now': common.now_text()})


@http_methods.require_POST
def search_json(request):
    """The free capacity over time and the proposals of a request form."""
    try:
        found = search.read_form(request.POST, common.now())
        availability = api.availability(request, found.query)
        proposals = api.propose(request, found.body)
    except common.API_ERRORS as error:
        return common.api_error(error)
    return http.JsonResponse({
        'unit': availability.get('unit') or found.unit,
        'needed': found.needed,
        'start': timeline.iso_utc(availability.get('start')),
        'end': timeline.iso_utc(availability.get('end')),
        'steps': timeline.availability_steps(availability),
        'slots': timeline.proposal_slots(proposals),
        'now': common.now_text(),
    })


@http_methods.require_POST
def create_json(request):
    """Create a lease from a proposal; the lease's id, name and window."""
    name = (request.POST.get('name') or '').strip()
    proposal_id = request.POST.get('proposal_id') or ''
    try:
        if not name:
            raise timeline.RequestError('name', 'the lease needs a name')
        if not proposal_id:
            raise timeline.RequestError('proposal_id', 'pick a slot')
        lease = api.lease_from_proposal(request, proposal_id, name)
    except common.API_ERRORS as error:
        return common.api_error(error)
    return http.JsonResponse({'lease': {
        'id': lease['id'], 'name': lease['name'],
        'status': lease.get('status'),
        'start': timeline.iso_utc(lease.get('start_date')),
        'end': timeline.iso_utc(lease.get('end_date'))}}, status=201)
