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

"""The calendar panels' pure helpers: rows of leases and hosts, requests.

:mod:`reservation_ext.calendars.timeline`,
:mod:`reservation_ext.calendars.load` and
:mod:`reservation_ext.calendars.search` need neither Django nor Horizon;
the pages themselves are tested in a browser (tests/e2e/test_calendar.py).
"""

import datetime

from reservation_ext.calendars import load
from reservation_ext.calendars import search
from reservation_ext.calendars import timeline
from tests import base

NOW = datetime.datetime(2030, 1, 10, 9, 0, tzinfo=datetime.timezone.utc)


def _lease(name, *reservations, **fields):
    """A lease view as GET /v1/leases gives it."""
    return dict({'id': name + '-id', 'name': name, 'status': 'PENDING',
                 'project_id': 'p1',
                 'start_date': '2030-01-10T09:00:00.000000',
                 'end_date': '2030-01-12T09:00:00.000000',
                 'reservations': list(reservations)}, **fields)


HOST = {'id': 'r-host', 'resource_type': 'physical:host', 'min': 2,
        'max': 2, 'resource_properties': '["=", "$gpu", "true"]'}
SERVER = {'id': 'r-server', 'resource_type': 'virtual:instance',
          'server_id': 'vm-1', 'vcpus': 1, 'memory_mb': 512, 'disk_gb': 1}
CAPACITY = {'id': 'r-capacity', 'resource_type': 'virtual:instance',
            'amount': 3, 'vcpus': 2, 'memory_mb': 1024, 'disk_gb': 10}


class DatesTest(base.TestCase):
    """The API's dates as the browser's."""

    def test_api_dates_become_iso_utc(self):
        self.assertEqual('2030-01-10T09:00:00Z',
                         timeline.iso_utc('2030-01-10T09:00:00.000000'))
        self.assertEqual('2030-01-10T09:00:00Z',
                         timeline.iso_utc('2030-01-10 09:00'))
        self.assertEqual('2030-01-10T09:00:05Z',
                         timeline.iso_utc('2030-01-10T09:00:05Z'))
        self.assertIsNone(timeline.iso_utc(None))

    def test_unknown_text_is_kept(self):
        self.assertEqual('soon', timeline.iso_utc('soon'))

    def test_parse_utc(self):
        self.assertEqual(NOW, timeline.parse_utc('2030-01-10T09:00:00.0'))


class LeaseRowsTest(base.TestCase):
    """The project calendar's rows."""

    def test_each_reservation_goes_to_its_kind_row(self):
        rows = timeline.lease_rows([
            _lease('hpc', HOST), _lease('mixed', SERVER, CAPACITY)])
        bars = {row['kind']: [bar['reservation_id'] for bar in row['bars']]
                for row in rows}
        self.assertEqual(['r-host'], bars['hosts'])
        self.assertEqual(['r-server'], bars['servers'])
        self.assertEqual(['r-capacity'], bars['capacity'])
        self.assertEqual([], bars['volumes'])

    def test_the_usual_rows_show_when_empty_the_rare_ones_do_not(self):
        kinds = [row['kind'] for row in timeline.lease_rows([])]
        self.assertEqual(list(timeline.ALWAYS_SHOWN), kinds)
        pool = {'id': 'r-pool', 'resource_type': 'storage:pool', 'min': 1,
                'max': 1}
        kinds = [row['kind'] for row in timeline.lease_rows(
            [_lease('pool', pool)])]
        self.assertIn('storage_pools', kinds)
        self.assertNotIn('other', kinds)

    def test_every_resource_type_has_its_row(self):
        for resource_type, kind in (
                ('physical:host', 'hosts'), ('flavor:instance', 'capacity'),
                ('virtual:volume', 'volumes'),
                ('virtual:floatingip', 'floatingips'),
                ('network', 'networks'), ('heat:stack', 'stacks'),
                ('storage:pool', 'storage_pools'),
                ('something:new', 'other')):
            self.assertEqual(kind, timeline.reservation_kind(
                {'resource_type': resource_type}))

    def test_a_bar_has_the_lease_and_its_window(self):
        [row] = [row for row in timeline.lease_rows([_lease('hpc', HOST)])
                 if row['kind'] == 'hosts']
        self.assertEqual([{
            'lease_id': 'hpc-id', 'lease': 'hpc', 'status': 'PENDING',
            'reservation_id': 'r-host', 'kind': 'hosts',
            'resource_type': 'physical:host',
            'summary': '2 host(s) ["=", "$gpu", "true"]',
            'start': '2030-01-10T09:00:00Z', 'end': '2030-01-12T09:00:00Z',
        }], row['bars'])

    def test_bars_are_sorted_by_start(self):
        later = _lease('later', HOST, start_date='2030-02-01T00:00:00.0')
        [row] = [row for row in timeline.lease_rows(
            [later, _lease('sooner', HOST)]) if row['kind'] == 'hosts']
        self.assertEqual(['sooner', 'later'],
                         [bar['lease'] for bar in row['bars']])

    def test_summaries(self):
        self.assertEqual('1 vCPU, 512 MB, 1 GB',
                         timeline.reservation_summary(SERVER))
        self.assertEqual('3 x (2 vCPU, 1024 MB, 10 GB)',
                         timeline.reservation_summary(CAPACITY))
        self.assertEqual('1-3 host(s)', timeline.reservation_summary(
            {'resource_type': 'physical:host', 'min': 1, 'max': 3}))
        self.assertEqual('20 GB', timeline.reservation_summary(
            {'resource_type': 'virtual:volume', 'size_gb': 20}))
        self.assertEqual('2 address(es)', timeline.reservation_summary(
            {'resource_type': 'virtual:floatingip', 'amount': 2}))


