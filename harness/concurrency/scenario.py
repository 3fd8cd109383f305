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

"""One concurrent run in a sandbox, and its verdict.

:func:`run` works in a sandbox started with ``--engines 0`` (nothing
starts while the clients work). It registers the reservable hosts in the
sandbox's leases DB (their rows, written as the host inventory writes
them, :func:`reservation_ext.store.hosts.bulk_load`: hosts that Nova
does not run, as nothing is built on them before the leases start, two
days later), starts the extra lease API workers (:mod:`.cluster`) with the
sandbox's nova.conf, gives the clients their projects (:mod:`.cloud`),
lets them loose (:mod:`.workload`), waits for the last proposal to expire
and sends one more proposals request (which deletes the expired ones),
then asks :mod:`.checker` for the violations, in the leases DB and in
what Nova and Cinder hold. The e2e test and ``bench/api_concurrency.py``
both use it.
"""

import datetime
import tempfile
import time

from oslo_config import cfg
import sqlalchemy as sa

from harness.concurrency import checker
from harness.concurrency import cloud as cloud_mod
from harness.concurrency import cluster
from harness.concurrency import workload
from reservation_ext import conf as conf_mod
from reservation_ext.sandbox import config
from reservation_ext.store import hosts as store_hosts

# Nova's defaults, which the sandbox's nova.conf keeps: allocation ratios
# of vCPUs, RAM, disk, and the host reserve (no vCPU, 512 MB of RAM, no
# disk).
NOVA_RATIOS = (4.0, 1.0, 1.0)
NOVA_RESERVED = (0, 512, 0)
# Two host sizes, half of the hosts each: (vcpus, memory_mb, local_gb).
SIZES = ((16, 32768, 500), (32, 65536, 1000))
# Volumes take from 2 to 10 such parts of the reservable GB.
VOLUME_PARTS = 30


def add_hosts(engine, count, now):
    """``count`` reservable hosts, as the inventory writes them."""
    hosts = []
    for index in range(count):
        vcpus, memory_mb, local_gb = SIZES[index * len(SIZES) // count]
        hosts.append(({
            'hypervisor_hostname': 'compute-%02d' % index,
            'service_name': 'compute-%02d' % index,
            'availability_zone': 'nova', 'hypervisor_type': 'fake',
            'hypervisor_version': 1, 'vcpus': vcpus,
            'memory_mb': memory_mb, 'local_gb': local_gb, 'cpu_info': '{}',
            'reservable': True, 'generation': 0, 'created_at': now}, {}))
    with engine.begin() as conn:
        store_hosts.bulk_load(conn, hosts)


def reservation_options(layout):
    """The ``[reservation]`` options of the sandbox's nova.conf."""
    conf = cfg.ConfigOpts()
    conf_mod.register_opts(conf)
    conf(['--config-file', layout.path('nova.conf')],
         project='reservation-ext', default_config_files=[])
    return conf.reservation


def run(layout, clients, ops, workers=3, hosts=50, seed=0):
    """Run the clients against the sandbox and ``workers`` more workers.

    :param layout: the sandbox's :class:`~reservation_ext.sandbox.config.
        Layout`; its leases DB has no hosts yet.
    :returns: a dict: ``summary`` (:func:`checker.summary`), ``violations``
        (a list, empty when all is well), ``errors`` (the ERROR lines of
        the workers' logs), ``seconds`` (the clients' wall time) and
        ``clients``, ``workers``, ``hosts``.
    """
    options = reservation_options(layout)
    engine = sa.create_engine(layout.leases_db_url, pool_size=clients,
                              max_overflow=0)
    try:
        now = checker.utc_now()
        add_hosts(engine, hosts, now)
        base = (now + datetime.timedelta(days=2)).replace(
            minute=0, second=0, microsecond=0)
        unit = options.volume_reservable_gb // VOLUME_PARTS
        with tempfile.TemporaryDirectory() as directory:
            workers_ = cluster.Cluster(layout.path('nova.conf'), workers,
                                       directory).start()
            try:
                cloud = cloud_mod.connect(layout, clients,
                                          workers_.endpoints)
                started = time.monotonic()
                history = workload.run(cloud, engine, clients, ops, seed,
                                       base, unit)
                seconds = time.monotonic() - started
                purge = _purge(cloud, engine, base, history, unit)
                history += purge
            except Exception:
                workers_.stop()
                raise
            statuses = workers_.stop()
            errors = workers_.errors()
        with engine.connect() as conn:
            limits = checker.read_limits(
                conn, options.cleaning_time, NOVA_RATIOS, NOVA_RESERVED,
                options.volume_reservable_gb)
            violations = checker.history_violations(history, limits)
            # As the last request saw it: a proposal that expired after it
            # is there until another proposals request deletes it.
            violations += checker.db_violations(
                conn, history, limits, datetime.datetime.fromtimestamp(
                    purge[0].send, datetime.timezone.utc).replace(
                        tzinfo=None))
        violations += checker.cloud_violations(history,
                                               *_servers_and_volumes(layout))
    finally:
        engine.dispose()
    violations += ['worker %d ended with status %s' % (index, status)
                   for index, status in enumerate(statuses) if status]
    return {'summary': checker.summary(history), 'violations': violations,
            'errors': errors, 'seconds': seconds, 'clients': clients,
            'workers': workers, 'hosts': hosts}


def _servers_and_volumes(layout):
    """The ids of every server in Nova and every volume in Cinder."""
    session = config.session(layout)
    servers = session.get('/servers?all_tenants=1', endpoint_filter={
        'service_type': 'compute'}).json()['servers']
    volumes = session.get('/volumes?all_tenants=1', endpoint_filter={
        'service_type': 'volumev3'}).json()['volumes']
    return ([server['id'] for server in servers],
            [volume['id'] for volume in volumes])


def _purge(cloud, engine, base, history, unit):
    """One proposals request once every proposal made has expired.

    It deletes the expired proposals; its own holds are live (or taken).
    Returns its records.
    """
    expiries = [expires for record in history
                for expires in record.proposals.values() if expires]
    time.sleep(max([0] + [expires - time.time() + 0.5
                          for expires in expiries]))
    client = workload.Client(0, cloud, engine, base, 0, 'purge', unit)
    client.propose()
    return client.records
