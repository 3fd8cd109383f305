"""The ``virtual:instance`` plugin: one Nova server for a lease.

A request::

    {"resource_type": "virtual:instance", "server_id": "<uuid>",
     "vcpus": 1, "memory_mb": 512, "disk_gb": 1, "flavor_id": "1",
     "shared_pool": false, "on_end": "delete"}

nova-api's server middleware (:mod:`reservation_ext.nova_api`) makes these
requests: ``nova boot --hint reserved=True`` creates the server and a
lease with one such reservation naming it and carrying its flavor's size.

A lease that starts later books a slice of one reservable host for its
window with the planner
(:func:`reservation_ext.planning.planner.allocate_slice`), so that the
capacity is there at the start; the server waits unbuilt
(RESERVED) until the engine starts it on that host. A lease that starts
now (``shared_pool``) books nothing: its server is built at once in the
shared pool, where host leases never reach. At the end, ``on_end`` says
what becomes of the server: ``delete``, ``snapshot_delete`` (an image
first) or ``shelve``.
"""

import functools

import sqlalchemy as sa

from db import models
from reservation_ext.clients import compute as compute_client
from reservation_ext import exceptions
from reservation_ext.leases.states import ReservationStatus
from reservation_ext.planning import planner
from reservation_ext.plugins import base
from reservation_ext import validation

RESOURCE_TYPE = 'virtual:instance'
REQUESTS = models.InstanceReservation.__table__
HOSTS = models.ComputeHost.__table__
ALLOCATIONS = models.HostAllocation.__table__
ON_END = ('delete', 'snapshot_delete', 'shelve')
SIZE_KEYS = ('vcpus', 'memory_mb', 'disk_gb')
KEYS = frozenset(SIZE_KEYS + ('server_id', 'flavor_id', 'shared_pool',
                              'on_end'))
_COLUMNS = SIZE_KEYS + ('server_id', 'flavor_id', 'on_end')
# Nova's defaults of [DEFAULT] initial_{cpu,ram,disk}_allocation_ratio.
NOVA_DEFAULT_RATIOS = (4.0, 1.0, 1.0)


class VirtualInstancePlugin(base.ResourcePlugin):
    """Reserve a server's flavor on a reservable host for a window."""

    @functools.cached_property
    def nova(self):
        """The Nova client, made at first use (the API may never call).

        nova-api's server middleware sets one that acts in-process.
        """
        return compute_client.NovaClient(self.conf)

    def validate(self, values):
        validation.check_keys(values, KEYS)
        out = {key: _count(values, key) for key in SIZE_KEYS}
        out['server_id'] = validation.resource_uuid(
            values.get('server_id'), 'server_id', 'server',
            'nova boot --hint reserved=True')
        flavor_id = values.get('flavor_id')
        if flavor_id is not None and not isinstance(flavor_id, str):
            raise exceptions.InvalidInput('flavor_id', 'must be a string')
        out['flavor_id'] = flavor_id
        shared_pool = values.get('shared_pool', False)
        if not isinstance(shared_pool, bool):
            raise exceptions.InvalidInput('shared_pool', 'must be a boolean')
        out['shared_pool'] = shared_pool
        out['on_end'] = values.get('on_end', self.conf.reservation
                                   .instance_on_end)
        if out['on_end'] not in ON_END:
            raise exceptions.InvalidInput(
                'on_end', 'must be one of: %s'
                % ', '.join(repr(choice) for choice in ON_END))
        return out

    def reserve(self, session, ctx, lease, reservation_id, values):
        if values['shared_pool']:
            if lease['start_date'] > self.clock.now():
                raise exceptions.InvalidInput(
                    'shared_pool', 'only a lease that starts now runs in '
                    'the shared pool')
        else:
            self._book(session, reservation_id, lease, values)
        session.execute(sa.insert(REQUESTS).values(
            id=reservation_id, reservation_id=reservation_id,
            **{key: values[key] for key in _COLUMNS}))
        return values['server_id']

    def get_details(self, session, reservation_ids):
        details = {}
        for row in session.execute(
                sa.select(REQUESTS, HOSTS.c.hypervisor_hostname)
                .outerjoin(ALLOCATIONS, ALLOCATIONS.c.reservation_id ==
                           REQUESTS.c.reservation_id)
                .outerjoin(HOSTS, HOSTS.c.id == ALLOCATIONS.c.host_id)
                .where(REQUESTS.c.reservation_id.in_(reservation_ids))):
            view = {key: getattr(row, key) for key in _COLUMNS
                    if getattr(row, key) is not None}
            view['shared_pool'] = row.hypervisor_hostname is None
            if row.hypervisor_hostname is not None:
                view['host'] = row.hypervisor_hostname
            details[row.reservation_id] = view
        return details

    def update(self, session, ctx, lease, reservation, values):
        base.check_unchanged(values, RESOURCE_TYPE)
        if reservation['shared_pool']:
            return
        # A started server stays where it runs; one that waits for its
        # start may move to any host that fits the new window.
        conditions = ()
        if reservation['status'] == ReservationStatus.ACTIVE:
            conditions = (HOSTS.c.hypervisor_hostname == reservation['host'],)
        planner.release(session, reservation['id'])
        self._book(session, reservation['id'], lease, reservation,
                   conditions)

    def on_start(self, ctx, lease, reservation):
        if not reservation['shared_pool']:
            self.nova.start_server(reservation['server_id'], lease['id'])

    def on_end(self, ctx, lease, reservation):
        self.nova.end_server(reservation['server_id'], reservation['on_end'])

    def on_delete(self, ctx, lease, reservation):
        # Before the start the server is the lease's alone: it goes too.
        if reservation['status'] == ReservationStatus.PENDING:
            self.nova.delete_servers([reservation['server_id']])
        elif reservation['status'] == ReservationStatus.ACTIVE:
            self.on_end(ctx, lease, reservation)

    def _book(self, session, reservation_id, lease, size, conditions=()):
        """Book a slice of ``size`` (a dict of SIZE_KEYS) for the lease."""
        planner.allocate_slice(
            session, reservation_id, lease['start_date'], lease['end_date'],
            tuple(size[key] for key in SIZE_KEYS),
            ratios=allocation_ratios(self.conf),
            cleaning_time=self.conf.reservation.cleaning_time,
            conditions=conditions)


def allocation_ratios(conf):
    """Nova's (vCPU, RAM, disk) allocation ratios, as nova.conf sets them.

    In nova-api, where servers are reserved, Nova's options are registered;
    a ratio that is not set falls back to Nova's initial ratio, as in
    Nova's computes.
    """
    ratios = []
    for kind, default in zip(('cpu', 'ram', 'disk'), NOVA_DEFAULT_RATIOS):
        ratio = _nova_option(conf, '%s_allocation_ratio' % kind)
        if ratio is None:
            ratio = _nova_option(conf, 'initial_%s_allocation_ratio' % kind)
        ratios.append(default if ratio is None else ratio)
    return tuple(ratios)


def _nova_option(conf, name):
    try:
        return getattr(conf, name)
    except (AttributeError, KeyError):
        return None


def _count(values, key):
    value = values.get(key)
    if value is None:
        raise exceptions.InvalidInput(key, 'is required')
    if isinstance(value, bool) or not isinstance(value, int) or value < 0:
        raise exceptions.InvalidInput(key, 'must be an integer >= 0')
    return value
