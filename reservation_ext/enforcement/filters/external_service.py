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

"""``ExternalServiceFilter``: an HTTP service decides (Blazar's protocol).

Each hook POSTs a JSON body to the service, as Blazar does, so that a
service written for Blazar works unchanged:

===============  ======================================================
URL              body
===============  ======================================================
``check-create`` ``{"context": {...}, "lease": {...}}``
``check-update`` ``{"context": {...}, "current_lease": {...},
                 "lease": {...}}``
``on-end``       ``{"context": {...}, "lease": {...}}``
===============  ======================================================

The URLs are ``check-create``, ``check-update`` and ``on-end`` resolved
against ``external_service_base_endpoint`` (``urljoin``, as Blazar), or
the ``external_service_*_endpoint`` that replaces one; a hook with no URL
is not called. Dates are ISO 8601 strings (naive, UTC). The headers are
``Content-Type: application/json`` and, when ``external_service_token``
is set, ``X-Auth-Token``. The calls go through a keystoneauth1 session
(no Keystone authentication) that verifies the service's certificate
against ``external_service_cafile`` (or the requests library's CA
bundle, or not at all with ``external_service_insecure``) and presents
``external_service_certfile``/``external_service_keyfile`` when set.

Answers: ``204`` allows. ``403`` refuses: the user gets 403 with the
body's ``"message"``; a 403 without one, or any other status, refuses
with a generic message (the answer is logged, not shown: it may tell what
the user must not see), as Blazar does. A service that cannot be reached
or does not answer within ``external_service_timeout`` makes a check fail
with 503 (Blazar lets the error through as a 500); either way nothing is
created or changed. ``on-end`` answers and failures are only logged.
"""

import json
from urllib import parse

from keystoneauth1 import exceptions as ks_exc
from keystoneauth1 import loading as ks_loading
from oslo_log import log as logging

from reservation_ext.enforcement.filters import base
from reservation_ext import exceptions

LOG = logging.getLogger(__name__)

GENERIC_REFUSAL = 'External service enforcement filter denied the request.'
_HOOKS = ('check-create', 'check-update', 'on-end')


class ExternalServiceFilter(base.Filter):
    """Ask the enforcement service of ``[enforcement]`` for a decision.

    :raises ValueError: when no URL at all is configured.
    """

    def __init__(self, conf, clock):
        super().__init__(conf, clock)
        self.urls = {hook: self._url(hook) for hook in _HOOKS}
        if not any(self.urls.values()):
            raise ValueError(
                'ExternalServiceFilter needs [enforcement] '
                'external_service_base_endpoint or an '
                'external_service_*_endpoint')
        self.session = session_from(conf)

    def check_create(self, context, lease):
        """See :meth:`Filter.check_create`."""
        self._post('check-create', {'context': context, 'lease': lease})

    def check_update(self, context, current_lease, lease):
        """See :meth:`Filter.check_update`."""
        self._post('check-update', {'context': context,
                                    'current_lease': current_lease,
                                    'lease': lease})

    def on_end(self, context, lease):
        """See :meth:`Filter.on_end`."""
        self._post('on-end', {'context': context, 'lease': lease})

    def _url(self, hook):
        given = getattr(self.conf, 'external_service_%s_endpoint'
                        % hook.replace('-', '_'))
        base_url = self.conf.external_service_base_endpoint
        if given or not base_url:
            return given
        return parse.urljoin(base_url, hook)

    def _post(self, hook, body):
        url = self.urls[hook]
        if not url:
            return
        try:
            # Not logged by keystoneauth1: the body names the user.
            answer = self.session.post(
                url, data=json.dumps(body, default=_iso_date),
                headers=self._headers(), raise_exc=False, log=False)
        except ks_exc.ConnectionError as exc:
            LOG.warning('Enforcement service %s failed: %s', url, exc)
            raise exceptions.EnforcementUnavailable(
                'The lease enforcement service did not answer; please '
                'retry later.') from exc
        if answer.status_code != 204:
            raise exceptions.EnforcementRefused(_refusal(url, answer))

    def _headers(self):
        headers = {'Content-Type': 'application/json'}
        if self.conf.external_service_token:
            headers['X-Auth-Token'] = self.conf.external_service_token
        return headers


def session_from(conf):
    """Return the keystoneauth1 session of the ``[enforcement]`` TLS options.

    It sends no Keystone token and waits ``external_service_timeout``
    seconds for each answer.
    """
    return ks_loading.session.Session().load_from_options(
        insecure=conf.external_service_insecure,
        cacert=conf.external_service_cafile,
        cert=conf.external_service_certfile,
        key=conf.external_service_keyfile,
        timeout=conf.external_service_timeout)


def _iso_date(value):
    """Serialize the dates of the bodies (the only non-JSON values) to JSON."""
    return value.isoformat()


def _refusal(url, answer):
    """Return the message of a refusing answer (see the module doc)."""
    message = None
    if answer.status_code == 403:
        try:
            message = answer.json().get('message')
        except (ValueError, AttributeError):
            pass
    if isinstance(message, str) and message:
        return message
    LOG.warning('Enforcement service %s answered %d: %r', url,
                answer.status_code, answer.content[:1000])
    return GENERIC_REFUSAL
