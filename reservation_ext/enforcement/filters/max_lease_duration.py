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

"""``MaxLeaseDurationFilter``: leases are at most so long (Blazar's).

``max_lease_duration`` seconds from start to end, except for the projects
of ``max_lease_duration_exempt_project_ids``; -1 means no limit. An update
that does not extend the lease (same or later start, same or earlier end)
is always allowed. An extension is checked by
``reservation_extension_window``:

* -1 (Blazar's rule): the new lease, from its start to its new end, is at
  most ``max_lease_duration`` long;
* N >= 0 (Chameleon's rule): the lease may only be extended within the
  last N seconds before its current end, and the extension, from the
  current end to the new one, is at most ``max_lease_duration`` long.
"""

import datetime

from reservation_ext.conf import enforcement as enforcement_options
from reservation_ext import dates
from reservation_ext.enforcement.filters import base
from reservation_ext import exceptions


class MaxLeaseDurationFilter(base.Filter):
    """Refuse leases longer than ``[enforcement] max_lease_duration``."""

    def check_create(self, context, lease):
        """See :meth:`Filter.check_create`."""
        if not self._exempt(context):
            self._check_duration(lease['start_date'], lease['end_date'])

    def check_update(self, context, current_lease, lease):
        """See :meth:`Filter.check_update`."""
        if self._exempt(context) or not _extends(current_lease, lease):
            return
        window = self.conf.reservation_extension_window
        if window == enforcement_options.NO_LIMIT:
            self._check_duration(lease['start_date'], lease['end_date'])
            return
        self._check_in_window(current_lease['end_date'])
        self._check_duration(current_lease['end_date'], lease['end_date'])

    def _exempt(self, context):
        return (context['project_id'] in
                self.conf.max_lease_duration_exempt_project_ids)

    def _check_duration(self, start, end):
        limit = self.conf.max_lease_duration
        seconds = int((end - start).total_seconds())
        if limit != enforcement_options.NO_LIMIT and seconds > limit:
            # Blazar's wording: tools match it.
            raise exceptions.EnforcementRefused(
                'Lease duration of %d seconds must be less than or equal '
                'to the maximum lease duration of %d seconds.'
                % (seconds, limit))

    def _check_in_window(self, end):
        window = self.conf.reservation_extension_window
        opens = end - datetime.timedelta(seconds=window)
        if self.clock.now() < opens:
            raise exceptions.EnforcementRefused(
                'The lease can only be extended in the last %d seconds '
                'before its end (%s), that is from %s on.'
                % (window, dates.format_date(end),
                   dates.format_date(opens)))


def _extends(current_lease, lease):
    """Say whether ``lease`` starts earlier or ends later than before."""
    return (lease['start_date'] < current_lease['start_date'] or
            lease['end_date'] > current_lease['end_date'])
