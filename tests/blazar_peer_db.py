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

"""Write a Blazar 18 database with Blazar's own code, for the import tests.

Run with the peer venv's python (``tools/peer-venv.sh``), not ours::

    .peer-venv/bin/python tests/blazar_peer_db.py --url sqlite:///F \\
        --now 2030-01-01T00:00:00 [--stamp REVISION] [--project ID] \\
        [--started-instances] [--floating-network ID --floating-subnet ID] \\
        [--only LEASE-NAME ...]

Blazar makes the schema (``blazar.db.api.setup_db``: its models, as its
own tests do on SQLite, where its migrations do not run), the rows go in
through ``blazar.db.api`` as Blazar's manager writes them, and
``blazar-db-manage stamp`` records the schema's revision (Blazar's head by
default). Three hosts named as the Nova harness's computes, with extra
capabilities (one private), and leases around ``--now``: a host lease
that has not started, one that runs, one that ended, an instance
reservation (``amount`` servers; started with ``--started-instances``),
two leases of one project with the same name (Blazar allows it), a
lease caught STARTING; four registered floating IPs (one not
reservable) with a floating IP lease that has not started (two
addresses, one of them required) and one that runs, and a
``flavor:instance`` lease (two servers of a flavor with ephemeral disk
and swap). Those start (and the running one ends) after the others'
events, so that an engine run until the instance lease's start leaves
them be;
``--floating-network`` and ``--floating-subnet`` name a real Neutron's,
and ``--only`` writes only the leases named.
Prints what it made as one JSON object.
"""

import argparse
import datetime
import json
import os
import subprocess
import sys
import tempfile
import warnings

from oslo_config import cfg

import blazar.config  # noqa: F401 (Blazar's options)
from blazar.db import api as db_api

HOUR = datetime.timedelta(hours=1)
DAY = datetime.timedelta(days=1)
PROJECT = 'a0b1c2d3e4f5a6b7c8d9e0f1a2b3c4d5'
USER = 'f0e1d2c3b4a5f6e7d8c9b0a1f2e3d4c5'
TRUST = '1234567890abcdef1234567890abcdef'
FLOATING_IPS = ('172.24.4.10', '172.24.4.11', '172.24.4.12', '172.24.4.13')
# A flavor as python-novaclient's to_dict() gives it, with its extra specs.
SOURCE_FLAVOR = {
    'id': 'f1a2b3c4', 'name': 'm1.eph', 'vcpus': 2, 'ram': 1024,
    'disk': 10, 'OS-FLV-EXT-DATA:ephemeral': 5, 'swap': 512,
    'OS-FLV-DISABLED:disabled': False, 'os-flavor-access:is_public': True,
    'rxtx_factor': 1.0, 'links': [],
    'extra_specs': {'hw:cpu_policy': 'shared'}}


def parse_args(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split('\n')[0])
    parser.add_argument('--url', required=True, help='an empty database')
    parser.add_argument('--now', required=True, type=datetime.datetime
                        .fromisoformat, help='the leases\' "now" (UTC)')
    parser.add_argument('--stamp', default='head',
                        help='the alembic revision to stamp')
    parser.add_argument('--project', default=PROJECT,
                        help="the leases' project id")
    parser.add_argument('--started-instances', action='store_true',
                        help='the instance reservation\'s lease ACTIVE, as '
                        "Blazar's manager leaves it once started")
    parser.add_argument('--floating-network', default='ext-net',
                        help="the floating IPs' network id")
    parser.add_argument('--floating-subnet', default='ext-subnet',
                        help="the floating IPs' subnet id")
    parser.add_argument('--only', nargs='+', metavar='LEASE-NAME',
                        help='write only these leases (all by default)')
    return parser.parse_args(argv)


def add_hosts():
    """Three hosts with extra capabilities; ``{name: Blazar id}``."""
    ids = {}
    for number, gpu in ((1, 'false'), (2, 'true'), (3, 'true')):
        name = 'compute-%d' % number
        host = db_api.host_create({
            'vcpus': 10, 'cpu_info': json.dumps({'arch': 'x86_64'}),
            'hypervisor_type': 'QEMU', 'hypervisor_version': 8002000,
            'hypervisor_hostname': name, 'service_name': name,
            'memory_mb': 8192, 'local_gb': 1028,
            'availability_zone': 'nova', 'trust_id': TRUST})
        ids[name] = host['id']
        for key, value in (('gpu', gpu), ('rack', 'r%d' % number)):
            db_api.host_extra_capability_create({
                'computehost_id': host['id'], 'property_name': key,
                'capability_value': value})
    db_api.resource_property_update('physical:host', 'rack',
                                    {'private': True})
    return ids


