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

"""The enforcement of lease changes: Blazar's filters and time quotas.

The lease service and the engine call, outside any DB transaction:

* :meth:`Enforcement.check_create` before a lease is written;
* :meth:`Enforcement.check_update` before a lease is changed, with the
  current lease and the new values;
* :meth:`Enforcement.on_end` when a lease ends (the engine's
  ``end_lease``) or is deleted before its end; failures are logged only,
  as in Blazar.

The checks run the ``[enforcement] enabled_filters`` in order; the first
refusal wins. They return the quota check that the writing transaction
then runs, after the plugins booked the resources: the time quotas'
(:class:`~.time_quotas.QuotaCheck`) and, where the services' quotas can
be read (Nova's and Cinder's in the lease API, Nova's in the server
middleware, Cinder's in cinder-api), those over the lease's window
(:class:`~.window_quotas.WindowQuotaCheck`).
"""

from oslo_log import log as logging

from db import api as db_api
from reservation_ext.enforcement import filters as filters_mod
from reservation_ext.enforcement import payloads
from reservation_ext.enforcement import time_quotas
from reservation_ext.enforcement import window_quotas

LOG = logging.getLogger(__name__)


class Enforcement:
    """Checks lease changes against the filters and the time quotas.

    :param conf: the ``[enforcement]`` options group.
    :param filters: the filters to run, built
        (:func:`reservation_ext.enforcement.filters.load`).
    :param quotas: a :class:`~.time_quotas.TimeQuotas`, or None.
    :param window_quotas: the :class:`~.window_quotas.WindowQuotas` of
        the services whose quotas can be read where this runs (Nova's in
        nova-api, and Cinder's in its lease API; Cinder's in cinder-api;
        none in the engine).
    """

    def __init__(self, conf, filters, quotas=None, window_quotas=()):
        self.conf = conf
        self.filters = filters
        self.quotas = quotas
        self.window_quotas = list(window_quotas)

    def check_create(self, ctx, request, reservations):
        """Check a parsed create request before anything is written.

        :param reservations: ``[(resource_type, values)]`` of the lease.
        :returns: the quota check for the writing transaction.
        """
        lease = payloads.new_lease(ctx, request, reservations)
        context = payloads.context(self.conf, lease)
        for lease_filter in self.filters:
            lease_filter.check_create(context, lease)
        return self._quota_check(ctx, ctx.project_id,
                                 reservations=reservations)

    def check_update(self, ctx, current, new, reservations, changes):
        """Check that lease ``current`` may become ``new``.

        :param current: the lease's columns (and ``projects``).
        :param new: the same with the new name and dates.
        :param reservations: the lease's reservation views.
        :param changes: ``{reservation_id: {field: value}}`` of the update.
        :returns: the quota check for the writing transaction.
        """
        if self.filters:
            with db_api.context_manager.reader.using(ctx) as session:
                before = payloads.existing_lease(session, current,
                                                 reservations)
                after = payloads.existing_lease(session, new, reservations,
                                                changes)
            context = payloads.context(self.conf, current)
            for lease_filter in self.filters:
                lease_filter.check_update(context, before, after)
        return self._quota_check(ctx, current['project_id'], current['id'])

    def on_end(self, ctx, lease, reservations):
        """Tell the filters that ``lease`` ended; log what fails."""
        if not self.filters:
            return
        try:
            with db_api.context_manager.reader.using(ctx) as session:
                ended = payloads.existing_lease(session, lease,
                                                reservations)
            context = payloads.context(self.conf, lease)
            for lease_filter in self.filters:
                lease_filter.on_end(context, ended)
        except Exception as exc:
            # As in Blazar: the end happens whatever the filters say.
            LOG.warning('Enforcement on_end of lease %s failed: %s',
                        lease['id'], exc)

    def _quota_check(self, ctx, project_id, lease_id=None, reservations=()):
        """Return the checks of the writing transaction, read beforehand."""
        checks = []
        if self.quotas is not None:
            checks.append(self.quotas.check_for(ctx, project_id, lease_id))
        checks += [windows.check_for(ctx, project_id, lease_id, reservations)
                   for windows in self.window_quotas]
        if not checks:
            return time_quotas.NO_QUOTA_CHECK
        return checks[0] if len(checks) == 1 else window_quotas.Checks(
            checks)


def from_conf(conf, clock, compute_quotas=None, volume_quotas=None):
    """Build the enforcement that ``conf``'s ``[enforcement]`` options set.

    :param compute_quotas: the reader of Nova's quotas (see
        :class:`~.window_quotas.WindowQuotas`), where it can be read;
        ``volume_quotas`` Cinder's.
    """
    group = conf.enforcement
    quotas = None
    if group.time_quotas:
        quotas = time_quotas.TimeQuotas(
            group, time_quotas.KeystoneLimits(), clock)
    windows = [window_quotas.WindowQuotas(kind, reader, clock)
               for kind, reader in ((window_quotas.COMPUTE, compute_quotas),
                                    (window_quotas.VOLUME, volume_quotas))
               if reader is not None]
    return Enforcement(group, filters_mod.load(conf, clock,
                                               group.enabled_filters),
                       quotas, windows)


def disabled(conf):
    """Return an enforcement that allows everything (no filters, no quotas)."""
    return Enforcement(conf.enforcement, [])
