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

"""The ``openstack reservation`` commands python-blazarclient lacks.

``lease propose``, ``lease create-from-proposal``, ``availability
show``, ``network create|list|show|delete`` (the network segments,
as Chameleon's python-blazarclient has them) and ``storage pool
create|list|show|set|delete`` (the reservable Cinder storage pools, as
``host`` has the hosts), and ``storage lease create``, ``stack
create`` and ``stack propose``, the leases (and proposals) of types
python-blazarclient cannot send. Each command sends one request to the
lease API through the reservation client of
python-blazarclient (``client_manager.reservation``), whose errors
(``ERROR: <field>: <reason>``) the commands let through as the other
``openstack reservation`` commands do.
"""

import abc
import argparse
import json
import re
import urllib.parse

from osc_lib.command import command

# "key=value,key=value": a comma starts a new pair only before "key=",
# so that JSON values ('["=", "$gpu", "true"]') keep theirs.
_PAIRS = re.compile(r',(?=[A-Za-z_][A-Za-z0-9_]*=)')
_PROPOSAL_COLUMNS = ('id', 'start_date', 'end_date', 'expires_at')


def parse_reservation(text):
    """A ``--reservation key=value,...`` as the dict the API takes.

    Values that are JSON lists or objects (``hosts=["a","b"]``) are
    decoded; the others stay text, which the API parses.
    """
    reservation = {}
    for pair in _PAIRS.split(text):
        key, sep, value = pair.partition('=')
        if not sep or not key:
            raise ValueError('expected key=value pairs separated by commas, '
                             'got %r' % pair)
        reservation[key.strip()] = _decoded(value)
    return reservation


def _decoded(value):
    if value[:1] in ('[', '{'):
        try:
            return json.loads(value)
        except ValueError:
            pass
    return value


def _lease_api(app):
    """The lease API's JSON adapter of python-blazarclient's client."""
    return app.client_manager.reservation.lease.request_manager


class ProposeLease(command.Lister):
    """Ask for schedule proposals: windows held a while for a lease."""

    def get_parser(self, prog_name):
        parser = super().get_parser(prog_name)
        parser.add_argument(
            '--reservation', metavar='<key=value,...>', action='append',
            required=True, dest='reservations', type=_reservation_argument,
            help='A reservation of the lease, as for "lease create": '
                 'resource_type=physical:host,min=4,max=4,'
                 'resource_properties=\'["=", "$gpu", "true"]\'; '
                 'repeat for several.')
        _add_window_arguments(parser)
        return parser

    def take_action(self, parsed_args):
        return _propose(self.app, parsed_args.reservations, parsed_args)


def _add_window_arguments(parser):
    """Add the arguments of a proposals request's windows."""
    parser.add_argument('--duration', required=True,
                        help='How long the lease lasts: "2d", "12h", '
                             '"30m" or seconds.')
    parser.add_argument('--not-before', metavar='<date>',
                        help='The earliest start (default: now).')
    parser.add_argument('--not-after', metavar='<date>',
                        help='The latest start.')
    parser.add_argument('--count', type=int,
                        help='How many proposals (default 5).')


def _propose(app, reservations, parsed_args):
    """Ask for the proposals of ``reservations``; return the table."""
    body = {'reservations': reservations, 'duration': parsed_args.duration}
    for key in ('not_before', 'not_after', 'count'):
        if getattr(parsed_args, key) is not None:
            body[key] = getattr(parsed_args, key)
    _resp, answer = _lease_api(app).post('/leases/proposals', body=body)
    proposals = answer['proposals']
    columns = _PROPOSAL_COLUMNS + (
        ('hosts',) if any('hosts' in p for p in proposals) else ())
    return columns, [
        tuple(_cell(proposal.get(column)) for column in columns)
        for proposal in proposals]


class CreateLeaseFromProposal(command.ShowOne):
    """Create a lease from a schedule proposal: its window, its hosts."""

    def get_parser(self, prog_name):
        parser = super().get_parser(prog_name)
        parser.add_argument('proposal_id', metavar='<proposal id>',
                            help='A proposal of "lease propose".')
        parser.add_argument('name', metavar='<name>',
                            help='The name of the lease.')
        return parser

    def take_action(self, parsed_args):
        _resp, answer = _lease_api(self.app).post('/leases', body={
            'name': parsed_args.name,
            'proposal_id': parsed_args.proposal_id})
        return _lease_shown(answer['lease'])


