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

"""One concurrent run against lease API workers, and its verdict.

:func:`run` registers the reservable hosts in an empty leases DB (their
rows, written as the host inventory writes them,
:func:`reservation_ext.hosts.records.bulk_load`: the workers run no Nova
to check them against), starts the workers (:mod:`.cluster`), lets the
clients loose (:mod:`.workload`), waits for the last proposal to expire
and sends one more proposals request (which deletes the expired ones),
then asks :mod:`.checker` for the violations. The functional test and
``bench/api_concurrency.py`` both use it.
"""

import datetime
import tempfile
import time

import sqlalchemy as sa

from reservation_ext.hosts import records as host_records
from tests.concurrency import checker
from tests.concurrency import cluster
from tests.concurrency import workload

# Nova's defaults, which the workers' Placement measure uses (nova.conf
# sets nothing): allocation ratios of vCPUs, RAM, disk, and the host
# reserve (no vCPU, 512 MB of RAM, no disk).
NOVA_RATIOS = (4.0, 1.0, 1.0)
NOVA_RESERVED = (0, 512, 0)
CLEANING_TIME = 30
VOLUME_GB = 1500
# Two host sizes, half of the hosts each: (vcpus, memory_mb, local_gb).
SIZES = ((16, 32768, 500), (32, 65536, 1000))


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
        host_records.bulk_load(conn, hosts)


def run(url, clients, ops, workers=3, hosts=50, proposal_ttl=5, seed=0):
    """Run the clients against ``workers`` workers on the DB at ``url``.

    The DB must have the schema and no rows.

    :returns: a dict: ``summary`` (:func:`checker.summary`), ``violations``
        (a list, empty when all is well), ``errors`` (the ERROR lines of
        the workers' logs), ``seconds`` (the clients' wall
        time) and ``clients``, ``workers``, ``hosts``.
    """
    engine = sa.create_engine(url, pool_size=clients, max_overflow=0)
    try:
        now = checker.utc_now()
        add_hosts(engine, hosts, now)
        base = (now + datetime.timedelta(days=2)).replace(
            minute=0, second=0, microsecond=0)
        with tempfile.TemporaryDirectory() as directory:
            workers_ = cluster.Cluster(url, workers, directory, {
                'cleaning_time': CLEANING_TIME,
                'volume_reservable_gb': VOLUME_GB,
                'proposal_ttl': proposal_ttl}).start()
            try:
                started = time.monotonic()
                history = workload.run(workers_.endpoints, engine, clients,
                                       ops, seed, base)
                seconds = time.monotonic() - started
                history += _purge(workers_.endpoints, engine, base,
                                  history)
            except Exception:
                workers_.stop()
                raise
            statuses = workers_.stop()
            errors = workers_.errors()
        with engine.connect() as conn:
            limits = checker.read_limits(conn, CLEANING_TIME, NOVA_RATIOS,
                                         NOVA_RESERVED, VOLUME_GB)
            violations = checker.history_violations(history, limits)
            violations += checker.db_violations(conn, history, limits,
                                                checker.utc_now())
    finally:
        engine.dispose()
    violations += ['worker %d ended with status %s' % (index, status)
                   for index, status in enumerate(statuses) if status]
    return {'summary': checker.summary(history), 'violations': violations,
            'errors': errors, 'seconds': seconds, 'clients': clients,
            'workers': workers, 'hosts': hosts}


def _purge(endpoints, engine, base, history):
    """One proposals request once every proposal made has expired.

    It deletes the expired proposals; its own holds are live (or taken).
    Returns its records.
    """
    expiries = [expires for record in history
                for expires in record.proposals.values() if expires]
    time.sleep(max([0] + [expires - time.time() + 0.5
                          for expires in expiries]))
    client = workload.Client(-1, endpoints, engine, base, 0, 'purge')
    client.propose()
    return client.records
