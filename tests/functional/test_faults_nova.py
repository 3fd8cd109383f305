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

"""Lease lifecycles inside Nova's harness while Nova's answers fail.

The engine's clients send their requests to the real Nova and image
APIs through :class:`tests.faults.FaultyTransport`: refused and reset
connections, read timeouts after Nova acted, 500, 503, and 409 on busy
servers. The engine runs with a clock the test moves on by more than the
longest retry backoff, as often as an event may be tried.

What must hold (:meth:`FaultsTestCase.assertNothingOrphaned`): every
lease ends (TERMINATED) or is in ERROR with the reason shown in the
lease, and no event is left pending; once the failed leases are deleted,
no aggregate, server, flavor or server group is left without a lease,
every reservable host is in the free pool alone, and a snapshot is made
once.
"""

import collections
import datetime
import json

import sqlalchemy as sa
from testtools import content

from db import models
from reservation_ext.clients import compute
from reservation_ext.clients import plugin_clients
from reservation_ext import clock as clock_mod
from reservation_ext import conf as conf_mod
from reservation_ext import context
from reservation_ext import dates
from reservation_ext import exceptions
from reservation_ext.hosts import inventory
from reservation_ext.leases import notifications
from reservation_ext.leases import service as lease_service
from reservation_ext import plugins as plugins_mod
from reservation_ext import states
from tests import faults
from tests.functional import nova_base

SEED = 16
RATE = 0.3
SECOND = datetime.timedelta(seconds=1)
HOUR = datetime.timedelta(hours=1)
# Longer than the engine's longest backoff between two tries of an event
# (event_retry_backoff * 2 ** (event_max_attempts - 2), 16 s by default).
RETRY_STEP = datetime.timedelta(seconds=64)
RESERVABLE = ('compute-1', 'compute-2', 'compute-3')
LEASED_HOST = 'compute-3'
FREEPOOL = 'freepool'
LEASE_KEY = 'reservation:lease_id'
# How often the owner asks to delete a lease while Nova fails.
DELETE_ATTEMPTS = 10
FINISHED = (states.LeaseStatus.TERMINATED, states.LeaseStatus.ERROR)
# What the one-server leases leave of their server when they end.
LEFT_BY = {'snapshot_delete': (), 'delete': (),
           'shelve': ('SHELVED', 'SHELVED_OFFLOADED')}