class HostRowsTest(base.TestCase):
    """The admin calendar's rows."""

    HOSTS = [
        {'id': '2', 'hypervisor_hostname': 'compute-2', 'power_state': 'on',
         'power_managed': True, 'failure': None, 'failed_at': None},
        {'id': '1', 'hypervisor_hostname': 'compute-1', 'power_state': 'off',
         'power_managed': True, 'failure': 'down',
         'failed_at': '2030-01-09T08:00:00.000000',
         'power_next_transition': 'on',
         'power_next_transition_at': '2030-01-10T08:50:00.000000'},
    ]
    ALLOCATIONS = [{'resource_id': '2', 'reservations': [
        {'id': 'r-host', 'lease_id': 'hpc-id',
         'start_date': '2030-01-10T09:00:00.000000',
         'end_date': '2030-01-12T09:00:00.000000'},
        {'id': 'r-unknown', 'lease_id': 'other-id',
         'start_date': '2030-01-05T09:00:00.000000',
         'end_date': '2030-01-06T09:00:00.000000'}]}]

    def rows(self):
        """The rows of HOSTS and ALLOCATIONS, with one known lease."""
        return timeline.host_rows(self.HOSTS, self.ALLOCATIONS,
                                  [_lease('hpc', HOST)])

    def test_a_row_per_host_by_name_with_its_bookings(self):
        rows = self.rows()
        self.assertEqual(['compute-1', 'compute-2'],
                         [row['host'] for row in rows])
        self.assertEqual([], rows[0]['bars'])
        self.assertEqual(['other-id', 'hpc'],
                         [bar['lease'] for bar in rows[1]['bars']])

    def test_seats_of_a_reservation_on_a_host_are_one_bar(self):
        seat = {'id': 'r-capacity', 'lease_id': 'mixed-id',
                'start_date': '2030-01-10T09:00:00.000000',
                'end_date': '2030-01-12T09:00:00.000000'}
        [row] = timeline.host_rows(
            self.HOSTS[:1], [{'resource_id': '2',
                              'reservations': [seat, dict(seat)]}],
            [_lease('mixed', CAPACITY)])
        [bar] = row['bars']
        self.assertEqual(('mixed', 'capacity'), (bar['lease'], bar['kind']))

    def test_a_known_lease_gives_its_name_project_and_kind(self):
        bar = self.rows()[1]['bars'][1]
        self.assertEqual(('hpc', 'p1', 'hosts', 'PENDING'), (
            bar['lease'], bar['project_id'], bar['kind'], bar['status']))
        unknown = self.rows()[1]['bars'][0]
        self.assertEqual(('other', None), (unknown['kind'],
                                           unknown['project_id']))

    def test_the_state_shows_power_and_failures(self):
        failed, healthy = self.rows()
        self.assertEqual('failed (down) since 2030-01-09 08:00 UTC',
                         failed['problem'])
        self.assertEqual(('off', 'on', '2030-01-10T08:50:00Z'), (
            failed['power_state'], failed['power_next_transition'],
            failed['power_next_transition_at']))
        self.assertIsNone(healthy['problem'])
        self.assertEqual('on', healthy['power_state'])

    def test_a_power_failure_is_a_problem(self):
        state = timeline.host_state({'id': 3, 'hypervisor_hostname': 'c3',
                                     'power_failure': 'no answer'})
        self.assertEqual('power failure: no answer', state['problem'])
        self.assertEqual('3', state['id'])


