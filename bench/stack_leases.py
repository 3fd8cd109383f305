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

"""Stack leases in the sandbox: the create's time, and the starts' lateness.

    python bench/stack_leases.py [--hosts 1000] [--leases 10000]
                                 [--requests 30] [--warmup 3]
                                 [--starts 4] [--seed 42]

It starts a ``reservation-sandbox`` (4 fake compute hosts, Heat, with
``volume_reservable_gb`` large enough for every request), raises the
demo project's Nova and Cinder quotas for the stacks (each create checks
them over its window) and measures:

starts
    first, with the sandbox's own hosts reservable: ``--starts`` leases
    of the user guide's ``reserved-pair.yaml`` stack (two servers, two
    volumes, two floating IPs) starting at the same minute; for each,
    how late it is ACTIVE after its start date (the stack made), as the
    demo user sees it polling every 0.2 s (``lateness_*``), and how late
    Heat began its stack (its ``creation_time``, to the second:
    ``stack_begun_*``).
creates
    then, with H reservable hosts and A bookings loaded into the leases
    DB as ``bench/instance_leases.py`` loads them (each booking a lease)
    and 80 reservable floating IPs, as the demo user, ``--requests``
    creates (after ``--warmup`` untimed) of a lease of one stack of 20
    servers (a resource group of m1.tiny), 20 volumes of 1 GB (a
    resource group) and 5 floating IPs, for a day at a random minute of
    the bookings' month: ``POST /reservation/v1/leases`` timed by the
    client. Beside each, the parts of it that are Heat's and Keystone's:
    Heat's preview of the same stack (``POST /stacks/preview``, as the
    demo user) and the making and deleting of a trust.

JSON lines: ``stack_create`` (``p50_ms``, ``p90_ms``, ``min_ms``,
``max_ms``, ``statuses``, ``valid``), ``heat_preview`` and ``trust``
(the same timings) and ``rest_p50_ms`` (the create's p50 minus the
preview's and the trust's: ours), and ``stack_start`` (``lateness_p50_s``,
``lateness_max_s``, ``valid``). Blazar has no stack reservations: there
is no peer figure. Nothing is asserted.
"""

import argparse
import datetime
import json
import os
import random
import sys
import time

import sqlalchemy as sa

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(
    __file__))))

from bench import instance_leases  # noqa: E402
from harness import sandbox as harness_sandbox  # noqa: E402
from reservation_ext.sandbox import config as sandbox_config  # noqa: E402

TEMPLATES = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(
    __file__))), 'doc', 'source', 'user', 'heat')
SERVERS, VOLUMES, ADDRESSES = 20, 20, 5
# Outside public's allocation pool (.100 to .199).
FLOATING_IPS = ['172.24.4.%d' % n for n in range(10, 90)]
RESERVABLE_GB = 1000000
POLL_INTERVAL = 0.2
START_TIMEOUT = 300
TARGET_P50_MS = 1000
# The demo project's quotas during the creates: room for every stack of
# them, even where their windows overlap.
COMPUTE_QUOTAS = {'instances': 1000, 'cores': 4000, 'ram': 8192000}
VOLUME_QUOTAS = {'volumes': 1000, 'gigabytes': 100000}


def big_template():
    """The text of the 20-server, 20-volume, 5-address stack."""
    group = {'type': 'OS::Heat::ResourceGroup'}
    resources = {
        'servers': dict(group, properties={'count': SERVERS, 'resource_def': {
            'type': 'OS::Nova::Server', 'properties': {
                'image': {'get_param': 'image'}, 'flavor': 'm1.tiny',
                'networks': [{'network': 'private'}]}}}),
        'volumes': dict(group, properties={'count': VOLUMES, 'resource_def': {
            'type': 'OS::Cinder::Volume', 'properties': {'size': 1}}}),
    }
    for n in range(ADDRESSES):
        resources['address_%d' % n] = {
            'type': 'OS::Neutron::FloatingIP',
            'properties': {'floating_network': 'public'}}
    return json.dumps({'heat_template_version': '2021-04-16',
                       'parameters': {'image': {'type': 'string'}},
                       'resources': resources})