class FaultsTestCase(nova_base.NovaTestCase):
    """Three reservable hosts; leases from ``start`` to ``end``."""

    def setUp(self):
        super().setUp()
        # Retried fast: the figures are about outcomes, not waiting.
        self.flags(connect_retries=3, status_code_retries=3,
                   connect_retry_delay=0.01, status_code_retry_delay=0.01,
                   group=conf_mod.CLIENT_GROUP)
        self.now = datetime.datetime.utcnow().replace(microsecond=0)
        self.start = self.now + HOUR
        self.end = self.start + HOUR
        for host in RESERVABLE:
            self.add_reservable_host(host)
        self.flavor = self._create_flavor(memory_mb=3840, vcpu=1, disk=1,
                                          ephemeral=0)

    def drive(self, at, transport):
        """Run the events due at ``at`` and every retry of them."""
        clients = plugin_clients.PluginClients(conf_mod.CONF,
                                               transport=transport)
        for attempt in range(conf_mod.CONF.reservation.event_max_attempts):
            self.run_engine(at + attempt * RETRY_STEP, clients)

    # The leases, one of each type.

    def host_lease(self, name='hosts'):
        return self.lease_api('POST', '/leases', {
            'name': name, 'start_date': nova_base.lease_date(self.start),
            'end_date': nova_base.lease_date(self.end),
            'reservations': [{'resource_type': 'physical:host', 'min': 1,
                              'max': 1, 'hosts': [LEASED_HOST]}]})['lease']

    def server_lease(self, name, on_end):
        """The lease of a RESERVED server booted with the hints."""
        api = self.user_api(nova_base.OWNER)
        server = api.post_server({
            'server': self._build_server(name=name, flavor_id=self.flavor,
                                         networks='none'),
            'os:scheduler_hints': {
                'reserved': 'True', 'lease_params': json.dumps({
                    'start': dates.format_date(self.start),
                    'end': dates.format_date(self.end),
                    'on_end': on_end})}})
        server = self._wait_for_state_change(server, 'RESERVED')
        return self.lease('/' + server['metadata'][LEASE_KEY])

    def capacity_lease(self, name='capacity'):
        return self.lease_api('POST', '/leases', {
            'name': name,
            'start_date': nova_base.lease_date(self.start),
            'end_date': nova_base.lease_date(self.end),
            'reservations': [{'resource_type': 'virtual:instance',
                              'vcpus': 1, 'memory_mb': 512, 'disk_gb': 1,
                              'amount': 1, 'affinity': 'True'}]})['lease']

    def every_type(self, suffix=''):
        """A lease of every type; ``{lease id: lease}``.

        ``suffix`` ends the names of the leases and servers.
        """
        leases = [self.host_lease('hosts' + suffix),
                  self.capacity_lease('capacity' + suffix)] + [
            self.server_lease('vm-%s%s' % (on_end, suffix), on_end)
            for on_end in LEFT_BY]
        return {lease['id']: lease for lease in leases}

    def lease(self, path):
        return self.lease_api('GET', '/leases' + path)['lease']

    # What must hold.

    def assertShowsItsState(self, lease):
        """ACTIVE with its resources in Nova, or ERROR with a reason."""
        if lease['status'] == states.LeaseStatus.ERROR:
            self.assertTrue(lease['status_reason'], lease)
            return
        self.assertEqual(states.LeaseStatus.ACTIVE, lease['status'],
                         lease)
        [reservation] = lease['reservations']
        if reservation['resource_type'] == 'physical:host':
            self.assertEqual([LEASED_HOST], self.aggregate(
                reservation['id'])['hosts'])
            self.assertNotIn(LEASED_HOST, self.aggregate(FREEPOOL)['hosts'])
        elif reservation.get('server_id'):
            self.assertEqual('ACTIVE', self.admin_api.get_server(
                reservation['server_id'])['status'])
        else:
            self.assertEqual(200, self.admin_api.api_get(
                '/os-server-groups/%s' % reservation['server_group_id'],
                check_response_status=False).status)
            self.assertEqual(200, self.admin_api.api_get(
                '/flavors/%s' % reservation['flavor_id'],
                check_response_status=False).status)

    def assertFinished(self, lease_ids):
        """Each lease TERMINATED or ERROR with a reason; none pending.

        Return ``{status: count}``.
        """
        outcomes = {}
        for lease_id in lease_ids:
            lease = self.lease('/' + lease_id)
            self.assertIn(lease['status'], FINISHED, lease)
            if lease['status'] == states.LeaseStatus.ERROR:
                self.assertTrue(lease['status_reason'], lease)
            outcomes[lease['status']] = outcomes.get(lease['status'], 0) + 1
        with self.database.engine.connect() as conn:
            pending = conn.execute(sa.select(models.Event.__table__).where(
                models.Event.__table__.c.status.not_in(
                    states.EventStatus.FINISHED))).all()
        self.assertEqual([], pending)
        return outcomes

    def delete_failed(self, lease_ids, transport=None):
        """The leases in ERROR deleted, until they are gone.

        Through the lease API, or with a lease service whose clients
        send through ``transport``: a delete that fails leaves the lease
        in ERROR with the reason, and is asked again.
        """
        failed = [lease_id for lease_id in lease_ids
                  if self.lease('/' + lease_id)['status'] ==
                  states.LeaseStatus.ERROR]
        if transport is None:
            for lease_id in failed:
                self.lease_api('DELETE', '/leases/' + lease_id)
            return
        service = self.lease_service(transport)
        for lease_id in failed:
            for _attempt in range(DELETE_ATTEMPTS):
                try:
                    service.delete(context.get_admin_context(), lease_id)
                    break
                except exceptions.PluginError:
                    shown = self.lease('/' + lease_id)
                    self.assertEqual(states.LeaseStatus.ERROR,
                                     shown['status'])
                    self.assertIn('Deleting the lease failed: ',
                                  shown['status_reason'])
            self.lease_api('GET', '/leases/' + lease_id, expect=404)

    @staticmethod
    def lease_service(transport, clock=clock_mod.SYSTEM):
        """The lease API's service.

        Its clients send through ``transport``.
        """
        clients = plugin_clients.PluginClients(conf_mod.CONF,
                                               transport=transport)
        return lease_service.LeaseService(
            conf_mod.CONF, clock, plugins_mod.load_plugins(
                conf_mod.CONF, clock, clients),
            notifications.get_notifier(conf_mod.CONF))

    def orphans(self):
        """What Nova holds without a lease that says so, described.

        Leases that failed must have been deleted: any aggregate but the
        free pool, server group or reservation flavor is an orphan, as is
        a reservable host in no pool or in two, and a server without a
        lease or in another state than its lease's end left it.
        """
        leases = {lease['id']: lease for lease in self.lease_api(
            'GET', '/leases')['leases']}
        found = []
        pools = collections.defaultdict(list)
        for aggregate in self.admin_api.api_get('/os-aggregates').body[
                'aggregates']:
            if aggregate['name'] != FREEPOOL:
                found.append('aggregate %s' % aggregate['name'])
            for host in aggregate['hosts']:
                pools[host].append(aggregate['name'])
        found += ['host %s in the pools %s' % (host, pools[host])
                  for host in RESERVABLE if len(pools[host]) != 1]
        for server in self.admin_api.get_servers(
                search_opts={'all_tenants': 1}):
            lease_id = server['metadata'].get(LEASE_KEY)
            lease = leases.get(lease_id)
            if lease is None or server['status'] not in LEFT_BY.get(
                    lease['reservations'][0]['on_end'], ()):
                found.append('server %s (%s) of lease %s' % (
                    server['id'], server['status'], lease_id))
        found += ['server group %s' % group['name'] for group in
                  self.admin_api.api_get('/os-server-groups?all_projects='
                                         'True').body['server_groups']]
        found += ['flavor %s' % reservation['id']
                  for lease in leases.values()
                  for reservation in lease['reservations']
                  if reservation.get('flavor_id') == reservation['id'] and
                  self.admin_api.api_get(
                      '/flavors/%s' % reservation['id'],
                      check_response_status=False).status != 404]
        return found

    def assertNothingOrphaned(self):
        self.assertEqual([], self.orphans())

    def one_server(self, leases, on_end):
        """The lease (as shown now) of the server that ends by ``on_end``."""
        [lease_id] = [lease_id for lease_id, lease in leases.items()
                      if lease['reservations'][0].get('server_id') and
                      lease['reservations'][0]['on_end'] == on_end]
        return self.lease('/' + lease_id)

    def assertOneSnapshot(self, lease):
        """A snapshot_delete lease that ended left one image."""
        [reservation] = lease['reservations']
        images = [image for image in self.glance.images.values()
                  if image['properties'].get('instance_uuid') ==
                  reservation['server_id']]
        self.assertEqual(1, len(images), images)