def _server(name, host='compute-1', **fields):
    """A server view as Nova gives it at microversion 2.100 to an admin."""
    return dict({'id': name + '-id', 'name': name, 'status': 'ACTIVE',
                 'tenant_id': 'p2', 'created': '2030-01-10T07:59:58Z',
                 'OS-SRV-USG:launched_at': '2030-01-10T08:00:00.000000',
                 'OS-EXT-SRV-ATTR:hypervisor_hostname': host,
                 'flavor': {'extra_specs': {}}, 'scheduler_hints': {},
                 'metadata': {}}, **fields)


def _server_lease(name, server, **fields):
    """The lease of a server booted with ``reserved=True``."""
    reservation = dict(SERVER, id='r-' + name, server_id=server['id'],
                       shared_pool=False, host='compute-1')
    return _lease(name, reservation, **dict({
        'status': 'ACTIVE', 'start_date': '2030-01-10T08:00:00.250000',
        'created_at': '2030-01-10 08:00:00',
        'end_date': '2030-01-10T12:00:00.000000'}, **fields))


SPOT = _server('spot', flavor={'extra_specs': {
    'reservation:preemptible': 'true'}})
HINTED = _server('hinted', scheduler_hints={'preemptible': ['True']})
GAP = _server('vm-gap')
GAP_LEASE = _server_lease('gap-run', GAP)


class LoadKindTest(base.TestCase):
    """Which servers are a host's load, and of which kind."""

    def kind(self, server, *leases):
        """The load kind of ``server`` among ``leases``."""
        return load.load_kind(server, load.server_leases(leases))

    def test_a_preemptible_flavor_or_hint_makes_a_preemptible_server(self):
        self.assertEqual(load.PREEMPTIBLE, self.kind(SPOT))
        self.assertEqual(load.PREEMPTIBLE, self.kind(HINTED))

    def test_a_reserved_flavor_is_never_preemptible(self):
        seat = _server('seat', flavor={'extra_specs': {
            'reservation:preemptible': 'true', 'reservation:id': 'r-1'}})
        self.assertIsNone(self.kind(seat))

    def test_a_server_leased_from_its_boot_in_a_gap_fills_it(self):
        self.assertEqual(load.GAP_FILLING, self.kind(GAP, GAP_LEASE))

    def test_a_start_in_the_second_the_lease_was_made_is_its_boot(self):
        lease = _server_lease('gap-run', GAP,
                              start_date='2030-01-10T08:00:00.999999')
        self.assertEqual(load.GAP_FILLING, self.kind(GAP, lease))

    def test_a_server_reserved_in_advance_fills_no_gap(self):
        later = _server_lease('later', GAP,
                              start_date='2030-01-10T08:01:00.000000')
        self.assertIsNone(self.kind(GAP, later))

    def test_a_server_in_the_shared_pool_fills_no_gap(self):
        lease = _server_lease('pool', GAP)
        lease['reservations'][0]['shared_pool'] = True
        self.assertIsNone(self.kind(GAP, lease))

    def test_a_server_on_a_capacity_seat_or_unleased_is_no_load(self):
        capacity = _lease('mixed', CAPACITY, start_date=GAP_LEASE[
            'start_date'], created_at=GAP_LEASE['created_at'])
        self.assertIsNone(self.kind(GAP, capacity))
        self.assertIsNone(self.kind(_server('plain'), GAP_LEASE))


