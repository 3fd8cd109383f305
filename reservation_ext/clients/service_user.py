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

"""The service user's openstacksdk proxies, retries and errors.

``[reservation_client]`` holds keystoneauth1's session, auth and adapter
options: :func:`adapter` is keystoneauth1's adapter of them, and
:func:`proxy` openstacksdk's proxy of its service over the same session,
at the endpoint the adapter finds (the catalog's unless
``endpoint_override``). Nova's client and the Ironic power driver call
through the proxies' methods, and send with :func:`call` what
openstacksdk does not offer; Cinder's and the image API's clients send
with :func:`call` through the adapter (their modules say why), but for
Cinder's pools, which come through openstacksdk's block storage proxy.

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
  it asks again (:func:`retrying`, with tenacity).
* A 409 that the caller does not expect raises :class:`Busy`: Nova's
  answer to an action on a server that is busy with another.

What still fails raises :class:`~reservation_ext.exceptions.PluginError`
with what the service said; the engine retries the lease event with
backoff and records the reason in the lease.
"""

import json

from keystoneauth1 import exceptions as ks_exc
from keystoneauth1 import loading as ks_loading
from openstack.block_storage.v3 import _proxy as block_storage_proxy
from openstack.compute.v2 import _proxy as compute_proxy
from openstack import connection as sdk_connection
from openstack import exceptions as sdk_exc
from openstack.network.v2 import _proxy as network_proxy
from oslo_log import log as logging
import tenacity

from reservation_ext import conf as conf_mod
from reservation_ext import exceptions

LOG = logging.getLogger(__name__)

DEFAULT_RETRIES = 3
RETRIED_STATUS_CODES = (500, 502, 503, 504)
# The delays of the retries made here, as keystoneauth1's own: doubling
# from FIRST_DELAY up to MAX_DELAY seconds unless configured.
FIRST_DELAY = 0.5
MAX_DELAY = 60.0
# openstacksdk's name of a catalog service type, and the major API
# version its proxy speaks.
SDK_TYPES = {'compute': 'compute', 'baremetal': 'baremetal',
             'network': 'network', 'volumev3': 'block_storage'}
API_VERSIONS = {'compute': '2', 'baremetal': '1', 'network': '2',
                'block_storage': '3'}
# The proxy classes of catalog_proxy().
_PROXIES = {'compute': compute_proxy.Proxy, 'network': network_proxy.Proxy,
            'volumev3': block_storage_proxy.Proxy}
# The path of Neutron's API under its catalog endpoint, which is
# unversioned (openstacksdk appends it only to endpoints it finds itself).
NETWORK_PATH = 'v2.0'
_RETRY_OPTIONS = ('connect_retries', 'status_code_retries',
                  'connect_retry_delay', 'status_code_retry_delay')


class Unanswered(exceptions.PluginError):
    """A request that may or may not have been carried out.

    The connection failed or timed out, or the service answered 5xx,
    after the request may have reached the service.
    """


class Busy(exceptions.PluginError):
    """The service answered 409 Conflict where none was expected."""


def adapter(conf, service_type, transport=None):
    """Return keystoneauth1's adapter of the ``[reservation_client]`` options.

    Nothing is sent yet: the clients make openstacksdk's proxy of it
    (:func:`proxy`, :func:`catalog_proxy`) at first use.

    :param service_type: the catalog's (``volumev3`` for Cinder).
    :param transport: the ``requests.Session`` that sends the requests
        (by default keystoneauth1's own).
    """
    group = conf_mod.CLIENT_GROUP
    auth = ks_loading.load_auth_from_conf_options(conf, group)
    session = ks_loading.load_session_from_conf_options(
        conf, group, auth=auth, session=transport)
    result = ks_loading.load_adapter_from_conf_options(
        conf, group, session=session, auth=auth, service_type=service_type)
    for option in ('connect_retries', 'status_code_retries'):
        if getattr(result, option) is None:
            setattr(result, option, DEFAULT_RETRIES)
    result.retriable_status_codes = list(RETRIED_STATUS_CODES)
    return result


def connection(found, service):
    """Make openstacksdk's connection for the service of adapter ``found``.

    It has the adapter's session and, for that service, its endpoint
    (found in the catalog unless ``endpoint_override``), interface,
    region and the retries of the module doc; openstacksdk's default of
    more status code retries for Ironic does not apply.

    :param found: an :func:`adapter`.
    :param service: the service's name for error messages (``Nova``).
    :raises PluginError: the endpoint cannot be found.
    """
    endpoint = sdk_call(service, 'for its endpoint', found.get_endpoint)
    if not endpoint:
        raise exceptions.PluginError('%s has no endpoint in the catalog.'
                                     % service)
    sdk_type = SDK_TYPES[found.service_type]
    if sdk_type == 'network' and endpoint.rstrip('/').rsplit('/', 1)[
            -1] != NETWORK_PATH:
        endpoint = endpoint.rstrip('/') + '/' + NETWORK_PATH
    settings = dict(
        {option: getattr(found, option) for option in _RETRY_OPTIONS},
        endpoint_override=endpoint, api_version=API_VERSIONS[sdk_type],
        retriable_status_codes=list(RETRIED_STATUS_CODES))
    return sdk_connection.Connection(
        session=found.session, region_name=found.region_name,
        interface=found.interface,
        **{'%s_%s' % (sdk_type, name): value
           for name, value in settings.items() if value is not None})


