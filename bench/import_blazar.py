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

"""The import of a big Blazar database: time and rows per second.

    python bench/import_blazar.py [--hosts 1000] [--leases 50000]
                                  [--db-url URL] [--shared DIR]

Blazar's code writes a SQLite database of ``--hosts`` hosts and
``--leases`` leases (``blazar_import_peer.py`` under the peer venv, with
``shared/bench/blazar_alloc.py``'s workload over a horizon long enough
to keep every lease: each has one ``physical:host`` reservation, three
events and one to four hosts). Then ``reservation-db-manage
import-blazar``'s import (:mod:`reservation_ext.blazar_import.importer`)
brings it into a fresh leases DB (a temporary SQLite file unless
--db-url), timed, and a second time (nothing new: the cost of an
idempotent run). One JSON line: the rows imported, ``import_s``,
``rows_per_s`` and ``second_import_s``.
"""

import argparse
import json
import os
import platform
import sys
import tempfile
import time

import sqlalchemy as sa

# Run as a script, Python puts bench/ on the path: the checkout too.
sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(
    __file__))))

from bench import common  # noqa: E402
from db import api as db_api  # noqa: E402
from db import models  # noqa: E402
from reservation_ext.blazar_import import importer  # noqa: E402
from reservation_ext import clock  # noqa: E402
from reservation_ext import conf as conf_mod  # noqa: E402
from reservation_ext import context  # noqa: E402

PEER_SCRIPT = os.path.join(os.path.dirname(os.path.abspath(__file__)),
                           'blazar_import_peer.py')


def parse_args(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split('\n')[0])
    parser.add_argument('--hosts', type=int, default=1000)
    parser.add_argument('--leases', type=int, default=50000)
    parser.add_argument('--horizon-days', type=int, default=1460,
                        help="the workload's horizon: long enough that "
                        'every lease finds free hosts')
    parser.add_argument('--db-url', help='an empty database to import into '
                        '(default: a fresh temporary SQLite file)')
    parser.add_argument('--shared', default=common.DEFAULT_SHARED,
                        help='the shared folder holding bench/blazar_alloc.py')
    return parser.parse_args(argv)


def write_blazar(args, url):
    """Have Blazar's code write the database; its JSON line."""
    line, = common.run_peer(PEER_SCRIPT, [
        '--url', url, '--shared', args.shared, '--hosts', str(args.hosts),
        '--allocs', str(args.leases), '--horizon-days',
        str(args.horizon_days), '--reps', '0', '--warmup', '0'])
    return line


def timed_import(url):
    """Run the import once; its report and seconds."""
    began = time.perf_counter()
    report = importer.import_blazar(context.get_admin_context(),
                                    clock.SYSTEM, conf_mod.CONF, url)
    return report, time.perf_counter() - began


def main(argv=None):
    args = parse_args(argv)
    conf_mod.CONF([], project='reservation-ext', default_config_files=[])
    with tempfile.TemporaryDirectory() as tmp:
        blazar_url = 'sqlite:///' + os.path.join(tmp, 'blazar.sqlite')
        peer = write_blazar(args, blazar_url)
        with common.scratch_database(args.db_url, tmp) as url:
            db_api.context_manager.configure(connection=url)
            engine = db_api.get_engine()
            models.Base.metadata.create_all(engine)
            report, import_s = timed_import(blazar_url)
            _again, second_s = timed_import(blazar_url)
            rows = (report.hosts + report.capabilities + report.leases +
                    2 * report.reservations + report.events +
                    report.allocations)
            out = {'bench': 'reservation_ext.blazar_import.importer',
                   'db': engine.dialect.name,
                   'python': platform.python_version(),
                   'sqlalchemy': sa.__version__,
                   'blazar_rows': peer['rows'],
                   'blazar_write_s': peer['seconds'],
                   'hosts': report.hosts,
                   'capabilities': report.capabilities,
                   'leases': report.leases,
                   'reservations': report.reservations,
                   'events': report.events,
                   'allocations': report.allocations,
                   'refused': len(report.refused), 'rows': rows,
                   'import_s': round(import_s, 2),
                   'rows_per_s': round(rows / import_s),
                   'second_import_s': round(second_s, 2)}
            engine.dispose()
    print(json.dumps(out), flush=True)
    return 0


if __name__ == '__main__':
    sys.exit(main())