class WithLoadTest(base.TestCase):
    """The admin calendar's rows with each host's load."""

    HOSTS = [{'id': '1', 'hypervisor_hostname': 'compute-1'},
             {'id': '2', 'hypervisor_hostname': 'compute-2'}]
    # GAP_LEASE's slice of compute-1, as the allocations list it.
    ALLOCATIONS = [{'resource_id': '1', 'reservations': [
        {'id': 'r-gap-run', 'lease_id': 'gap-run-id',
         'start_date': '2030-01-10T08:00:00.250000',
         'end_date': '2030-01-10T12:00:00.000000'}]}]

    def rows(self, servers):
        """The rows of HOSTS with GAP_LEASE and ``servers`` on them."""
        rows = timeline.host_rows(self.HOSTS, self.ALLOCATIONS, [GAP_LEASE])
        return load.with_load(rows, servers, [GAP_LEASE])

    def test_a_preemptible_server_runs_from_its_launch_with_no_end(self):
        first, _second = self.rows([SPOT])
        [bar] = [bar for bar in first['bars'] if 'server' in bar]
        self.assertEqual({
            'kind': 'preemptible', 'server': 'spot', 'server_id': 'spot-id',
            'server_status': 'ACTIVE', 'project_id': 'p2',
            'launched_at': '2030-01-10T08:00:00Z',
            'start': '2030-01-10T08:00:00Z', 'end': None}, bar)

    def test_a_server_not_launched_yet_starts_at_its_creation(self):
        building = dict(SPOT, **{'OS-SRV-USG:launched_at': None})
        [bar] = [bar for bar in self.rows([building])[0]['bars']
                 if 'server' in bar]
        self.assertEqual('2030-01-10T07:59:58Z', bar['start'])

    def test_a_gap_filling_server_takes_its_lease_slice_place(self):
        first, _second = self.rows([GAP])
        [bar] = first['bars']
        self.assertEqual(
            ('gap_filling', 'vm-gap', 'gap-run', 'r-gap-run', 'ACTIVE',
             '2030-01-10T08:00:00Z', '2030-01-10T12:00:00Z'),
            (bar['kind'], bar['server'], bar['lease'], bar['reservation_id'],
             bar['status'], bar['start'], bar['end']))

    def test_without_the_server_its_lease_slice_stays(self):
        [bar] = self.rows([])[0]['bars']
        self.assertEqual(('gap-run', 'servers'), (bar['lease'], bar['kind']))

    def test_each_host_counts_its_own_load(self):
        first, second = self.rows([
            SPOT, GAP, dict(HINTED, **{
                'OS-EXT-SRV-ATTR:hypervisor_hostname': 'compute-2'}),
            _server('plain'), _server('pool', host='compute-9'),
            dict(SPOT, id='shelved', **{
                'OS-EXT-SRV-ATTR:hypervisor_hostname': None})])
        self.assertEqual({'preemptible': 1, 'gap_filling': 1}, first['load'])
        self.assertEqual('1 preemptible, 1 gap-filling',
                         first['load_summary'])
        # The bounded bars before the open-ended ones.
        self.assertEqual(['vm-gap', 'spot'],
                         [bar['server'] for bar in first['bars']])
        self.assertEqual(['hinted'],
                         [bar['server'] for bar in second['bars']])
        self.assertEqual('1 preemptible', second['load_summary'])

    def test_the_leases_come_before_the_load(self):
        early = dict(SPOT, **{'OS-SRV-USG:launched_at': '2030-01-01T00:00'})
        [row] = load.with_load(timeline.host_rows(
            self.HOSTS[:1], self.ALLOCATIONS, [GAP_LEASE]), [early],
            [GAP_LEASE])
        self.assertEqual(['gap-run', None],
                         [bar.get('lease') for bar in row['bars']])

    def test_an_idle_host_has_no_load_summary(self):
        _first, second = self.rows([])
        self.assertEqual({'preemptible': 0, 'gap_filling': 0},
                         second['load'])
        self.assertIsNone(second['load_summary'])


class AnswersTest(base.TestCase):
    """Availability and proposals answers for the chart."""

    def test_availability_steps(self):
        self.assertEqual([{'start': '2030-01-10T09:00:00Z',
                           'end': '2030-01-20T09:00:00Z', 'amount': 1}],
                         timeline.availability_steps({'free': [
                             {'amount': 1,
                              'start': '2030-01-10T09:00:00.000000',
                              'end': '2030-01-20T09:00:00.000000'}]}))

    def test_proposal_slots_by_start(self):
        slots = timeline.proposal_slots([
            {'id': 'b', 'start_date': '2030-01-12T09:00:00.000000',
             'end_date': '2030-01-14T09:00:00.000000',
             'expires_at': '2026-11-25T17:07:34.084312'},
            {'id': 'a', 'start_date': '2030-01-10T09:00:00.000000',
             'end_date': '2030-01-12T09:00:00.000000',
             'expires_at': '2026-11-25T17:07:34.084312',
             'hosts': ['compute-2']}])
        self.assertEqual(['a', 'b'], [slot['id'] for slot in slots])
        self.assertEqual(['compute-2'], slots[0]['hosts'])
        self.assertEqual('2026-11-25T17:07:34Z', slots[0]['expires_at'])


