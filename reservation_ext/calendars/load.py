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

"""The admin calendar's load: preemptible and gap-filling servers.

Pure functions, like :mod:`.timeline`, of Nova's server views (``GET
/servers/detail?all_tenants=1`` at the microversion that shows a
server's flavor extra specs and scheduler hints, as the engine lists
them) and the lease API's lease views. A server on a reservable host is
load of one of two kinds:

``preemptible``
    as the engine's reclaim judges it (the flavor's extra spec
    ``reservation:preemptible`` or the scheduler hint ``preemptible``,
    :mod:`reservation_ext.planning.preemptible_placement`). It runs from
    its launch until a booking needs its room: its bar has no end.
``gap_filling``
    a server booted with a lease that starts now, which the lease API
    booked as a slice of the host until the lease's end, in the gap
    before the host's next booking
    (:mod:`reservation_ext.plugins.virtual_instance`). Its bar, from the
    lease's start to its end, takes the place of its lease's slice.

Other servers (reserved in advance, on an instance-capacity seat,
ordinary ones) are not load: the leases' bars already show the first
two.
"""

import collections
import datetime

from reservation_ext.calendars import timeline
# The panel calls preemptible what the engine stops as such: the one
# predicate over a server view.
from reservation_ext.planning import preemptible_placement

PREEMPTIBLE = 'preemptible'
GAP_FILLING = 'gap_filling'
# The kinds of load, in the order the host's badge counts them.
KINDS = ((PREEMPTIBLE, 'preemptible'), (GAP_FILLING, 'gap-filling'))
HOST = 'OS-EXT-SRV-ATTR:hypervisor_hostname'
LAUNCHED_AT = 'OS-SRV-USG:launched_at'
# Lease views give created_at in whole seconds.
_TIMESTAMP_STEP = datetime.timedelta(seconds=1)


def server_leases(leases):
    """``{server id: (lease, reservation)}`` of the leases of servers."""
    return {reservation['server_id']: (lease, reservation)
            for lease in leases
            for reservation in lease.get('reservations') or ()
            if reservation.get('resource_type') == 'virtual:instance' and
            reservation.get('server_id')}


def fills_a_gap(lease, reservation):
    """Say whether a server's lease was booked into a host's gap.

    It started when it was made (a boot's ``"start": "now"``), and its
    server has a slice of a reservable host rather than the shared pool.
    """
    if reservation.get('shared_pool') is not False or not (
            lease.get('start_date') and lease.get('created_at')):
        return False
    # "now" is taken before the lease is written, so a lease that starts
    # now starts by its created_at (truncated to the second); a later
    # start is a whole minute (a date given or a proposal's) after it.
    return (timeline.parse_utc(lease['start_date']) <
            timeline.parse_utc(lease['created_at']) + _TIMESTAMP_STEP)


def load_kind(server, leased):
    """The kind of load a server is (:data:`KINDS`), or None.

    :param leased: :func:`server_leases` of every lease.
    """
    if preemptible_placement.server_is_preemptible(server):
        return PREEMPTIBLE
    lease, reservation = leased.get(server.get('id'), (None, None))
    if lease is not None and fills_a_gap(lease, reservation):
        return GAP_FILLING
    return None


def server_bar(server, kind, leased):
    """A bar of the admin calendar: one server of a host's load.

    The admin sees whose it is: the server's name and project. A
    gap-filling server's bar is its lease's window and names the lease;
    a preemptible one's starts at its launch and has no end.
    """
    bar = {
        'kind': kind,
        'server': server.get('name'),
        'server_id': server.get('id'),
        'server_status': server.get('status'),
        'project_id': server.get('tenant_id'),
        'launched_at': timeline.iso_utc(server.get(LAUNCHED_AT)),
        'start': timeline.iso_utc(server.get(LAUNCHED_AT) or
                                  server.get('created')),
        'end': None,
    }
    if kind == GAP_FILLING:
        lease, reservation = leased[server['id']]
        bar.update({
            'lease_id': lease.get('id'), 'lease': lease.get('name'),
            'status': lease.get('status'),
            'reservation_id': reservation.get('id'),
            'start': timeline.iso_utc(lease.get('start_date')),
            'end': timeline.iso_utc(lease.get('end_date')),
        })
    return bar


def with_load(rows, servers, leases):
    """The admin calendar's rows (:func:`.timeline.host_rows`) with load.

    Each host's preemptible and gap-filling servers (``servers``: Nova's
    views, every project's) are added as bars after its leases' (a
    gap-filling server's in place of its lease's slice), and ``load``
    counts them (``{kind: count}``, see :func:`load_summary`).
    """
    leased = server_leases(leases)
    bars_on = collections.defaultdict(list)
    for server in servers:
        kind = load_kind(server, leased)
        if kind and server.get(HOST):
            bars_on[server[HOST]].append(server_bar(server, kind, leased))
    return [_row_with_load(row, bars_on.get(row['host'], ()))
            for row in rows]


def _row_with_load(row, load_bars):
    """One host's row with its load's bars and counts."""
    replaced = {bar['reservation_id'] for bar in load_bars
                if bar['kind'] == GAP_FILLING}
    load = {kind: sum(1 for bar in load_bars if bar['kind'] == kind)
            for kind, _name in KINDS}
    # The script gives lanes to the bars in this order: the leases keep
    # the top ones; then the gap-filling servers, which may share them;
    # the preemptible ones, which hold a lane to its end, come last.
    return dict(row, load=load, load_summary=load_summary(load), bars=[
        bar for bar in row['bars'] if bar['reservation_id'] not in replaced
    ] + sorted(load_bars, key=lambda bar: (
        bar['end'] is None, bar['start'] or '', bar['server'] or '')))


def load_summary(load):
    """``{kind: count}`` as the host's badge says it, or None when idle.

    e.g. ``2 preemptible, 1 gap-filling``.
    """
    parts = ['%d %s' % (load[kind], name) for kind, name in KINDS
             if load.get(kind)]
    return ', '.join(parts) or None
