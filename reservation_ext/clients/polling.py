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

"""Waiting for another service to finish what it was asked to do.

openstacksdk's waits (``wait_for_server``, ``wait_for_status``,
``wait_for_delete``) wait for one status or for a resource to go;
:func:`wait_for` waits for any condition on any value (a status among
several, an action's answer, an emulator's state), with tenacity.
"""

import time

import tenacity

from reservation_ext.clients import deferral
from reservation_ext import exceptions


def wait_for(fetch, done, timeout, interval, late, wait=None):
    """Call ``fetch()`` until ``done(value)`` holds; return that value.

    ``fetch`` runs at once, then every ``interval`` seconds; ``done`` may
    raise :class:`~reservation_ext.exceptions.PluginError` to stop early
    (the resource failed).

    :param late: ``late(value)`` of the last value fetched: the reason
        of the PluginError raised when ``timeout`` seconds passed.
    :param wait: the :class:`.deferral.Wait` that this wait is, for a
        block that defers its waits: there ``fetch`` runs once, and
        :class:`.deferral.Waiting` is raised unless ``done(value)``.
    """
    if wait is not None and deferral.active():
        value = fetch()
        if done(value):
            return value
        raise deferral.Waiting([wait], timeout)
    # A timeout, not a timestamp: the monotonic clock, not the lease
    # clock. The last fetch is the first one after the timeout.
    deadline = time.monotonic() + timeout
    waiting = tenacity.Retrying(
        retry=tenacity.retry_if_result(lambda value: not done(value)),
        stop=lambda state: time.monotonic() > deadline,
        wait=tenacity.wait_fixed(interval), sleep=time.sleep,
        retry_error_callback=lambda state: _late(late, state))
    return waiting(fetch)


def _late(late, state):
    """Raise the PluginError of a wait whose time is up."""
    raise exceptions.PluginError(late(state.outcome.result()))