def parse_args(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split('\n')[0])
    parser.add_argument('--hosts', type=int, default=1000)
    parser.add_argument('--leases', type=int, default=10000)
    parser.add_argument('--requests', type=int, default=30)
    parser.add_argument('--warmup', type=int, default=3)
    parser.add_argument('--starts', type=int, default=4)
    parser.add_argument('--seed', type=int, default=42)
    return parser.parse_args(argv)


def lease_body(name, template, start, end):
    return {'name': name, 'start_date': start.strftime('%Y-%m-%d %H:%M'),
            'end_date': end.strftime('%Y-%m-%d %H:%M'), 'events': [],
            'reservations': [{
                'resource_type': 'heat:stack', 'template': template,
                'parameters': {'image': sandbox_config.IMAGE_ID}}]}


def timed(call):
    began = time.perf_counter()
    response = call()
    return (time.perf_counter() - began) * 1e3, response


class Clients:
    """The demo user's and the admin's calls to the sandbox."""

    def __init__(self, layout):
        self.demo = sandbox_config.session(layout, 'demo')
        self.admin = sandbox_config.session(layout, 'admin')

    def call(self, session, service, method, path, **kwargs):
        return session.request(path, method, endpoint_filter={
            'service_type': service, 'interface': 'public',
            'region_name': sandbox_config.REGION}, raise_exc=False,
            **kwargs)

    def lease(self, method, path, session=None, **kwargs):
        return self.call(session or self.demo, 'reservation', method, path,
                         **kwargs)


def register(clients, layout, host_names):
    """Make hosts and the floating IPs reservable, as the admin."""
    for name in host_names:
        clients.lease('POST', '/os-hosts', clients.admin, json={'name': name})
    public = clients.call(clients.admin, 'network', 'GET',
                          '/v2.0/networks?name=public').json()['networks']
    for address in FLOATING_IPS:
        clients.lease('POST', '/floatingips', clients.admin, json={
            'floating_network_id': public[0]['id'],
            'floating_ip_address': address})


def start_lateness(clients, count):
    """Leases of the pair starting at one minute; each one's lateness (s)."""
    with open(os.path.join(TEMPLATES, 'reserved-pair.yaml')) as text:
        template = text.read()
    now = datetime.datetime.now(datetime.timezone.utc).replace(tzinfo=None)
    start = now.replace(second=0, microsecond=0) + datetime.timedelta(
        minutes=2)
    ids = [clients.lease('POST', '/leases', json=lease_body(
        'start-%d' % n, template, start,
        start + datetime.timedelta(hours=1))).json()['lease']['id']
        for n in range(count)]
    late, statuses = {}, {}
    deadline = time.monotonic() + START_TIMEOUT + 120
    while len(late) < count and time.monotonic() < deadline:
        for lease_id in set(ids) - set(late):
            lease = clients.lease('GET', '/leases/' + lease_id).json()[
                'lease']
            if lease['status'] in ('ACTIVE', 'ERROR'):
                seen = datetime.datetime.now(datetime.timezone.utc)
                late[lease_id] = ((seen.replace(tzinfo=None) -
                                   start).total_seconds(),
                                  stack_begun(clients, lease) - start)
                statuses[lease_id] = lease['status']
        time.sleep(POLL_INTERVAL)
    for lease_id in ids:
        clients.lease('DELETE', '/leases/' + lease_id)
    return list(late.values()), statuses


def stack_begun(clients, lease):
    """When Heat began the lease's stack (its creation time, UTC)."""
    [reservation] = lease['reservations']
    stack = clients.call(clients.demo, 'orchestration', 'GET',
                         '/stacks/%s' % reservation['stack_id']).json()
    return datetime.datetime.strptime(stack['stack']['creation_time'],
                                      '%Y-%m-%dT%H:%M:%SZ')


def wait_gone(clients):
    """Wait until the demo user's leases are gone (their stacks deleted)."""
    deadline = time.monotonic() + START_TIMEOUT
    while time.monotonic() < deadline and clients.lease(
            'GET', '/leases').json()['leases']:
        time.sleep(1)


def raise_quotas(clients, project_id):
    """Give the project quotas a stack of the creates fits in.

    High limits, not unlimited ones: each create's check of Nova's and
    Cinder's quotas over its window is made in full, and timed with it.
    """
    for service, limits in (('compute', COMPUTE_QUOTAS),
                            ('volumev3', VOLUME_QUOTAS)):
        clients.call(clients.admin, service, 'PUT',
                     '/os-quota-sets/%s' % project_id,
                     json={'quota_set': limits}).raise_for_status()