class ShowAvailability(command.Lister):
    """Show how much matching reservable capacity is free, and when."""

    def get_parser(self, prog_name):
        parser = super().get_parser(prog_name)
        add_availability_arguments(parser)
        return parser

    def take_action(self, parsed_args):
        availability = read_availability(self.app, parsed_args)
        if parsed_args.per_host:
            return ('host', 'start', 'end'), [
                (host['host'], step['start'], step['end'])
                for host in availability.get('hosts', [])
                for step in host['free']]
        return ('start', 'end', 'free (%s)' % availability['unit']), [
            (step['start'], step['end'], step['amount'])
            for step in availability['free']]


def add_availability_arguments(parser):
    """Add the arguments of an availability query."""
    parser.add_argument(
        '--resource-type', required=True,
        help='physical:host (hosts free), virtual:instance (servers '
             'of --field vcpus=, memory_mb=, disk_gb= that fit; with '
             'affinity= or amount=, as a capacity reservation places '
             'them), flavor:instance (servers of --field flavor_id=), '
             'virtual:volume (GB free), virtual:floatingip '
             '(addresses of --field network_id=<id> free), network '
             '(segments free), storage:pool (pools free) or heat:stack '
             '(copies of --field servers=<flavor>:<n>,... '
             '--field volume_gb=<n> --field floating_ips=<network>:<n> '
             'that fit).')
    parser.add_argument('--start', default='now', metavar='<date>',
                        help='From (default: now).')
    parser.add_argument('--end', required=True, metavar='<date>',
                        help='To.')
    parser.add_argument('--resource-properties', metavar='<query>',
                        help='Which hosts, as for a host reservation.')
    parser.add_argument(
        '--field', metavar='<key=value>', action='append', default=[],
        type=_field_argument,
        help='Another field of a reservation of the type (hosts, '
             'availability_zone, vcpus, memory_mb, disk_gb, ...); '
             'repeat for several.')
    parser.add_argument(
        '--per-host', action='store_true',
        help='Each host\'s free periods (who may list the reservable '
             'hosts only).')


def read_availability(app, parsed_args):
    """The ``availability`` the lease API answers for ``parsed_args``."""
    query = [('resource_type', parsed_args.resource_type),
             ('start', parsed_args.start), ('end', parsed_args.end)]
    if parsed_args.resource_properties:
        query.append(('resource_properties',
                      parsed_args.resource_properties))
    query += parsed_args.field
    _resp, answer = _lease_api(app).get(
        '/availability?' + urllib.parse.urlencode(query))
    return answer['availability']


class CreateNetwork(command.ShowOne):
    """Register a reservable network segment (VLAN or VXLAN; admin)."""

    def get_parser(self, prog_name):
        parser = super().get_parser(prog_name)
        parser.add_argument('--network-type', required=True,
                            choices=('vlan', 'vxlan'),
                            help='The type of the segment.')
        parser.add_argument('--physical-network', metavar='<name>',
                            help='The physical network of a VLAN segment.')
        parser.add_argument('--segment', required=True, dest='segment_id',
                            metavar='<id>',
                            help='The VLAN id, or the VXLAN VNI.')
        parser.add_argument(
            '--extra', metavar='<key=value>', action='append', default=[],
            type=_field_argument,
            help='An extra capability of the segment; repeat for several.')
        return parser

    def take_action(self, parsed_args):
        body = dict(parsed_args.extra, network_type=parsed_args.network_type,
                    physical_network=parsed_args.physical_network,
                    segment_id=parsed_args.segment_id)
        _resp, answer = _lease_api(self.app).post('/networks', body=body)
        return _shown(answer['network'])


class ListNetworks(command.Lister):
    """List the reservable network segments (admin)."""

    def take_action(self, parsed_args):
        _resp, answer = _lease_api(self.app).get('/networks')
        columns = ('id', 'network_type', 'physical_network', 'segment_id')
        return columns, [tuple(network.get(column) for column in columns)
                         for network in answer['networks']]


class _OneNetwork:
    """What the commands on one network segment share: its id."""

    def get_parser(self, prog_name):
        parser = super().get_parser(prog_name)
        parser.add_argument('network_id', metavar='<id>',
                            help='The id of the segment.')
        return parser

    @staticmethod
    def _path(parsed_args):
        return '/networks/%s' % urllib.parse.quote(parsed_args.network_id,
                                                   safe='')