class NovaFaultsTest(FaultsTestCase):

    def test_every_lease_ends_or_shows_why_while_nova_fails_30_percent(self):
        leases = self.every_type()
        transport = faults.FaultyTransport(SEED, RATE)
        self.drive(self.start + SECOND, transport)
        for lease_id in leases:
            self.assertShowsItsState(self.lease('/' + lease_id))
        self.drive(self.end + SECOND, transport)
        outcomes = self.assertFinished(leases)
        figures = dict(transport.summary(), outcomes=outcomes)
        self.addDetail('figures', content.text_content(json.dumps(figures)))
        self.assertGreater(figures['faults_total'], 10)
        snapshot = self.one_server(leases, 'snapshot_delete')
        if snapshot['status'] == states.LeaseStatus.TERMINATED:
            self.assertOneSnapshot(snapshot)
        self.delete_failed(leases, transport)
        self.assertNothingOrphaned()

    def test_a_lease_goes_to_error_with_the_reason_when_nova_stays_down(self):
        lease = self.host_lease()
        down = faults.FaultyTransport(SEED, rate=1.0, kinds=('503',))
        self.drive(self.start + SECOND, down)
        shown = self.lease('/' + lease['id'])
        self.assertEqual(states.LeaseStatus.ERROR, shown['status'])
        self.assertRegex(shown['status_reason'],
                         '^on_start: Nova refused GET .*: 503 ')
        self.assertEqual(sorted(RESERVABLE),
                         sorted(self.aggregate(FREEPOOL)['hosts']))
        # The end tries to clean up; Nova is still down.
        self.drive(self.end + SECOND, down)
        ended = self.lease('/' + lease['id'])
        self.assertEqual(states.LeaseStatus.ERROR, ended['status'])
        self.assertRegex(ended['status_reason'],
                         '^on_end: Nova refused GET .*: 503 ')
        self.assertFinished([lease['id']])
        self.delete_failed([lease['id']])
        self.assertNothingOrphaned()

    def test_the_end_cleans_up_after_a_start_that_failed(self):
        lease = self.host_lease()
        self.drive(self.start + SECOND, faults.FaultyTransport(
            SEED, rate=1.0, kinds=('refused',),
            where=lambda method, url, body: 'remove_host' in (body or {})))
        self.assertEqual(states.LeaseStatus.ERROR,
                         self.lease('/' + lease['id'])['status'])
        self.drive(self.end + SECOND, faults.FaultyTransport(SEED, 0))
        self.assertEqual({states.LeaseStatus.TERMINATED: 1},
                         self.assertFinished([lease['id']]))
        self.assertNothingOrphaned()

    def test_a_host_whose_move_failed_half_way_stays_in_a_pool(self):
        lease = self.host_lease()
        # Nova takes no host out of an aggregate.
        down = faults.FaultyTransport(
            SEED, rate=1.0, kinds=('503',),
            where=lambda method, url, body: 'remove_host' in (body or {}))
        self.drive(self.start + SECOND, down)
        shown = self.lease('/' + lease['id'])
        self.assertEqual(states.LeaseStatus.ERROR, shown['status'])
        self.assertIn('/action remove_host: 503', shown['status_reason'])
        # It joined the lease's aggregate before leaving the free pool.
        self.assertEqual([LEASED_HOST], self.aggregate(
            shown['reservations'][0]['id'])['hosts'])
        self.assertIn(LEASED_HOST, self.aggregate(FREEPOOL)['hosts'])
        self.delete_failed([lease['id']])
        self.assertNothingOrphaned()

    def test_actions_that_timed_out_after_nova_acted_are_not_repeated(self):
        leases = {lease['id']: lease for lease in (
            self.capacity_lease(),
            self.server_lease('vm-snapshot_delete', 'snapshot_delete'),
            self.server_lease('vm-shelve', 'shelve'))}
        # Each POST fails the first time: it times out after Nova acted
        # (the server's start, its snapshot...), or Nova answers that the
        # server is busy. (The capacity's flavor and group were made at
        # its creation: its start only looks for the flavor.)
        timeouts = faults.FaultyTransport(
            SEED, rate=1.0, kinds=('timeout', '409'),
            where=faults.first_time(
                lambda method, url, body: method == 'POST'))
        self.drive(self.start + SECOND, timeouts)
        for lease_id in leases:
            self.assertEqual(states.LeaseStatus.ACTIVE,
                             self.lease('/' + lease_id)['status'])
        self.drive(self.end + SECOND, timeouts)
        self.assertEqual({states.LeaseStatus.TERMINATED: 3},
                         self.assertFinished(leases))
        self.addDetail('figures', content.text_content(json.dumps(
            timeouts.summary())))
        self.assertGreater(timeouts.counts['timeout'], 0)
        self.assertGreater(timeouts.counts['409'], 0)
        self.assertOneSnapshot(self.one_server(leases, 'snapshot_delete'))
        self.assertNothingOrphaned()


