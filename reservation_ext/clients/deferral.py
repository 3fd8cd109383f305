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

"""Waits that an engine's event does not sit through: it records them.

The clients' waits (a server ACTIVE or gone, an image active, a volume
available or deleted, a Heat stack made or deleted) block the calling
thread, as tools and the periodic work of an engine want. An engine's
event actions run in :func:`deferring` instead: there, a wait looks
once, returns if what it waits for is there, raises its failure if the
resource failed, and else raises :class:`Waiting` with a :class:`Wait`
that says what to look at. The engine records the event as waiting (it
holds no worker meanwhile) and runs it again once a status read shows
that the resource moved (:mod:`reservation_ext.engine.waiting`); the
actions are idempotent, so that run issues nothing twice and goes on
from there.
"""

import contextlib
import contextvars
import json

SERVER = 'server'
IMAGE = 'image'
VOLUME = 'volume'
STACK = 'stack'
KINDS = (SERVER, IMAGE, VOLUME, STACK)

_DEFERRING = contextvars.ContextVar('deferring', default=False)


class Wait:
    """What one wait waits for: when a status read should end it.

    It is over when the resource is gone, or its status is in ``until``,
    or (with ``pending``) its status is not among those that mean it is
    still under way. It says when to look again, not whether the action
    succeeded: the action's run after it decides.

    :param kind: one of :data:`KINDS`
    :param resource_id: the server's, image's or volume's id
    :param until: statuses that end the wait (with the failed ones)
    :param pending: statuses in which the wait goes on (the others end it)
    :param since: when the resource last changed, by the clock of the
        service that owns it, as that service wrote it when the action
        looked: a change after that ends the wait or not
    :param scope: for a stack, the Keystone trust through which it is
        read (Heat's URLs name the stack's project)
    """

    def __init__(self, kind, resource_id, until=(), pending=None,
                 since=None, scope=None):
        self.kind = kind
        self.resource_id = resource_id
        self.until = tuple(until)
        self.pending = None if pending is None else tuple(pending)
        self.since = since
        self.scope = scope

    def over(self, status):
        """Return whether a resource in ``status`` (None: gone) ends it."""
        if status is None or status in self.until:
            return True
        return self.pending is not None and status not in self.pending

    def as_dict(self):
        """Return the wait as the events table keeps it (JSON)."""
        return {'kind': self.kind, 'id': self.resource_id,
                'until': list(self.until),
                'pending': None if self.pending is None
                else list(self.pending), 'since': self.since,
                'scope': self.scope}

    @classmethod
    def from_dict(cls, values):
        """Return the wait that :meth:`as_dict` made ``values`` of."""
        return cls(values['kind'], values['id'], values['until'],
                   values['pending'], values['since'], values.get('scope'))

    def __repr__(self):
        return '%s %s' % (self.kind, self.resource_id)


class Waiting(Exception):
    """An action issued its work and waits for its result.

    :param waits: the :class:`Wait` list of what it waits for
    :param timeout: seconds after which the wait is a failed attempt
    """

    def __init__(self, waits, timeout):
        super().__init__('waits for %s' % ', '.join(map(repr, waits)))
        self.waits = list(waits)
        self.timeout = timeout


def dump(waits):
    """Return the JSON text of a :class:`Wait` list."""
    return json.dumps([wait.as_dict() for wait in waits])


def load(text):
    """Return the :class:`Wait` list of :func:`dump`'s text."""
    return [Wait.from_dict(values) for values in json.loads(text or '[]')]


@contextlib.contextmanager
def deferring():
    """Run the block with its clients' waits deferred (see the module)."""
    token = _DEFERRING.set(True)
    try:
        yield
    finally:
        _DEFERRING.reset(token)


def active():
    """Return whether the waits of this thread's block are deferred."""
    return _DEFERRING.get()


def gather(actions):
    """Run each callable of ``actions``; defer their waits together.

    All of them are issued even when one waits; then :class:`Waiting`
    for all of their waits is raised, with the longest timeout. What they
    return is returned when none waits.
    """
    results, waits, timeout = [], [], 0
    for action in actions:
        try:
            results.append(action())
        except Waiting as waiting:
            waits += waiting.waits
            timeout = max(timeout, waiting.timeout)
    if waits:
        raise Waiting(waits, timeout)
    return results
