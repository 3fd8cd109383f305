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

"""The calls reservation-ext makes to Heat's orchestration API.

Heat's URLs name the project (``/v1/{project_id}``), so each call is made
with the auth of someone in the stack's project: the lease's caller for a
preview at the lease's create. The requests go through the adapter of
``[reservation_client]`` (:func:`.service_user.adapter`), found through
the catalog as ``orchestration``, with that auth instead of the service
user's. A preview changes nothing: keystoneauth1 retries it as a read.

A template Heat refuses (400) raises :class:`TemplateRefused` with
Heat's reason, for the caller to show; other failures raise
:class:`~reservation_ext.exceptions.PluginError`.
"""

from keystoneauth1 import exceptions as ks_exc

from reservation_ext.clients import service_user
from reservation_ext import exceptions

SERVICE = 'Heat'


class TemplateRefused(exceptions.PluginError):
    """Heat refused a template, its parameters or its environment."""


class HeatClient:
    """Orchestration API calls, each made as a user of the stack's project.

    :param transport: the ``requests.Session`` that sends the requests
        (see :func:`.service_user.adapter`).
    """

    def __init__(self, conf, transport=None):
        self._adapter = service_user.adapter(conf, 'orchestration',
                                             transport)

    def preview(self, auth, name, template, parameters, environment=None):
        """Return Heat's preview of a stack: ``{'resources': [...], ...}``.

        Heat validates the template, its parameters and environment as the
        user of ``auth`` (the flavors, images and networks they name must
        be theirs to use) and lists the resources it would make, those of
        nested stacks (resource groups) in nested lists.

        :param auth: the keystoneauth1 plugin of a user of the project.
        :raises TemplateRefused: Heat found the stack invalid.
        """
        body = {'stack_name': name, 'template': template,
                'parameters': parameters}
        if environment:
            body['environment'] = environment
        try:
            response = self._adapter.post('/stacks/preview', json=body,
                                          auth=auth, raise_exc=True)
        except ks_exc.BadRequest as exc:
            raise TemplateRefused(_reason(exc.response)) from None
        except ks_exc.ClientException as exc:
            raise exceptions.PluginError(
                'Heat call POST /stacks/preview failed: %s' % exc) from None
        return response.json()['stack']


def _reason(response):
    """Return Heat's reason for a refusal (its ``error.message``)."""
    try:
        return response.json()['error']['message']
    except (ValueError, KeyError, TypeError):
        return response.text
