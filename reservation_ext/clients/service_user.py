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
options; Nova and Cinder are found through the catalog. Failed
connections and 5xx answers are retried with backoff (the adapter's
``connect_retries`` and ``status_code_retries``, 3 unless configured).
"""

from keystoneauth1 import exceptions as ks_exc
from keystoneauth1 import loading as ks_loading

from reservation_ext import conf as conf_mod
from reservation_ext import exceptions

DEFAULT_RETRIES = 3
RETRIED_STATUS_CODES = (500, 502, 503, 504)


def adapter(conf, service_type, **kwargs):
    """An adapter for ``service_type`` (extra adapter arguments allowed)."""
    group = conf_mod.CLIENT_GROUP
    auth = ks_loading.load_auth_from_conf_options(conf, group)
    session = ks_loading.load_session_from_conf_options(conf, group,
                                                        auth=auth)
    result = ks_loading.load_adapter_from_conf_options(
        conf, group, session=session, auth=auth, service_type=service_type,
        **kwargs)
    for option in ('connect_retries', 'status_code_retries'):
        if getattr(result, option) is None:
            setattr(result, option, DEFAULT_RETRIES)
    result.retriable_status_codes = list(RETRIED_STATUS_CODES)
    return result


def call(adapter, service, method, path, ok=(), **kwargs):
    """Send a request; return its JSON body (None for ``ok`` codes).

    :param service: the service's name for error messages (``Nova``).
    :raises PluginError: any other failure, with what the service said.
    """
    try:
        response = adapter.request(path, method, **kwargs)
    except ks_exc.HttpError as exc:
        if exc.http_status in ok:
            return None
        raise exceptions.PluginError('%s refused %s %s: %s %s' % (
            service, method, path, exc.http_status, _error_message(exc)))
    except ks_exc.ClientException as exc:
        raise exceptions.PluginError('%s call %s %s failed: %s' % (
            service, method, path, exc))
    if response.status_code == 204 or not response.content:
        return None
    return response.json()


def _error_message(exc):
    """What the service said.

    The ``message`` of Nova's and Cinder's ``{"<fault>": {"message":
    ...}}`` bodies, which keystoneauth1 does not read.
    """
    try:
        [fault] = exc.response.json().values()
        return fault['message']
    except (AttributeError, KeyError, TypeError, ValueError):
        return exc.details or exc.message