class ReadFormTest(base.TestCase):
    """The request form as the API's questions."""

    def test_gpu_hosts_for_two_days(self):
        found = search.read_form({
            'resource_type': 'physical:host', 'count': '4',
            'resource_properties': '["=", "$gpu", "true"]',
            'duration': '2', 'duration_unit': 'd'}, NOW)
        self.assertEqual({
            'reservations': [{'resource_type': 'physical:host', 'min': 4,
                              'max': 4, 'resource_properties':
                              '["=", "$gpu", "true"]'}],
            'duration': '2d', 'not_before': 'now',
            'not_after': '2030-01-24 09:00', 'count': 5}, found.body)
        self.assertEqual([('resource_type', 'physical:host'),
                          ('start', 'now'), ('end', '2030-01-26 09:00'),
                          ('resource_properties', '["=", "$gpu", "true"]')],
                         found.query)
        self.assertEqual((4, 'hosts'), (found.needed, found.unit))

    def test_a_window_given(self):
        found = search.read_form({
            'resource_type': 'virtual:volume', 'size_gb': '30',
            'duration': '12', 'duration_unit': 'h',
            'not_before': '2030-02-01 00:00',
            'not_after': '2030-02-03 00:00', 'slots': '99'}, NOW)
        self.assertEqual('2030-02-01 00:00', found.body['not_before'])
        self.assertEqual(search.MAX_COUNT, found.body['count'])
        self.assertIn(('end', '2030-02-03 12:00'), found.query)
        self.assertEqual([{'resource_type': 'virtual:volume',
                           'size_gb': 30}], found.body['reservations'])
        self.assertEqual((30, 'GB'), (found.needed, found.unit))

    def test_servers_and_floating_ips(self):
        found = search.read_form({
            'resource_type': 'virtual:instance', 'vcpus': '2',
            'memory_mb': '2048', 'disk_gb': '0', 'duration': '1'}, NOW)
        self.assertEqual({'resource_type': 'virtual:instance', 'vcpus': 2,
                          'memory_mb': 2048, 'disk_gb': 0},
                         found.body['reservations'][0])
        self.assertIn(('memory_mb', '2048'), found.query)
        found = search.read_form({
            'resource_type': 'virtual:floatingip', 'network_id': 'net',
            'count': '2', 'duration': '30', 'duration_unit': 'm'}, NOW)
        self.assertEqual({'resource_type': 'virtual:floatingip',
                          'network_id': 'net', 'amount': 2},
                         found.body['reservations'][0])
        self.assertEqual('30m', found.body['duration'])
        self.assertIn(('network_id', 'net'), found.query)

    def test_bad_fields_are_named(self):
        good = {'resource_type': 'physical:host', 'count': '1',
                'duration': '1'}
        for change, field in (
                ({'resource_type': 'heat:stack'}, 'resource_type'),
                ({'count': 'four'}, 'count'),
                ({'count': '0'}, 'count'),
                ({'duration': ''}, 'duration'),
                ({'duration_unit': 'w'}, 'duration_unit'),
                ({'resource_properties': '[gpu'}, 'resource_properties'),
                ({'not_before': 'tomorrow'}, 'not_before'),
                ({'not_before': '2030-02-01 00:00',
                  'not_after': '2030-01-20 00:00'}, 'not_after')):
            error = self.assertRaises(timeline.RequestError,
                                      search.read_form,
                                      dict(good, **change), NOW)
            self.assertEqual(field, error.field)

    def test_floating_ips_need_a_network(self):
        error = self.assertRaises(
            timeline.RequestError, search.read_form,
            {'resource_type': 'virtual:floatingip', 'duration': '1'}, NOW)
        self.assertEqual('network_id', error.field)
