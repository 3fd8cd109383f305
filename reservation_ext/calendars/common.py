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

"""What both calendars' views share: the clock and JSON answers."""

import datetime

from blazarclient import exception as blazar_exception
from django import http
from keystoneauth1 import exceptions as ks_exceptions

from reservation_ext.calendars import timeline


def now():
    """The current time, aware UTC (a function so that tests may fix it)."""
    return datetime.datetime.now(datetime.timezone.utc)


def now_text():
    """:func:`now` as the calendar's ISO text."""
    return now().strftime('%Y-%m-%dT%H:%M:%SZ')


def api_error(error):
    """A JSON error answer for a failed lease API call or a bad form.

    The page shows ``error``: the API's own message (which names the
    field at fault) with its status, or the form field's.
    """
    if isinstance(error, timeline.RequestError):
        return http.JsonResponse({'error': str(error),
                                  'field': error.field}, status=400)
    if isinstance(error, blazar_exception.BlazarClientException):
        status = getattr(error, 'code', None) or 500
        return http.JsonResponse({'error': str(error)}, status=status)
    # No endpoint in the catalog, an expired token, a refused connection.
    return http.JsonResponse({'error': str(error)}, status=503)


# What api_error turns into an answer; anything else is a bug, which
# Horizon's error page shows.
API_ERRORS = (timeline.RequestError, blazar_exception.BlazarClientException,
              ks_exceptions.ClientException)
