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

"""The peer side of ``import_blazar.py``: a big Blazar database.

Run with the peer venv's python (``tools/peer-venv.sh``)::

    .peer-venv/bin/python bench/blazar_import_peer.py --url URL \\
        --shared DIR [blazar_alloc.py's workload options]

The workload is ``blazar_alloc.py``'s (hosts with extra capabilities,
inventories and traits; leases of one ``physical:host`` reservation with
three events and their hosts' allocations), written into the schema that
Blazar's ``setup_db`` makes, with Blazar's models; then Blazar's own
``blazar-db-manage stamp head`` records the schema's revision. Prints one
JSON line: the rows written, by table, and the seconds it took.
"""

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
import warnings

import by_path


def _stamp(url):
    """Record Blazar's head revision with Blazar's blazar-db-manage."""
    with tempfile.NamedTemporaryFile('w', suffix='.conf') as config:
        config.write('[database]\nconnection = %s\n' % url)
        config.flush()
        subprocess.run([os.path.join(os.path.dirname(sys.executable),
                                     'blazar-db-manage'),
                        '--config-file', config.name, 'stamp', 'head'],
                       check=True, capture_output=True)


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split('\n')[0])
    parser.add_argument('--url', required=True, help='an empty database')
    parser.add_argument('--shared', required=True,
                        help='the folder holding bench/blazar_alloc.py')
    ours, rest = parser.parse_known_args(argv)
    warnings.filterwarnings('ignore')
    alloc = by_path.blazar_alloc(ours.shared)
    args = alloc.parse_args(rest)
    began = time.perf_counter()
    workload = alloc.generate_workload(args)

    # Blazar's, in the peer venv.
    import blazar.config  # noqa: F401 (Blazar's options)
    from blazar.db import api as db_api
    from blazar.db.sqlalchemy import facade_wrapper
    from blazar.db.sqlalchemy import models
    from oslo_config import cfg

    cfg.CONF([], project='blazar', default_config_files=[])
    cfg.CONF.set_override('connection', ours.url, group='database')
    db_api.setup_db()
    engine = facade_wrapper._get_facade().writer.get_engine()
    counts = alloc.populate(engine, models, workload, args)
    _stamp(ours.url)
    print(json.dumps({'rows': counts, 'leases': len(workload['leases']),
                      'seconds': round(time.perf_counter() - began, 1)}))


if __name__ == '__main__':
    main()
