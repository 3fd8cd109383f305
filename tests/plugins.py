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

"""A real resource plugin for tests: ``test:journal``.

It books nothing on Nova or Cinder; every engine action it runs is appended
to a journal file (``RESERVATION_TEST_JOURNAL``), one line per action, so
tests (also across engine processes) can check that each action ran
exactly once. The request may ask it to fail or be slow:

    {"resource_type": "test:journal", "fail_start": 2, "fail_end": 0,
     "sleep": 0.5}

makes ``on_start`` fail twice before it succeeds (``-1``: fail for good,
which the engine does not retry); ``"make": 1`` journals
``prepare_create`` (``made``) and its undo (``unmade``), ``"make": 2``
makes ``prepare_create`` fail. The behaviour is kept in
the reservation's ``resource_id`` (``"<fail_start>,<fail_end>,<sleep>"``),
so that every engine process sees it.

An update with ``{"step": "ok"}`` (or ``"fail"``) leaves a step for after
its transaction, which journals the lease's status then (``step_UPDATING``)
and succeeds (or fails).
"""

import functools
import os
import time

import sqlalchemy as sa

from db import api as db_api
from db import models
from reservation_ext import exceptions
from reservation_ext.plugins import base

JOURNAL_ENV = 'RESERVATION_TEST_JOURNAL'
RESOURCE_TYPE = 'test:journal'
_KEYS = ('fail_start', 'fail_end', 'sleep', 'make')


class JournalPlugin(base.ResourcePlugin):

    def validate(self, values):
        unknown = set(values) - set(_KEYS)
        if unknown:
            raise exceptions.InvalidInput(sorted(unknown)[0], 'unknown key')
        out = {}
        for key in _KEYS:
            value = values.get(key, 0)
            if not isinstance(value, (int, float)) or value < 0:
                raise exceptions.InvalidInput(key, 'must be a number >= 0')
            out[key] = value
        return out

    def prepare_create(self, ctx, reservation_id, values, projects):
        if values['make'] == 2:
            raise exceptions.PluginError('making failed on purpose')
        if values['make']:
            self._write('made', reservation_id)
        return values

    def undo_create(self, ctx, reservation_id, values):
        if values['make']:
            self._write('unmade', reservation_id)

    def reserve(self, session, ctx, lease, reservation_id, values):
        self._write('reserve', reservation_id)
        return '%d,%d,%g' % (values['fail_start'], values['fail_end'],
                             values['sleep'])

    def get_details(self, session, reservation_ids):
        return {rid: {} for rid in reservation_ids}

    def update(self, session, ctx, lease, reservation, values):
        self._write('update', reservation['id'])
        if values.get('step'):
            return functools.partial(self._step, lease['id'],
                                     reservation['id'], values['step'])

    def _step(self, lease_id, reservation_id, outcome, ctx):
        leases = models.Lease.__table__
        with db_api.context_manager.reader.using(ctx) as session:
            status = session.scalar(sa.select(leases.c.status).where(
                leases.c.id == lease_id))
        self._write('step_' + status, reservation_id)
        if outcome == 'fail':
            raise exceptions.PluginError('the step failed on purpose')

    def on_start(self, ctx, lease, reservation):
        self._act('on_start', reservation, 0)

    def before_end(self, ctx, lease, reservation):
        self._act('before_end', reservation, None)

    def on_end(self, ctx, lease, reservation):
        self._act('on_end', reservation, 1)

    def _act(self, action, reservation, fail_index):
        fail_start, fail_end, sleep = reservation['resource_id'].split(',')
        failures = int((fail_start, fail_end)[fail_index]) if (
            fail_index is not None) else 0
        self._write('attempt_' + action, reservation['id'])
        if failures < 0:
            raise exceptions.ActionFailed('%s failed for good' % action)
        if attempts(action, reservation['id']) <= failures:
            raise exceptions.PluginError('%s failed on purpose' % action)
        time.sleep(float(sleep))
        self._write(action, reservation['id'])

    @staticmethod
    def _write(action, reservation_id):
        with open(os.environ[JOURNAL_ENV], 'a') as journal:
            journal.write('%s %s\n' % (action, reservation_id))


def read_journal():
    """The journal as a list of ``(action, reservation_id)``."""
    path = os.environ[JOURNAL_ENV]
    if not os.path.exists(path):
        return []
    with open(path) as journal:
        return [tuple(line.split()) for line in journal if line.strip()]


def attempts(action, reservation_id):
    return read_journal().count(('attempt_' + action, reservation_id))
