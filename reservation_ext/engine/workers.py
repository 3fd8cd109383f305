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

"""A bounded pool of native threads that run an engine's claimed events.

The engine claims no more events than :meth:`Workers.free` says, so a
claimed event never waits in a queue for a thread (and its claim never
ages there). The threads are :mod:`concurrent.futures`' (no eventlet, no
green threads): plugin actions block on Nova, Cinder and the DB, and a
thread that blocks holds only its own event.
"""

from concurrent import futures
import threading


class Workers:
    """Runs functions on up to ``size`` threads; counts the free ones.

    The threads are made when first needed; :meth:`drain` waits for the
    functions under way and lets the threads end (a later :meth:`submit`
    makes new ones).
    """

    def __init__(self, size, name):
        self.size = size
        self.name = name
        self._busy = 0
        self._changed = threading.Condition()
        self._executor = None

    def free(self):
        """Return how many more functions would run at once now."""
        with self._changed:
            return self.size - self._busy

    def submit(self, function, *args):
        """Run ``function(*args)`` in a thread of the pool.

        The caller makes sure a thread is free (:meth:`free`); the
        function handles its own errors.
        """
        with self._changed:
            self._busy += 1
            if self._executor is None:
                self._executor = futures.ThreadPoolExecutor(
                    self.size, thread_name_prefix=self.name)
            executor = self._executor
        executor.submit(self._run, function, args)

    def _run(self, function, args):
        """Run ``function(*args)``, then count its thread free again."""
        try:
            function(*args)
        finally:
            with self._changed:
                self._busy -= 1
                self._changed.notify_all()

    def wait_free(self, timeout):
        """Wait until a thread is free, at most ``timeout`` seconds."""
        with self._changed:
            self._changed.wait_for(lambda: self._busy < self.size, timeout)

    def drain(self):
        """Wait until every function submitted has returned."""
        with self._changed:
            executor, self._executor = self._executor, None
        if executor is not None:
            executor.shutdown(wait=True)