def proxy(found, service):
    """Return openstacksdk's proxy of the adapter's service, as it makes it.

    openstacksdk reads the service's version document to make it (the
    ``/v1`` of an unversioned Ironic endpoint, the microversions it
    negotiates).

    :param found: an :func:`adapter`.
    :param service: the service's name for error messages (``Ironic``).
    :raises PluginError: the endpoint or its version cannot be found.
    """
    return sdk_call(service, 'for its version', getattr,
                    connection(found, service),
                    SDK_TYPES[found.service_type])


def catalog_proxy(found, service, microversion):
    """Make openstacksdk's proxy of the adapter's service without a request.

    Unlike :func:`proxy` it does not read the version document, whose
    request is sent without a retry and, when it fails, fails the proxy
    with keystoneauth1's token endpoint plugins: its endpoint is the
    catalog's as it is, and its requests name ``microversion``, so that
    openstacksdk's resources need no version document either.

    :param found: an :func:`adapter`.
    :param service: the service's name for error messages (``Nova``).
    :raises PluginError: the endpoint cannot be found.
    """
    cloud = connection(found, service)
    result = cloud.config.get_session_client(
        found.service_type, constructor=_PROXIES[found.service_type])
    # As openstacksdk's service descriptors tie a proxy they make to its
    # connection, which its requests read (cache, request id).
    result._connection = cloud
    result.default_microversion = microversion
    return result


def call(adapter, service, method, path, ok=(), once=False, **kwargs):
    """Send a request; return its JSON body (None for ``ok`` codes).

    :param adapter: an openstacksdk proxy (or keystoneauth1 adapter).
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
        response = adapter.request(path, method, raise_exc=True, **kwargs)
    except ks_exc.HttpError as exc:
        if exc.http_status in ok:
            return None
        if once and exc.http_status >= 500:
            raise Unanswered(_refusal(service, request, exc.http_status,
                                      exc))
        _refused(service, request, exc.http_status, exc)
    except ks_exc.ClientException as exc:
        message = '%s call %s failed: %s' % (service, request, exc)
        if once and isinstance(exc, ks_exc.RetriableConnectionFailure):
            raise Unanswered(message)
        raise exceptions.PluginError(message)
    if response.status_code == 204 or not response.content:
        return None
    return response.json()


def sdk_call(service, request, function, *args, ok=(), **kwargs):
    """Call ``function(*args, **kwargs)``, a call of openstacksdk's.

    Its failures raise as :func:`call`'s do, but for the timeout and the
    failure of openstacksdk's waits (``ResourceTimeout``,
    ``ResourceFailure``), which the caller words.

    :param request: the request as errors name it (``GET /servers/1``).
    :param ok: the status codes of a refusal that returns None.
    """
    try:
        return function(*args, **kwargs)
    except (sdk_exc.ResourceTimeout, sdk_exc.ResourceFailure):
        raise
    except sdk_exc.HttpException as exc:
        if exc.status_code in ok:
            return None
        _refused(service, request, exc.status_code, exc)
    except (sdk_exc.SDKException, ks_exc.ClientException) as exc:
        raise exceptions.PluginError('%s call %s failed: %s' % (
            service, request, exc)) from exc


def retrying(adapter, attempt, retry_on):
    """Try ``attempt()`` again with backoff while it raises ``retry_on``.

    As often and with the delays of the adapter's connection retries.
    An attempt after an :class:`Unanswered` create must first look for
    what the create made.
    """
    retries = adapter.connect_retries or 0
    if adapter.connect_retry_delay is None:
        wait = tenacity.wait_exponential(multiplier=FIRST_DELAY,
                                         max=MAX_DELAY)
    else:
        wait = tenacity.wait_fixed(adapter.connect_retry_delay)

    def log(state):
        LOG.warning('Retrying in %.1f s (%d of %d): %s',
                    state.next_action.sleep, state.attempt_number, retries,
                    state.outcome.exception())

    return tenacity.Retrying(
        retry=tenacity.retry_if_exception_type(retry_on),
        stop=tenacity.stop_after_attempt(retries + 1), wait=wait,
        before_sleep=log, reraise=True)(attempt)


def _refusal(service, request, status, exc):
    """Return the message of a refusal of ``request`` (``status``)."""
    return '%s refused %s: %s %s' % (service, request, status,
                                     _error_message(exc))


def _refused(service, request, status, exc):
    """Raise what a refusal of ``request`` (``status``) raises."""
    message = _refusal(service, request, status, exc)
    if status == 409:
        raise Busy(message)
    raise exceptions.PluginError(message)


def _described(method, path, body):
    """Name a request as its errors name it: an action with its name."""
    if path.endswith('/action') and isinstance(body, dict):
        return '%s %s %s' % (method, path, ' '.join(sorted(body)))
    return '%s %s' % (method, path)


def _error_message(exc):
    """Return what the service said.

    The ``message`` of Nova's and Cinder's ``{"<fault>": {"message":
    ...}}`` bodies, the ``faultstring`` of Ironic's ``{"error_message":
    "<JSON text>"}`` (``exc`` is keystoneauth1's or openstacksdk's).
    """
    try:
        [fault] = exc.response.json().values()
        if isinstance(fault, str):
            return json.loads(fault)['faultstring']
        return fault['message']
    except (AttributeError, KeyError, TypeError, ValueError):
        return exc.details or exc.message