def add_lease(project, name, start, end, status, events, reservations,
              before_end=None):
    """A lease with its events; ``events`` maps each type to its status."""
    times = {'start_lease': start, 'end_lease': end,
             'before_end_lease': before_end or end - HOUR}
    return db_api.lease_create({
        'name': name, 'user_id': USER, 'project_id': project,
        'start_date': start, 'end_date': end, 'trust_id': TRUST,
        'status': status,
        'reservations': reservations,
        'events': [{'event_type': kind, 'time': times[kind],
                    'status': event_status}
                   for kind, event_status in events.items()]})


def _on_hosts(reservation, request, hosts):
    """Link ``reservation`` to its ``request``, allocate ``hosts``; its id."""
    db_api.reservation_update(reservation['id'],
                              {'resource_id': request['id']})
    for host_id in hosts:
        db_api.host_allocation_create({'compute_host_id': host_id,
                                       'reservation_id': reservation['id']})
    return reservation['id']


def host_reservation(lease, hosts, before_end='default'):
    """The lease's physical:host request and its hosts' allocations."""
    reservation = lease['reservations'][0]
    request = db_api.host_reservation_create({
        'reservation_id': reservation['id'], 'aggregate_id': 17,
        'count_range': '%d-%d' % (len(hosts), len(hosts)),
        'hypervisor_properties': '["=", "$hypervisor_type", "QEMU"]',
        'resource_properties': '["=", "$gpu", "true"]',
        'before_end': before_end})
    return _on_hosts(reservation, request, hosts)


def instance_reservation(lease, hosts):
    """The lease's virtual:instance request, one allocation a server."""
    reservation = lease['reservations'][0]
    request = db_api.instance_reservation_create({
        'reservation_id': reservation['id'], 'vcpus': 1, 'memory_mb': 512,
        'disk_gb': 1, 'amount': len(hosts), 'affinity': None,
        'resource_properties': ''})
    # What Blazar's instance plugin records once Nova made them.
    db_api.instance_reservation_update(request['id'], {
        'flavor_id': reservation['id'], 'aggregate_id': 23,
        'server_group_id': None})
    return _on_hosts(reservation, request, hosts)


def add_floatingips(network, subnet):
    """Four addresses, the last not reservable: ``{address: id}``."""
    return {address: db_api.floatingip_create({
        'floating_network_id': network, 'subnet_id': subnet,
        'floating_ip_address': address,
        'reservable': address != FLOATING_IPS[-1]})['id']
        for address in FLOATING_IPS}


def floatingip_reservation(lease, network, addresses, required=()):
    """The lease's virtual:floatingip request, as Blazar's plugin writes it.

    ``addresses``: the ids of the addresses booked (the amount).
    """
    reservation = lease['reservations'][0]
    request = db_api.fip_reservation_create({
        'reservation_id': reservation['id'],
        'network_id': network, 'amount': len(addresses)})
    for address in required:
        db_api.required_fip_create({'address': address,
                                    'floatingip_reservation_id':
                                    request['id']})
    db_api.reservation_update(reservation['id'],
                              {'resource_id': request['id']})
    for address_id in addresses:
        db_api.fip_allocation_create({'floatingip_id': address_id,
                                      'reservation_id': reservation['id']})
    return reservation['id']


def flavor_reservation(lease, hosts):
    """The lease's flavor:instance request, as Blazar's flavor plugin has it.

    The source flavor, as Nova showed it with its extra specs, is the
    request's ``resource_properties``; one allocation a server.
    """
    reservation = lease['reservations'][0]
    request = db_api.instance_reservation_create({
        'reservation_id': reservation['id'],
        'vcpus': SOURCE_FLAVOR['vcpus'], 'memory_mb': SOURCE_FLAVOR['ram'],
        'disk_gb': SOURCE_FLAVOR['disk'], 'amount': len(hosts),
        'affinity': None, 'resource_properties': json.dumps(SOURCE_FLAVOR)})
    db_api.instance_reservation_update(request['id'], {
        'flavor_id': reservation['id'], 'aggregate_id': 29})
    return _on_hosts(reservation, request, hosts)


