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

"""Neutron's database on SQLite: the schema of the models, stamped.

Neutron's migrations do not run on SQLite (an early one alters
constraints), so, as Neutron's own unit tests do, the schema is made
from the models at head (``neutron.db.migration.models.head``) and
stamped with ``neutron-db-manage stamp heads``, so that Neutron sees a
database at its current revision.

Making it takes seconds of CPU (the stamp loads every migration), at
every start of the sandbox and of the tests' Neutron: it is made once
per Neutron version, in a template under the user's cache directory
(``$XDG_CACHE_HOME/reservation-ext``, by default ``~/.cache``), and
copied.
"""

import importlib.metadata
import os
import shutil
import sqlite3
import subprocess
import sys
import tempfile

from oslo_config import cfg
import sqlalchemy

SQLITE_PREFIX = 'sqlite:///'


def cache_dir():
    return os.path.join(os.environ.get('XDG_CACHE_HOME') or os.path.join(
        os.path.expanduser('~'), '.cache'), 'reservation-ext')


def _neutron_db_manage():
    script = os.path.join(os.path.dirname(sys.executable),
                          'neutron-db-manage')
    return script if os.path.exists(script) else shutil.which(
        'neutron-db-manage')


def database_path(conf_file):
    """The SQLite file of ``[database] connection`` in ``conf_file``."""
    conf = cfg.ConfigOpts()
    conf.register_opt(cfg.StrOpt('connection'), 'database')
    conf(['--config-file', conf_file], project='neutron',
         default_config_files=[], default_config_dirs=[])
    url = conf.database.connection
    if not url.startswith(SQLITE_PREFIX):
        raise ValueError('not an SQLite file: [database] connection = %s'
                         % url)
    return url[len(SQLITE_PREFIX):]


def create(conf_file):
    """Make the database of ``conf_file``, from the template."""
    template = os.path.join(cache_dir(), 'neutron-%s.sqlite' %
                            importlib.metadata.version('neutron'))
    if not os.path.exists(template):
        _make_template(template)
    path = database_path(conf_file)
    shutil.copyfile(template, path)
    with sqlite3.connect(path) as connection:
        # Readers do not wait for the writer in SQLite's write-ahead log.
        connection.execute('PRAGMA journal_mode=WAL')


def _make_template(template):
    """Make the schema and stamp it; concurrent makers are harmless."""
    os.makedirs(os.path.dirname(template), exist_ok=True)
    work = tempfile.mkdtemp(dir=os.path.dirname(template))
    try:
        path = os.path.join(work, 'neutron.sqlite')
        conf_file = os.path.join(work, 'neutron.conf')
        with open(conf_file, 'w') as conf:
            conf.write('[database]\nconnection = %s\n' % (
                SQLITE_PREFIX + path))
        stamp = subprocess.run(
            [_neutron_db_manage(), '--config-file', conf_file, 'stamp',
             'heads'], stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
            text=True)
        if stamp.returncode:
            raise RuntimeError('neutron-db-manage stamp heads failed:\n' +
                               stamp.stdout)
        # Neutron's models only here: the stamp needs none.
        from neutron.db.migration.models import head
        engine = sqlalchemy.create_engine(SQLITE_PREFIX + path)
        head.get_metadata().create_all(engine)
        engine.dispose()
        # Atomic: another process sees no template or a whole one.
        os.replace(path, template)
    finally:
        shutil.rmtree(work, ignore_errors=True)
