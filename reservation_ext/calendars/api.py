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

"""The lease API, as the user of a Horizon request, through blazarclient.

As blazar-dashboard's client does: a keystoneauth token plugin with the
user's token and project, so that python-blazarclient finds the
``reservation`` endpoint in the Keystone catalog and every call is the
user's own (the lease API's policy decides what they see). The calls
python-blazarclient has no method for (availability, proposals, a lease
from a proposal, all allocations) go through its JSON adapter, as the
OpenStackClient plugin's commands do (:mod:`reservation_ext.osc.v1`),
so that errors are its ``BlazarClientException`` with the API's
message. The admin calendar's servers come from Nova's ``compute``
endpoint in the catalog with the same session (:func:`all_servers`);
its errors are keystoneauth's.
"""

import urllib.parse

from blazarclient import client as blazar_client
from django.conf import settings
from keystoneauth1 import adapter
from keystoneauth1.identity import v3
from keystoneauth1 import session

from reservation_ext.clients import compute


def _session(request):
    """A keystoneauth session acting as the request's user."""
    auth = v3.Token(settings.OPENSTACK_KEYSTONE_URL,
                    request.user.token.id,
                    project_id=request.user.project_id,
                    project_domain_id=request.session.get('domain_context'))
    insecure = getattr(settings, 'OPENSTACK_SSL_NO_VERIFY', False)
    cacert = getattr(settings, 'OPENSTACK_SSL_CACERT', None)
    # Horizon's own rule: no verification if insecure, else its CA file
    # when it has one.
    verify = not insecure and (cacert or True)
    return session.Session(auth=auth, verify=verify)


def client(request):
    """A python-blazarclient client acting as the request's user."""
    return blazar_client.Client(session=_session(request))


def _json(request):
    """python-blazarclient's JSON adapter of the lease API."""
    return client(request).lease.request_manager


def project_leases(request):
    """The leases of the request's project (GET /v1/leases)."""
    # An administrator lists every project's leases by default; the
    # project calendar is about the current project only.
    query = urllib.parse.urlencode({'project_id': request.user.project_id})
    _resp, body = _json(request).get('/leases?' + query)
    return body['leases']


def all_leases(request):
    """Every lease the caller may list (all projects', for an admin)."""
    _resp, body = _json(request).get('/leases')
    return body['leases']


def availability(request, query):
    """GET /v1/availability with ``query`` ((key, value) pairs)."""
    _resp, body = _json(request).get(
        '/availability?' + urllib.parse.urlencode(query))
    return body['availability']


def propose(request, body):
    """POST /v1/leases/proposals; the proposals."""
    _resp, answer = _json(request).post('/leases/proposals', body=body)
    return answer['proposals']


def lease_from_proposal(request, proposal_id, name):
    """POST /v1/leases with a proposal: the lease gets its window."""
    _resp, answer = _json(request).post('/leases', body={
        'name': name, 'proposal_id': proposal_id})
    return answer['lease']


def hosts(request):
    """The reservable hosts (GET /v1/os-hosts), as the API shows them."""
    _resp, body = _json(request).get('/os-hosts')
    return body['hosts']


def allocations(request):
    """Every host's bookings (GET /v1/os-hosts/allocations)."""
    _resp, body = _json(request).get('/os-hosts/allocations')
    return body['allocations']


def all_servers(request):
    """Every project's servers (Nova's GET /servers/detail?all_tenants=1).

    At the engine's microversion, which shows each server's flavor with
    its extra specs and its scheduler hints; page after page, as Nova
    cuts a long list (``[api] max_limit``).
    """
    nova = adapter.Adapter(session=_session(request), service_type='compute',
                           default_microversion=compute.HINTS_MICROVERSION)
    return compute.every_server(lambda query: nova.get(
        '/servers/detail', params=query).json(), {'all_tenants': 1})
