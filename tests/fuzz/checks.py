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

"""What every answer to a generated request must be.

Never a status of 500 or more. A 4xx has a JSON error body with a
message: Blazar's (``error_code``, ``error_message``, ``error_name``) on
the lease API, Nova's and Cinder's (``{"badRequest": {"code": 400,
"message": ...}}``) on theirs. A 400's message names the field (the
project's messages are ``field: reason``; Nova's and Cinder's own name it
in their words). No message shows the internals: a traceback, an
internal call, a URL, SQL.
"""

import collections
import json
import re
import time

# What a message must never show.
INTERNALS = ('Traceback', 'os-hypervisors', 'refused GET', 'refused POST',
             'http://', 'https://', 'sqlalchemy', 'SELECT ', 'INSERT ',
             'psycopg2', 'pymysql', 'File "')
# "field: reason", the field possibly with a path (reservations[0].min).
_FIELD_FIRST = re.compile(r'^\S[^\n]*?: \S', re.DOTALL)
# How Nova and Cinder name a field in their own 400s.
_SERVICE_WORDS = ('field', 'attribute', 'parameter', 'must be', 'Invalid ',
                  'invalid', 'is not', 'required', 'Malformed request body',
                  'was unexpected')


class Tally:
    """Counts the requests sent and the answers by status."""

    def __init__(self, name):
        self.name = name
        self.statuses = collections.Counter()
        self._started = (time.monotonic(), time.process_time())

    def count(self, status):
        self.statuses[status] += 1

    @property
    def total(self):
        return sum(self.statuses.values())

    def summary(self):
        """One line: the requests, the answers by status, the time taken.

        The time is wall clock and this process's CPU, since the tally
        began.
        """
        wall, cpu = (now - then for now, then in zip(
            (time.monotonic(), time.process_time()), self._started))
        return ('%s: %d generated requests, statuses %s, %.1f s '
                '(%.1f s CPU)' % (self.name, self.total,
                                  dict(sorted(self.statuses.items())),
                                  wall, cpu))


def _json(body):
    try:
        return json.loads(body)
    except ValueError:
        return None


def _internals(message):
    return [word for word in INTERNALS if word in message]


def blazar_problem(status, body):
    """What is wrong with a lease API answer, or None."""
    if status >= 500:
        return 'status %d: %s' % (status, body[:500])
    if status < 400:
        return None
    error = _json(body)
    if not isinstance(error, dict) or set(error) != {
            'error_code', 'error_message', 'error_name'}:
        return "status %d without Blazar's error body: %r" % (
            status, body[:300])
    message = error['error_message']
    if error['error_code'] != status or not message:
        return 'status %d with error body %r' % (status, error)
    return _message_problem(status, message, field_first=True)


def service_problem(status, body, ours=True):
    """What is wrong with a Nova or Cinder answer, or None.

    :param ours: whether the request asked for a reservation; Nova's and
        Cinder's answers to the others are theirs, messages included.
    """
    if status >= 500:
        return 'status %d: %s' % (status, body[:500])
    if status < 400:
        return None
    error = _json(body)
    fault = (next(iter(error.values()))
             if isinstance(error, dict) and len(error) == 1 else None)
    if not isinstance(fault, dict) or not fault.get('message'):
        return 'status %d without a fault body: %r' % (status, body[:300])
    if fault.get('code') not in (None, status):
        return 'status %d with fault %r' % (status, fault)
    if not ours:
        return None
    return _message_problem(status, fault['message'], field_first=False)


def _message_problem(status, message, field_first):
    shown = _internals(message)
    if shown:
        return 'status %d message shows internals %s: %r' % (
            status, shown, message)
    if status != 400:
        return None
    if _FIELD_FIRST.match(message):
        return None
    if not field_first and any(word in message for word in _SERVICE_WORDS):
        return None
    return 'status 400 message names no field: %r' % message
