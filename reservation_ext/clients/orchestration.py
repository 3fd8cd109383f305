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
preview at the lease's create, the service user through the caller's
trust for the stack's create and delete at the lease's start and end
(:mod:`.identity`). The requests go through the adapter of
``[reservation_client]`` (:func:`.service_user.adapter`), found through
the catalog as ``orchestration``, with that auth instead of the service
user's. A preview changes nothing: keystoneauth1 retries it as a read.

A template Heat refuses (400) raises :class:`TemplateRefused` with
Heat's reason, for the caller to show; other failures raise
:class:`~reservation_ext.exceptions.PluginError`.

The waits for a stack made or deleted are deferred in an engine's event
(:mod:`.deferral`): they name the trust that reads the stack again.
"""

from keystoneauth1 import exceptions as ks_exc

from reservation_ext.clients import deferral
from reservation_ext.clients import polling
from reservation_ext.clients import service_user
from reservation_ext import exceptions

SERVICE = 'Heat'
DELETE_COMPLETE = 'DELETE_COMPLETE'
DELETE_IN_PROGRESS = 'DELETE_IN_PROGRESS'
# How deep Heat lists the resources of nested stacks (resource groups of
# templates of resource groups...).
NESTED_DEPTH = 5


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

    def ensure_stack(self, auth, name, template, parameters,
                     environment=None, files=None):
        """Return the id of the stack ``name``, created once.

        A stack of that name in the project is taken as the one an
        earlier attempt made (the engine names a lease's stack after its
        reservation).

        :param files: ``(environment_files, files)``: environments
            merged before ``environment``, and the files they and the
            template name, by name.
        :raises TemplateRefused: Heat refused the stack.
        """
        found = self.find_stack(auth, name)
        if found is not None:
            return found['id']
        body = {'stack_name': name, 'template': template,
                'parameters': parameters, 'disable_rollback': True}
        if environment:
            body['environment'] = environment
        if files and files[0]:
            body['environment_files'], body['files'] = files
        try:
            response = self._adapter.post(
                '/stacks', json=body, auth=auth, raise_exc=True,
                connect_retries=0, status_code_retries=0)
        except ks_exc.BadRequest as exc:
            raise TemplateRefused(_reason(exc.response)) from None
        except ks_exc.ClientException as exc:
            raise exceptions.PluginError(
                'Heat call POST /stacks failed: %s' % exc) from None
        return response.json()['stack']['id']

    def find_stack(self, auth, name_or_id):
        """Return Heat's view of a stack (``id``, ``stack_status``, ...).

        None when the project has no such stack (or it was deleted).
        """
        found = service_user.call(self._adapter, SERVICE, 'GET',
                                  '/stacks/%s' % name_or_id, ok=(404,),
                                  auth=auth)
        if found is None or found['stack']['stack_status'] == (
                DELETE_COMPLETE):
            return None
        return found['stack']

    def stack_status(self, auth, stack_id):
        """Return a stack's status, or None if it is gone."""
        stack = self.find_stack(auth, stack_id)
        return stack and stack['stack_status']

    def wait_for_stack(self, auth, stack_id, pending, timeout=3600,
                       interval=2, scope=None):
        """Return a stack's view once its status is not in ``pending``.

        None if it is gone.

        :param scope: the trust of ``auth``: in an engine's event, the
            wait is deferred (looked at once) with it.
        """
        return polling.wait_for(
            lambda: self.find_stack(auth, stack_id),
            lambda stack: stack is None or
            stack['stack_status'] not in pending, timeout, interval,
            lambda stack: 'Heat stack %s is still %s after %d s' % (
                stack_id, stack and stack['stack_status'], timeout),
            scope and deferral.Wait(deferral.STACK, stack_id,
                                    pending=pending, scope=scope))

    def delete_stack(self, auth, stack_id, timeout=3600, interval=2,
                     scope=None):
        """Delete a stack and wait until it is gone (gone already: fine).

        A stack being deleted is waited for, not deleted again (Heat would
        cancel the delete under way to start another).

        :raises PluginError: Heat could not delete it (``DELETE_FAILED``
            with Heat's reason).
        """
        if self.stack_status(auth, stack_id) not in (None,
                                                     DELETE_IN_PROGRESS):
            service_user.call(self._adapter, SERVICE, 'DELETE',
                              '/stacks/%s' % stack_id, ok=(404,), auth=auth)
        stack = self.wait_for_stack(auth, stack_id, (DELETE_IN_PROGRESS,),
                                    timeout, interval, scope)
        if stack is not None:
            raise exceptions.PluginError(
                'Heat could not delete stack %s: %s %s' % (
                    stack_id, stack['stack_status'],
                    stack['stack_status_reason']))

    def stack_resources(self, auth, name, stack_id, types):
        """Return ``[(resource_type, physical_id)]`` of a stack's resources.

        Those of ``types`` that exist, in nested stacks too, in the order
        Heat lists them.
        """
        found = service_user.call(
            self._adapter, SERVICE, 'GET', '/stacks/%s/%s/resources' % (
                name, stack_id), params={'nested_depth': NESTED_DEPTH},
            auth=auth)
        return [(resource['resource_type'], resource['physical_resource_id'])
                for resource in found['resources']
                if resource['resource_type'] in types and
                resource['physical_resource_id']]


def _reason(response):
    """Return Heat's reason for a refusal (its ``error.message``)."""
    try:
        return response.json()['error']['message']
    except (ValueError, KeyError, TypeError):
        return response.text
