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

"""Time quotas: Keystone unified limits on the hours a project reserves.

The limits are registered limits (the default of every project) and
project limits of the service that ``[oslo_limit]`` names (the catalog's
``reservation`` service), on the resources of
:mod:`reservation_ext.enforcement.usage`::

    openstack registered limit create --service reservation \
        --default-limit 500 host_hours
    openstack limit create --service reservation --project demo \
        --resource-limit 1000 host_hours

A resource with neither is not limited (oslo.limit would read it as 0),
nor is one whose limit is -1 (Keystone's "unlimited").

A change is checked in two steps, so that no HTTP call runs inside a
writer transaction and two concurrent changes cannot both slip under a
limit:

1. before the transaction, :meth:`TimeQuotas.limits` reads the project's
   limits from Keystone with oslo.limit;
2. in the transaction that writes the lease, after the plugins booked its
   resources, :meth:`QuotaCheck.check` serializes the project's quota
   checks (on PostgreSQL a transaction-scoped advisory lock on the
   project; SQLite writers are serialized already; elsewhere the rows of
   the project's leases are locked, which leaves a race between the
   first two leases of a project), sums the usage in SQL with the new
   rows, and raises :class:`~reservation_ext.exceptions.QuotaExceeded`
   (403), which rolls the whole change back, when a resource that the
   change adds to is over its limit.
"""

import datetime
import zlib

from keystoneauth1 import exceptions as ks_exc
from openstack import exceptions as sdk_exc
from oslo_config import cfg
from oslo_limit import exception as limit_exc
from oslo_limit import limit
from oslo_limit import opts as limit_opts
from oslo_log import log as logging
import sqlalchemy as sa

from db import api as db_api
from db import tables
from reservation_ext.enforcement import usage as usage_mod
from reservation_ext import exceptions

LOG = logging.getLogger(__name__)

LEASES = tables.LEASES


class KeystoneLimits:
    """The reservation service's unified limits, read with oslo.limit.

    oslo.limit reads ``[oslo_limit]`` of the global configuration; the
    connection to Keystone is made at the first read, and limits are read
    anew every time (an operator's change counts at once).
    """

    def __init__(self):
        self._enforcer = None

    def for_project(self, project_id):
        """Get ``{resource: limit}`` of the project, for the quota resources.

        :raises EnforcementUnavailable: Keystone could not be asked.
        """
        try:
            enforcer = self._get_enforcer()
            found = dict(enforcer.get_registered_limits(None))
            found.update(enforcer.get_project_limits(project_id, None))
        except (limit_exc.SessionInitError, ValueError,
                ks_exc.ClientException, sdk_exc.SDKException) as exc:
            LOG.warning('Reading the unified limits failed: %s', exc)
            raise exceptions.EnforcementUnavailable(
                'The time quotas cannot be read from Keystone; please '
                'retry later.') from exc
        return {name: value for name, value in found.items()
                if name in usage_mod.RESOURCES and value >= 0}

    def _get_enforcer(self):
        if self._enforcer is None:
            limit_opts.register_opts(cfg.CONF)
            # The usage callback is never called: usage is summed in the
            # transaction that writes the lease (see the module doc).
            self._enforcer = limit.Enforcer(_no_usage, cache=False)
        return self._enforcer


def _no_usage(project_id, resource_names):
    raise NotImplementedError('usage is summed in the lease transaction')


class TimeQuotas:
    """The time-quota check of lease changes.

    :param conf: the ``[enforcement]`` options group.
    :param limits: where the limits come from (:class:`KeystoneLimits`).
    :param clock: where "now" comes from.
    """

    def __init__(self, conf, limits, clock):
        self.conf = conf
        self.limits = limits
        self.clock = clock

    def check_for(self, ctx, project_id, lease_id=None):
        """Return the :class:`QuotaCheck` of a change of the project's leases.

        Reads the limits (over HTTP): call it outside any transaction.

        :param lease_id: the lease an update changes, whose usage before
            the change is read here: a change that does not add to a
            resource is never refused for it.
        """
        limits = self.limits.for_project(project_id)
        floor = self.clock.now() - datetime.timedelta(
            days=self.conf.time_quota_window_days)
        before = dict.fromkeys(usage_mod.RESOURCES, 0.0)
        if limits and lease_id:
            with db_api.context_manager.reader.using(ctx) as session:
                before = usage_mod.project_usage(session, project_id, floor,
                                                 lease_id)[1]
        return QuotaCheck(project_id, limits, floor, before)


class QuotaCheck:
    """The limits of a project, checked inside the writing transaction."""

    def __init__(self, project_id, limits, floor, lease_before):
        self.project_id = project_id
        self.limits = limits
        self.floor = floor
        self.lease_before = lease_before

    def check(self, session, lease_id):
        """Refuse the change if the usage with it is over a limit.

        :param lease_id: the lease created or changed, whose rows the
            transaction has written already.
        :raises QuotaExceeded: naming the first resource over its limit
            that the change adds to.
        """
        if not self.limits:
            return
        lock_project(session, self.project_id)
        usage, lease_usage = usage_mod.project_usage(
            session, self.project_id, self.floor, lease_id)
        for resource, value in sorted(self.limits.items()):
            adds = lease_usage[resource] > self.lease_before[resource]
            if adds and usage[resource] > value:
                raise exceptions.QuotaExceeded(
                    resource, value, usage[resource], lease_usage[resource])


class NoQuotaCheck:
    """The check when time quotas are off: allows everything."""

    def check(self, session, lease_id):
        """Allow."""


NO_QUOTA_CHECK = NoQuotaCheck()


def lock_project(session, project_id):
    """Serialize the quota checks of ``project_id`` until commit."""
    dialect = session.get_bind().dialect.name
    if dialect == 'postgresql':
        session.execute(sa.select(sa.func.pg_advisory_xact_lock(
            zlib.crc32(('quota:' + project_id).encode()))))
    elif dialect != 'sqlite':
        session.execute(sa.select(LEASES.c.id).where(
            LEASES.c.project_id == project_id).with_for_update())
