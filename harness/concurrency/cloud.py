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

"""The sandbox the concurrent clients work in.

:func:`connect` gives each client a project of its own in the sandbox's
Keystone (one user, ``concurrency``, a member of every one of them) and
a token scoped to it, and says where the APIs are: the lease API of the
sandbox's nova-api and of the extra lease API workers, nova-api's compute
API (servers booted with the lease hints) and cinder-api (reserved
volumes).
"""

import dataclasses
import secrets

from keystoneauth1.identity import v3
from keystoneauth1 import session as ks_session
from keystoneclient.v3 import client as ks_client

from reservation_ext.sandbox import config

USER = 'concurrency'
ROLE = 'member'


@dataclasses.dataclass(frozen=True)
class Cloud:
    """Where the clients send their requests, and as whom.

    :param lease_apis: base URLs of the lease API (``.../v1``).
    :param credentials: ``(project id, token)`` of each client.
    :param flavors: Nova's flavors (their views).
    """

    lease_apis: list
    compute: str
    volume: str
    image: str
    credentials: list
    flavors: list


def connect(layout, clients, workers):
    """A :class:`Cloud` of ``clients`` projects.

    :param workers: the lease API URLs of the extra workers; the sandbox's
        nova-api serves the lease API too.
    """
    session = config.session(layout)
    admin = ks_client.Client(session=session)
    password = secrets.token_urlsafe(12)
    user = admin.users.create(name=USER, password=password,
                              domain=config.DOMAIN_ID)
    role = admin.roles.find(name=ROLE)
    credentials = []
    for index in range(clients):
        project = admin.projects.create(name='%s-%02d' % (USER, index),
                                        domain=config.DOMAIN_ID)
        admin.roles.grant(role, user=user, project=project)
        lift_quotas(session, project.id)
        credentials.append((project.id, _token(layout, user.id, password,
                                               project.id)))
    endpoints = {service_type: url for service_type, (_name, url)
                 in layout.endpoints.items()}
    flavors = session.get('/flavors/detail', endpoint_filter={
        'service_type': 'compute'}).json()['flavors']
    return Cloud(lease_apis=[endpoints['reservation']] + list(workers),
                 compute=endpoints['compute'], volume=endpoints['volumev3'],
                 image=config.IMAGE_ID, credentials=credentials,
                 flavors=flavors)


def lift_quotas(session, project_id):
    """Lift a project's Nova and Cinder quotas, as ``openstack quota set``.

    The clients race for capacity, not for quota: Nova's and Cinder's
    quotas over a lease's window would otherwise refuse most of their
    requests with a 403.
    """
    for service_type, quota_set in (
            ('compute', {'instances': -1, 'cores': -1, 'ram': -1}),
            ('volumev3', {'volumes': -1, 'gigabytes': -1})):
        session.put('/os-quota-sets/%s' % project_id,
                    json={'quota_set': quota_set},
                    endpoint_filter={'service_type': service_type})


def _token(layout, user_id, password, project_id):
    auth = v3.Password(auth_url=layout.auth_url, user_id=user_id,
                       password=password, project_id=project_id)
    return ks_session.Session(auth=auth).get_token()
