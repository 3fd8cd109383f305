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

"""Waiting for another service to finish what it was asked to do."""

import time

from reservation_ext import exceptions


def wait_for(fetch, done, timeout, interval, late):
    """Call ``fetch()`` until ``done(value)`` holds; return that value.

    ``fetch`` runs at once, then every ``interval`` seconds; ``done`` may
    raise :class:`~reservation_ext.exceptions.PluginError` to stop early
    (the resource failed).

    :param late: ``late(value)`` of the last value fetched: the reason
        of the PluginError raised when ``timeout`` seconds passed.
    """
    # A timeout, not a timestamp: the monotonic clock, not the lease clock.
    deadline = time.monotonic() + timeout
    while True:
        value = fetch()
        if done(value):
            return value
        if time.monotonic() > deadline:
            raise exceptions.PluginError(late(value))
        time.sleep(interval)