def _reservation(resource_type, status):
    return [{'resource_type': resource_type, 'status': status}]


UNDONE = {'start_lease': 'UNDONE', 'before_end_lease': 'UNDONE',
          'end_lease': 'UNDONE'}
STARTED = dict(UNDONE, start_lease='DONE')
ENDED = {kind: 'DONE' for kind in UNDONE}


def add_leases(args, hosts, fips):
    """The leases (module doc); ``{name: {lease, reservation}}``."""
    project, now = args.project, args.now
    made = {}

    def add(name, kind, status, events, window, write, **kwargs):
        if args.only and name not in args.only:
            return
        reservations = _reservation(
            kind, kwargs.pop('reservation_status', 'pending'))
        lease = add_lease(project, name, now + window[0], now + window[1],
                          status, events, reservations, **kwargs)
        made.setdefault(name, []).append(
            {'lease': lease['id'], 'reservation': write(lease)})

    both = [hosts['compute-2'], hosts['compute-3']]
    add('pending-hosts', 'physical:host', 'PENDING', UNDONE,
        (HOUR, DAY), lambda lease: host_reservation(lease, both),
        before_end=now + DAY - 2 * HOUR)
    add('active-hosts', 'physical:host', 'ACTIVE', STARTED,
        (-HOUR, 2 * DAY),
        lambda lease: host_reservation(lease, [hosts['compute-1']],
                                       before_end='snapshot'),
        reservation_status='active')
    add('ended-hosts', 'physical:host', 'TERMINATED', ENDED,
        (-3 * DAY, -2 * DAY),
        lambda lease: host_reservation(lease, [hosts['compute-2']]),
        reservation_status='deleted')
    started = args.started_instances
    add('instances', 'virtual:instance', 'ACTIVE' if started else 'PENDING',
        STARTED if started else UNDONE, (3 * DAY, 4 * DAY),
        lambda lease: instance_reservation(lease, [hosts['compute-2']] * 2),
        reservation_status='active' if started else 'pending')
    for offset in (5, 7):
        add('twin', 'physical:host', 'PENDING', UNDONE,
            (offset * DAY, (offset + 1) * DAY),
            lambda lease: host_reservation(lease, [hosts['compute-3']]))
    add('starting', 'physical:host', 'STARTING',
        dict(UNDONE, start_lease='IN_PROGRESS'), (10 * DAY, 11 * DAY),
        lambda lease: host_reservation(lease, [hosts['compute-1']]))
    add_later_leases(add, args.floating_network, hosts, fips)
    return made


def add_later_leases(add, network, hosts, fips):
    """The floating IP and flavor:instance leases (module doc)."""
    add('pending-floating', 'virtual:floatingip', 'PENDING', UNDONE,
        (12 * DAY, 13 * DAY),
        lambda lease: floatingip_reservation(
            lease, network, [fips[address] for address in FLOATING_IPS[:2]],
            required=FLOATING_IPS[:1]))
    add('active-floating', 'virtual:floatingip', 'ACTIVE', STARTED,
        (-HOUR, 20 * DAY),
        lambda lease: floatingip_reservation(lease, network,
                                             [fips[FLOATING_IPS[2]]]),
        reservation_status='active')
    add('flavor-instances', 'flavor:instance', 'PENDING', UNDONE,
        (14 * DAY, 15 * DAY),
        lambda lease: flavor_reservation(lease, [hosts['compute-3']] * 2))


def stamp(url, revision):
    """Record the schema's revision with Blazar's own blazar-db-manage."""
    with tempfile.NamedTemporaryFile('w', suffix='.conf') as config:
        config.write('[database]\nconnection = %s\n' % url)
        config.flush()
        subprocess.run([os.path.join(os.path.dirname(sys.executable),
                                     'blazar-db-manage'),
                        '--config-file', config.name, 'stamp', revision],
                       check=True, capture_output=True)


def main(argv=None):
    args = parse_args(argv)
    warnings.filterwarnings('ignore')
    cfg.CONF([], project='blazar', default_config_files=[])
    cfg.CONF.set_override('connection', args.url, group='database')
    db_api.setup_db()
    hosts = add_hosts()
    fips = add_floatingips(args.floating_network, args.floating_subnet)
    leases = add_leases(args, hosts, fips)
    stamp(args.url, args.stamp)
    print(json.dumps({'hosts': hosts, 'floatingips': fips,
                      'leases': leases}))


if __name__ == '__main__':
    main()