class LeaseUpdatesUnderFaultsTest(FaultsTestCase):
    """Updates whose Nova side fails: the lease and Nova agree after each.

    An update that Nova's failures stopped is undone (409, the lease and
    Nova as before) or, when the undo failed too, leaves the lease in
    ERROR with the reason; one that went through shows in Nova. Half of
    the calls fail.
    """

    RATE = 0.5
    ROUNDS = 8

    def setUp(self):
        super().setUp()
        self.transport = faults.FaultyTransport(SEED, self.RATE)
        self.outcomes = collections.Counter()

    def update(self, lease_id, reservation, at):
        """Update one reservation of the lease at ``at``.

        Count the outcome.
        """
        service = self.lease_service(self.transport,
                                     clock_mod.ManualClock(at))
        try:
            service.update(context.get_admin_context(), lease_id,
                           {'reservations': [reservation]})
        except exceptions.Conflict as exc:
            self.assertIn('the lease is unchanged', str(exc))
            outcome = 'undone'
        except exceptions.PluginError:
            shown = self.lease('/' + lease_id)
            self.assertEqual(states.LeaseStatus.ERROR, shown['status'])
            self.assertIn('Updating the lease failed: ',
                          shown['status_reason'])
            outcome = 'error'
        else:
            outcome = 'updated'
        self.outcomes[outcome] += 1

    def assertFaultsMet(self):
        """Faults met the updates; the figures with their outcomes."""
        figures = dict(self.transport.summary(), outcomes=self.outcomes)
        self.addDetail('figures', content.text_content(json.dumps(figures)))
        self.assertGreater(figures['faults_total'], 0)

    def assertFlavorAgrees(self, lease_id, flavors):
        """The reserved server has the flavor its lease says."""
        [reservation] = self.lease('/' + lease_id)['reservations']
        server = self.admin_api.get_server(reservation['server_id'])
        self.assertEqual(flavors[reservation['flavor_id']],
                         (server['flavor']['vcpus'], server['flavor']['ram']))

    def assertHostsAgree(self, lease_id):
        """The lease's aggregate has the hosts its allocations say."""
        [reservation] = self.lease('/' + lease_id)['reservations']
        allocations = self.admin_lease_api(
            'GET', '/os-hosts/allocations?reservation_id=' +
            reservation['id'])['allocations']
        booked = {allocation['resource_id'] for allocation in allocations
                  if allocation['reservations']}
        names = {str(host['id']): host['hypervisor_hostname'] for host in
                 self.admin_lease_api('GET', '/os-hosts')['hosts']}
        self.assertEqual(sorted(names[host] for host in booked),
                         sorted(self.aggregate(reservation['id'])['hosts']))

    def finish(self, lease_id):
        self.drive(self.end + SECOND, faults.FaultyTransport(SEED, 0))
        self.assertFinished([lease_id])
        self.delete_failed([lease_id])
        self.assertNothingOrphaned()

    def test_a_reserved_servers_flavor_is_the_leases_after_each_update(
            self):
        small = self._create_flavor(memory_mb=1920, vcpu=1, disk=1,
                                    ephemeral=0)
        flavors = {self.flavor: (1, 3840), small: (1, 1920)}
        lease = self.server_lease('vm', 'delete')
        [reservation] = lease['reservations']
        for round_ in range(self.ROUNDS):
            if self.lease('/' + lease['id'])['status'] == \
                    states.LeaseStatus.ERROR:
                break
            self.update(lease['id'], {
                'id': reservation['id'],
                'flavor_id': (small, self.flavor)[round_ % 2]}, self.now)
            self.assertFlavorAgrees(lease['id'], flavors)
        self.assertFaultsMet()
        self.finish(lease['id'])

    def test_a_started_host_leases_aggregate_has_its_hosts_after_each_update(
            self):
        lease = self.lease_api('POST', '/leases', {
            'name': 'grows', 'start_date': nova_base.lease_date(self.start),
            'end_date': nova_base.lease_date(self.end),
            'reservations': [{'resource_type': 'physical:host', 'min': 1,
                              'max': 1}]})['lease']
        self.drive(self.start + SECOND, faults.FaultyTransport(SEED, 0))
        [reservation] = lease['reservations']
        for round_ in range(self.ROUNDS):
            shown = self.lease('/' + lease['id'])
            count = shown['reservations'][0]['max']
            if count == len(RESERVABLE) or \
                    shown['status'] == states.LeaseStatus.ERROR:
                break
            self.update(lease['id'], {'id': reservation['id'],
                                      'min': count + 1, 'max': count + 1},
                        self.start + (round_ + 2) * SECOND)
            self.assertHostsAgree(lease['id'])
        self.assertFaultsMet()
        self.finish(lease['id'])