class ShowNetwork(_OneNetwork, command.ShowOne):
    """Show a reservable network segment (admin)."""

    def take_action(self, parsed_args):
        _resp, answer = _lease_api(self.app).get(self._path(parsed_args))
        return _shown(answer['network'])


class DeleteNetwork(_OneNetwork, command.Command):
    """Remove a reservable network segment no lease holds (admin)."""

    def take_action(self, parsed_args):
        _lease_api(self.app).delete(self._path(parsed_args))
        self.app.stdout.write('Deleted network segment %s\n'
                              % parsed_args.network_id)


class CreateStoragePool(command.ShowOne):
    """Register a Cinder storage pool as reservable (admin)."""

    def get_parser(self, prog_name):
        parser = super().get_parser(prog_name)
        parser.add_argument(
            'name', metavar='<name>',
            help='The pool as Cinder reports it: host@backend#pool '
                 '("openstack volume backend pool list" lists them).')
        parser.add_argument(
            '--extra', metavar='<key=value>', action='append', default=[],
            type=_field_argument,
            help='An extra capability of the pool; repeat for several.')
        return parser

    def take_action(self, parsed_args):
        body = dict(parsed_args.extra, name=parsed_args.name)
        _resp, answer = _lease_api(self.app).post('/storage-pools', body=body)
        return _shown(answer['storage_pool'])


class ListStoragePools(command.Lister):
    """List the reservable storage pools (admin)."""

    def take_action(self, parsed_args):
        _resp, answer = _lease_api(self.app).get('/storage-pools')
        columns = ('id', 'name', 'backend', 'total_capacity_gb')
        return columns, [tuple(pool.get(column) for column in columns)
                         for pool in answer['storage_pools']]


class _OneStoragePool:
    """What the commands on one storage pool share: its id or name."""

    def get_parser(self, prog_name):
        parser = super().get_parser(prog_name)
        parser.add_argument('pool', metavar='<pool>',
                            help='The id or the name of the pool.')
        return parser

    @staticmethod
    def _path(parsed_args):
        return '/storage-pools/%s' % urllib.parse.quote(parsed_args.pool,
                                                        safe='')


class ShowStoragePool(_OneStoragePool, command.ShowOne):
    """Show a reservable storage pool (admin)."""

    def take_action(self, parsed_args):
        _resp, answer = _lease_api(self.app).get(self._path(parsed_args))
        return _shown(answer['storage_pool'])


class SetStoragePool(_OneStoragePool, command.Command):
    """Set extra capabilities of a reservable storage pool (admin)."""

    def get_parser(self, prog_name):
        parser = super().get_parser(prog_name)
        parser.add_argument(
            '--extra', metavar='<key=value>', action='append', required=True,
            type=_field_argument,
            help='An extra capability to set; repeat for several.')
        return parser

    def take_action(self, parsed_args):
        _lease_api(self.app).put(self._path(parsed_args),
                                 body=dict(parsed_args.extra))
        self.app.stdout.write('Updated storage pool %s\n' % parsed_args.pool)


class DeleteStoragePool(_OneStoragePool, command.Command):
    """Remove a reservable storage pool (admin)."""

    def take_action(self, parsed_args):
        _lease_api(self.app).delete(self._path(parsed_args))
        self.app.stdout.write('Deleted storage pool %s\n' % parsed_args.pool)


class _CreateLease(command.ShowOne):
    """A lease of one reservation, the type's command names its fields.

    python-blazarclient's "lease create --reservation" cannot send a type
    it does not know with text values.
    """

    def get_parser(self, prog_name):
        parser = super().get_parser(prog_name)
        parser.add_argument('name', metavar='<name>',
                            help='The name of the lease.')
        parser.add_argument('--start-date', metavar='<date>', default='now',
                            help='"YYYY-MM-DD HH:MM" (UTC; default now).')
        parser.add_argument('--end-date', metavar='<date>', required=True,
                            help='"YYYY-MM-DD HH:MM" (UTC).')
        return parser

    @abc.abstractmethod
    def reservation(self, parsed_args):
        """Return the lease's reservation, as the lease API takes it."""

    def take_action(self, parsed_args):
        _resp, answer = _lease_api(self.app).post('/leases', body={
            'name': parsed_args.name, 'start_date': parsed_args.start_date,
            'end_date': parsed_args.end_date, 'events': [],
            'reservations': [self.reservation(parsed_args)]})
        return _lease_shown(answer['lease'])


