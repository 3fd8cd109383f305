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

"""Faults injected into the requests of the reservation service user.

:class:`FaultyTransport` is a ``requests.Session`` that the clients of
:mod:`reservation_ext.clients` are built with
(``PluginClients(conf, transport=...)``): keystoneauth1 sends every
request through it, to the real Nova, Cinder and image APIs. With
probability ``rate`` a request meets one fault, drawn from a seeded
random source (the same seed replays the same draws for the same
sequence of requests):

``refused``
    the connection is refused: the request never reaches the service.
``reset``
    the request is carried out, then the connection is reset before the
    answer arrives.
``timeout``
    the request is carried out, then reading the answer times out: the
    service acted and the caller does not know it.
``500``, ``503``
    the service answers so without acting.
``409``
    (a Nova server action only) Nova's answer to an action on a server
    that is busy with another, without acting.

``counts`` has the faults injected by kind and ``calls`` the requests
seen. ``where(method, url, body)`` (``body`` the JSON sent, or None)
chooses the requests that may fail (by default all); :func:`first_time`
is one that chooses each request the first time only.
"""

import collections
import json
import random
import re
import threading

import requests

BEFORE = ('refused', '500', '503', '409')
AFTER = ('reset', 'timeout')
KINDS = BEFORE + AFTER
# Nova answers 409 to these when the server is busy (a task under way).
_BUSY_ACTION = re.compile(r'/servers/[^/]+/action$')
_FAULT_NAMES = {'500': 'computeFault', '503': 'serviceUnavailable',
                '409': 'conflictingRequest'}


class FaultyTransport(requests.Session):
    """A ``requests.Session`` that injects faults (see the module doc)."""

    def __init__(self, seed, rate=0.3, kinds=KINDS, where=None):
        super().__init__()
        self.seed = seed
        self.rate = rate
        self.kinds = tuple(kinds)
        self.where = where
        self.counts = collections.Counter()
        self.calls = 0
        self._random = random.Random(seed)
        self._lock = threading.Lock()

    def request(self, method, url, *args, **kwargs):
        kind = self._draw(method, url, _body(kwargs))
        if kind == 'refused':
            raise requests.exceptions.ConnectionError(
                '[Errno 111] Connection refused (injected)')
        if kind in BEFORE:
            return _answer(int(kind), method, url)
        response = super().request(method, url, *args, **kwargs)
        if kind == 'reset':
            raise requests.exceptions.ConnectionError(
                '[Errno 104] Connection reset by peer (injected)')
        if kind == 'timeout':
            raise requests.exceptions.ReadTimeout(
                'Read timed out (injected)')
        return response

    def summary(self):
        """The figures: seed, rate, calls and faults by kind."""
        return {'seed': self.seed, 'rate': self.rate, 'calls': self.calls,
                'faults': dict(sorted(self.counts.items())),
                'faults_total': sum(self.counts.values())}

    def _draw(self, method, url, body):
        with self._lock:
            self.calls += 1
            if self.where is not None and not self.where(method, url,
                                                         body):
                return None
            if self._random.random() >= self.rate:
                return None
            kinds = [kind for kind in self.kinds if kind != '409' or (
                method == 'POST' and _BUSY_ACTION.search(url))]
            if not kinds:
                return None
            kind = self._random.choice(kinds)
            self.counts[kind] += 1
            return kind


def _body(kwargs):
    """The JSON body of a request (keystoneauth1 sends it as data)."""
    try:
        return json.loads(kwargs.get('data') or 'null')
    except (TypeError, ValueError):
        return None


def first_time(where):
    """A ``where`` that chooses what ``where`` chooses, once for each.

    Requests are the same when their method, URL and JSON body are.
    """
    seen = set()

    def chosen(method, url, body):
        key = (method, url, json.dumps(body, sort_keys=True))
        if key in seen or not where(method, url, body):
            return False
        seen.add(key)
        return True

    return chosen


def _answer(status, method, url):
    """A response of ``status`` in Nova's error body, sent for nothing."""
    response = requests.Response()
    response.status_code = status
    response.url = url
    response.headers['Content-Type'] = 'application/json'
    response._content = json.dumps({_FAULT_NAMES[str(status)]: {
        'code': status,
        'message': 'injected %d for %s %s' % (status, method, url)}}).encode()
    response.request = requests.Request(method, url).prepare()
    response.reason = 'Injected'
    return response