class HostInventoryUnderFaultsTest(nova_base.NovaTestCase):
    """os-hosts create and delete while a third of Nova's answers fail.

    The inventory's Nova calls (the hypervisor, its zone, the free pool)
    go through :class:`tests.faults.FaultyTransport`. A call that fails
    for good is a ``PluginError`` (the lease API's 503), and asking again
    completes it: after the first success a host is reservable and in the
    free pool, or, once deleted, neither.
    """

    ATTEMPTS = 10

    def setUp(self):
        super().setUp()
        self.transport = faults.FaultyTransport(SEED, RATE)
        self.inventory = inventory.HostInventory(
            conf_mod.CONF.reservation, clock_mod.SYSTEM,
            compute.NovaClient(conf_mod.CONF, self.transport))
        self.ctx = context.get_admin_context()
        self.failures = collections.Counter()

    def until_done(self, action, *args):
        """``action(ctx, *args)``, asked again while it fails.

        Returns its result.
        """
        for _attempt in range(self.ATTEMPTS):
            try:
                return action(self.ctx, *args)
            except exceptions.PluginError:
                self.failures[action.__name__] += 1
        self.fail('%s failed %d times' % (action.__name__, self.ATTEMPTS))

    def reservable(self):
        """``{name: in the free pool}`` of the hosts the inventory has."""
        pool = self.aggregate(FREEPOOL)
        return {host['hypervisor_hostname']: host['service_name'] in (
            pool['hosts'] if pool else [])
            for host in self.inventory.list(self.ctx)}

    def test_hosts_added_and_removed_while_nova_fails_end_consistent(self):
        added = {}
        for name in RESERVABLE:
            added[name] = self.until_done(self.inventory.create,
                                          {'name': name})['id']
            self.assertEqual(True, self.reservable()[name])
        for name in RESERVABLE:
            self.until_done(self.inventory.delete, added[name])
            self.assertNotIn(name, self.reservable())
            self.assertNotIn(name, self.aggregate(FREEPOOL)['hosts'])
        figures = dict(self.transport.summary(),
                       failures=dict(self.failures))
        self.addDetail('figures', content.text_content(json.dumps(figures)))
        self.assertGreater(figures['faults_total'], 0)