class CreateStorageLease(_CreateLease):
    """Create a lease of whole storage pools (a storage:pool reservation)."""

    def get_parser(self, prog_name):
        parser = super().get_parser(prog_name)
        parser.add_argument('--min', type=int, default=1,
                            help='The fewest pools the lease may hold '
                                 '(default 1).')
        parser.add_argument('--max', type=int,
                            help='The most pools it holds when they are '
                                 'free (default: --min).')
        parser.add_argument(
            '--pool-properties', metavar='<query>',
            help='Which pools, by what Cinder reported for them: '
                 '\'["=", "$volume_backend_name", "ssd"]\'.')
        parser.add_argument(
            '--resource-properties', metavar='<query>',
            help='Which pools, by their extra capabilities: '
                 '\'["=", "$tier", "gold"]\'.')
        parser.add_argument(
            '--on-end', choices=('release', 'delete_volumes'),
            help='What the end does to the volumes on the pools (default '
                 'release: they stay).')
        return parser

    def reservation(self, parsed_args):
        """Return the storage:pool reservation of the arguments."""
        reservation = {'resource_type': 'storage:pool',
                       'min': parsed_args.min,
                       'max': parsed_args.max or parsed_args.min}
        for key in ('pool_properties', 'resource_properties', 'on_end'):
            if getattr(parsed_args, key) is not None:
                reservation[key] = getattr(parsed_args, key)
        return reservation


class CreateStackLease(_CreateLease):
    """Create a lease of a Heat stack (a heat:stack reservation).

    Its servers, volumes and floating IPs are booked now; the stack is
    made at the lease's start, in the lease's project.
    """

    def get_parser(self, prog_name):
        parser = super().get_parser(prog_name)
        _add_stack_arguments(parser)
        return parser

    def reservation(self, parsed_args):
        """Return the heat:stack reservation of the arguments."""
        return _stack_reservation(parsed_args)


class ProposeStack(command.Lister):
    """Ask when a Heat stack can be had: windows held a while for it.

    Each proposal holds all the stack's servers, volume GB and floating
    IPs for its window; "lease create-from-proposal" makes the lease.
    """

    def get_parser(self, prog_name):
        parser = super().get_parser(prog_name)
        _add_stack_arguments(parser)
        _add_window_arguments(parser)
        return parser

    def take_action(self, parsed_args):
        return _propose(self.app, [_stack_reservation(parsed_args)],
                        parsed_args)


def _add_stack_arguments(parser):
    """Add the arguments of a heat:stack reservation."""
    parser.add_argument('--template', metavar='<file>', required=True,
                        type=argparse.FileType('r'),
                        help='The stack\'s template (HOT, YAML).')
    parser.add_argument('--parameter', metavar='<key=value>',
                        action='append', default=[],
                        type=_field_argument,
                        help='A template parameter (repeatable).')
    parser.add_argument('--environment', metavar='<file>',
                        type=argparse.FileType('r'),
                        help='A Heat environment (YAML).')
    parser.add_argument(
        '--on-end', choices=('delete', 'snapshot_delete'),
        help='What the lease\'s end does to the stack: delete it '
             '(default), or image its servers and volumes first.')


def _stack_reservation(parsed_args):
    """Return the heat:stack reservation of the arguments."""
    with parsed_args.template as template:
        reservation = {'resource_type': 'heat:stack',
                       'template': template.read(),
                       'parameters': dict(parsed_args.parameter)}
    if parsed_args.environment is not None:
        with parsed_args.environment as environment:
            reservation['environment'] = environment.read()
    if parsed_args.on_end is not None:
        reservation['on_end'] = parsed_args.on_end
    return reservation


def _lease_shown(lease):
    """A lease as python-blazarclient shows it: lists indented."""
    columns = sorted(lease)
    return columns, [_cell(lease[column], indent=4) for column in columns]


def _shown(view):
    columns = sorted(view)
    return columns, [_cell(view[column]) for column in columns]


def _reservation_argument(text):
    try:
        return parse_reservation(text)
    except ValueError as exc:
        raise argparse.ArgumentTypeError(str(exc))


def _field_argument(text):
    key, sep, value = text.partition('=')
    if not sep or not key:
        raise argparse.ArgumentTypeError('expected key=value, got %r' % text)
    return key, value


def _cell(value, indent=None):
    """A value as a table shows it: lists and dicts as JSON."""
    if isinstance(value, (list, dict)):
        return json.dumps(value, indent=indent)
    return value
