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

"""The keystoneauth1 adapter of the reservation service user.

``[reservation_client]`` holds keystoneauth1's session, auth and adapter
options; Nova and Cinder are found through the catalog.

Retries, so that a failing service does not fail a lease at once:

* An idempotent request (every GET, PUT and DELETE, and the POSTs whose
  repetition changes nothing) is retried by keystoneauth1 with backoff
  when the connection fails or times out (``connect_retries``) or the
  service answers 5xx (``status_code_retries``), 3 times each unless
  configured; ``connect_retry_delay`` and ``status_code_retry_delay``
  fix the delays, else they double from half a second.
* A request that creates something each time it arrives (``once``) is
  sent once: a failure after which it may have been carried out raises
  :class:`Unanswered`, and the caller looks for what it creates before
  it asks again (:func:`retrying`).
* A 409 that the caller does not expect raises :class:`Busy`: Nova's
  answer to an action on a server that is busy with another.

What still fails raises :class:`~reservation_ext.exceptions.PluginError`
with what the service said; the engine retries the lease event with
backoff and records the reason in the lease.
"""

import json
import time

from keystoneauth1 import exceptions as ks_exc
from keystoneauth1 import loading as ks_loading
from oslo_log import log as logging

from reservation_ext import conf as conf_mod
from reservation_ext import exceptions

LOG = logging.getLogger(__name__)

DEFAULT_RETRIES = 3
RETRIED_STATUS_CODES = (500, 502, 503, 504)
# The delays of the retries made here, as keystoneauth1's own: doubling
# from FIRST_DELAY up to MAX_DELAY seconds unless configured.
FIRST_DELAY = 0.5
MAX_DELAY = 60.0


class Unanswered(exceptions.PluginError):
    """A request that may or may not have been carried out.

    The connection failed or timed out, or the service answered 5xx,
    after the request may have reached the service.
    """


class Busy(exceptions.PluginError):
    """The service answered 409 Conflict where none was expected."""


def adapter(conf, service_type, transport=None, **kwargs):
    """An adapter for ``service_type`` (extra adapter arguments allowed).

    :param transport: the ``requests.Session`` that sends the requests
        (by default keystoneauth1's own).
    """
    group = conf_mod.CLIENT_GROUP
    auth = ks_loading.load_auth_from_conf_options(conf, group)
    session = ks_loading.load_session_from_conf_options(
        conf, group, auth=auth, session=transport)
    result = ks_loading.load_adapter_from_conf_options(
        conf, group, session=session, auth=auth, service_type=service_type,
        **kwargs)
    for option in ('connect_retries', 'status_code_retries'):
        if getattr(result, option) is None:
            setattr(result, option, DEFAULT_RETRIES)
    result.retriable_status_codes = list(RETRIED_STATUS_CODES)
    return result


def call(adapter, service, method, path, ok=(), once=False, **kwargs):
    """Send a request; return its JSON body (None for ``ok`` codes).

    :param service: the service's name for error messages (``Nova``).
    :param once: send it once, without keystoneauth1's retries: it is
        not idempotent.
    :raises Unanswered: (``once``) it may have been carried out.
    :raises Busy: an unexpected 409.
    :raises PluginError: any other failure, with what the service said.
    """
    if once:
        kwargs.update(connect_retries=0, status_code_retries=0)
    request = _described(method, path, kwargs.get('json'))
    try:
        response = adapter.request(path, method, **kwargs)
    except ks_exc.HttpError as exc:
        if exc.http_status in ok:
            return None
        message = '%s refused %s: %s %s' % (
            service, request, exc.http_status, _error_message(exc))
        if exc.http_status == 409:
            raise Busy(message)
        if once and exc.http_status >= 500:
            raise Unanswered(message)
        raise exceptions.PluginError(message)
    except ks_exc.ClientException as exc:
        message = '%s call %s failed: %s' % (service, request, exc)
        if once and isinstance(exc, ks_exc.RetriableConnectionFailure):
            raise Unanswered(message)
        raise exceptions.PluginError(message)
    if response.status_code == 204 or not response.content:
        return None
    return response.json()


def retrying(adapter, attempt, retry_on):
    """``attempt()``, tried again with backoff while it raises ``retry_on``.

    As often and with the delays of the adapter's connection retries.
    An attempt after an :class:`Unanswered` create must first look for
    what the create made.
    """
    retries = adapter.connect_retries or 0
    for retry in range(retries):
        try:
            return attempt()
        except retry_on as exc:
            delay = adapter.connect_retry_delay
            if delay is None:
                delay = min(FIRST_DELAY * 2 ** retry, MAX_DELAY)
            LOG.warning('Retrying in %.1f s (%d of %d): %s', delay,
                        retry + 1, retries, exc)
            time.sleep(delay)
    return attempt()


def _described(method, path, body):
    """A request as its errors name it: an action with its name."""
    if path.endswith('/action') and isinstance(body, dict):
        return '%s %s %s' % (method, path, ' '.join(sorted(body)))
    return '%s %s' % (method, path)


def _error_message(exc):
    """What the service said.

    The ``message`` of Nova's and Cinder's ``{"<fault>": {"message":
    ...}}`` bodies, the ``faultstring`` of Ironic's ``{"error_message":
    "<JSON text>"}``, which keystoneauth1 does not read.
    """
    try:
        [fault] = exc.response.json().values()
        if isinstance(fault, str):
            return json.loads(fault)['faultstring']
        return fault['message']
    except (AttributeError, KeyError, TypeError, ValueError):
        return exc.details or exc.message