def creates(clients, args, begin):
    """Timed lease creates, previews and trusts; their timings."""
    rand = random.Random(args.seed + 1)
    template = big_template()
    project_id = clients.demo.get_project_id()
    times = {'stack_create': [], 'heat_preview': [], 'trust': []}
    statuses = {}
    windows = instance_leases.request_windows(
        rand, args.warmup + args.requests, begin)
    for n, (start, end) in enumerate(windows):
        spent, response = timed(lambda: clients.lease(
            'POST', '/leases', json=lease_body('stack-%d' % n, template,
                                               start, end)))
        preview, _ = timed(lambda: clients.call(
            clients.demo, 'orchestration', 'POST', '/stacks/preview',
            json={'stack_name': 'preview', 'template': template,
                  'parameters': {'image': sandbox_config.IMAGE_ID}}))
        trust, _ = timed(lambda: make_and_delete_trust(clients, project_id))
        if n < args.warmup:
            continue
        statuses[str(response.status_code)] = statuses.get(
            str(response.status_code), 0) + 1
        for key, value in (('stack_create', spent), ('heat_preview', preview),
                           ('trust', trust)):
            times[key].append(value)
    return times, statuses


def make_and_delete_trust(clients, project_id):
    """A trust from the demo user to the admin, made and deleted."""
    made = clients.call(clients.demo, 'identity', 'POST', '/OS-TRUST/trusts',
                        json={'trust': {
                            'trustor_user_id': clients.demo.get_user_id(),
                            'trustee_user_id': clients.admin.get_user_id(),
                            'project_id': project_id, 'impersonation': True,
                            'allow_redelegation': True,
                            'roles': [{'name': 'member'}]}})
    clients.call(clients.admin, 'identity', 'DELETE',
                 '/OS-TRUST/trusts/%s' % made.json()['trust']['id'])


def main(argv=None):
    args = parse_args(argv)
    begin = instance_leases.horizon_start()
    rand = random.Random(args.seed)
    bookings = instance_leases.bookings_of(rand, args.hosts, args.leases,
                                           begin)
    options = ('--config', 'reservation.volume_reservable_gb=%d'
               % RESERVABLE_GB)
    with harness_sandbox.SandboxFixture(
            hosts=instance_leases.SANDBOX_HOSTS, options=options) as sandbox:
        layout = sandbox_config.Layout.load(sandbox.state_dir)
        clients = Clients(layout)
        register(clients, layout, sandbox_config.host_names(layout))
        raise_quotas(clients, clients.demo.get_project_id())
        late, started = start_lateness(clients, args.starts)
        wait_gone(clients)
        engine = sa.create_engine(layout.leases_db_url,
                                  connect_args={'timeout': 60})
        instance_leases.load(engine, args.hosts, bookings)
        engine.dispose()
        times, statuses = creates(clients, args, begin)
    fields = {'hosts': args.hosts, 'leases': args.leases,
              'requests': args.requests, 'servers': SERVERS,
              'volumes': VOLUMES, 'floating_ips': ADDRESSES}
    lines = [dict(fields, kind=kind, **instance_leases.timing_fields(
        values)) for kind, values in times.items()]
    lines[0].update(statuses=statuses, target_p50_ms=TARGET_P50_MS,
                    valid=statuses == {'201': args.requests},
                    rest_p50_ms=round(lines[0]['p50_ms'] - lines[1][
                        'p50_ms'] - lines[2]['p50_ms'], 3))
    active = sorted(seconds for seconds, _ in late)
    begun = sorted(when.total_seconds() for _, when in late)
    lines.append({'kind': 'stack_start', 'starts': args.starts,
                  'lateness_p50_s': round(active[len(active) // 2], 3),
                  'lateness_max_s': round(max(active), 3),
                  'stack_begun_p50_s': begun[len(begun) // 2],
                  'stack_begun_max_s': max(begun),
                  'valid': sorted(started.values()) == ['ACTIVE'] *
                  args.starts})
    for line in lines:
        print(json.dumps(line, sort_keys=True), flush=True)
    return 0


if __name__ == '__main__':
    sys.exit(main())
