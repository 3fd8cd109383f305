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

"""Availability: how much matching reservable capacity is free, and when.

``GET /v1/availability?resource_type=...&start=...&end=...`` and the
fields of a reservation of that type (``resource_properties``, ``hosts``,
``vcpus``, ``size_gb``, ...) answer with the steps of the free capacity
over ``[start, end)``: whole hosts free, servers of the size that fit,
GB, addresses, or copies of a stack's needs (``servers``, ``volume_gb``,
``floating_ips``) that fit at once. A host counts as busy from the
cleaning time before each of its bookings and live proposal holds to the
cleaning time after, so that a window that the answer shows free can be
booked.

Everybody with the rule ``reservation:availability:get`` sees the counts,
which say nothing of whose leases hold the rest; who may list the
reservable hosts (``reservation:hosts:list``) also sees each host's free
periods.
"""

import sqlalchemy as sa

from db import api as db_api
from db import tables
from reservation_ext import dates
from reservation_ext import exceptions
from reservation_ext.leases import parsing
from reservation_ext.planning import planner
from reservation_ext.planning import timelines
from reservation_ext import policy
from reservation_ext import validation

HOSTS = tables.HOSTS

# What the steps count, by resource type.
UNITS = {'physical:host': 'hosts', 'virtual:instance': 'servers',
         'flavor:instance': 'servers', 'network': 'networks',
         'storage:pool': 'pools',
         'virtual:volume': 'GB', 'virtual:floatingip': 'floating IPs',
         'heat:stack': 'stacks'}
# Query parameters that may be given more than once, or as a list
# separated by commas.
_LISTS = ('hosts',)


def parse(params, plugins, now):
    """Return ``(resource_type, values, start, end)`` of query ``params``.

    :param params: a webob MultiDict of the query string.
    """
    values = {key: params.getall(key) for key in params}
    for key, given in values.items():
        if len(given) > 1 and key not in _LISTS:
            raise exceptions.InvalidInput(key, 'is given more than once')
    resource_type = _single(values, 'resource_type', None)
    if resource_type is None:
        raise validation.missing('resource_type')
    start = dates.parse_date(_single(values, 'start', 'now'), 'start',
                             now)
    if 'end' not in values:
        raise validation.missing('end')
    end = dates.parse_date(_single(values, 'end', None), 'end', now)
    dates.check_window(start, end, fields=('start', 'end'))
    fields = {key: (_split(given) if key in _LISTS else given[0])
              for key, given in values.items()}
    _type, checked = parsing.reservation(plugins, resource_type, fields,
                                         '', check='validate_query')
    return resource_type, checked, start, end


def _single(values, key, default):
    return values.pop(key, [default])[0]


def _split(given):
    return [name for value in given for name in value.split(',') if name]


class AvailabilityService:
    """Answer availability queries on behalf of a request context."""

    def __init__(self, conf, clock, plugins):
        self.conf = conf
        self.clock = clock
        self.plugins = plugins

    def show(self, ctx, params):
        """Return the free capacity that the query ``params`` asks about."""
        policy.authorize(ctx, 'get', ctx.project_id,
                         rules=policy.AVAILABILITY)
        now = self.clock.now()
        resource_type, values, start, end = parse(params, self.plugins, now)
        busy = planner.Busy.from_conf(now, self.conf)
        span = timelines.Span(start, start, end - start, busy.margin)
        with db_api.context_manager.reader.using(ctx) as session:
            steps, hosts = self.plugins[resource_type].timeline(
                session, values, span, busy).timeline(start, end)
            shown = hosts and policy.allowed(ctx, 'list', None,
                                             rules=policy.HOSTS)
            names = _host_names(session, hosts) if shown else {}
        view = {'resource_type': resource_type,
                'start': dates.format_date(start),
                'end': dates.format_date(end),
                'unit': UNITS.get(resource_type),
                'free': [_step(step) for step in steps]}
        if shown:
            view['hosts'] = [{'host': names[host],
                              'free': [_step(step) for step in free]}
                             for host, free in sorted(hosts.items())]
        return view


def _host_names(session, host_ids):
    return dict(session.execute(
        sa.select(HOSTS.c.id, HOSTS.c.hypervisor_hostname).where(
            HOSTS.c.id.in_(host_ids))).all())


def _step(step):
    view = {'start': dates.format_date(step[0]),
            'end': dates.format_date(step[1])}
    if len(step) > 2:
        view['amount'] = step[2]
    return view
