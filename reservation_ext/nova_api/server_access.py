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

"""Who sees a server that waits for its lease, and who may change it.

A RESERVED server is a BuildRequest in Nova (:mod:`.held_builds`) until
its lease starts: months, where Nova keeps one for seconds. Nova reads an
instance with ``project_only`` (a normal user of another project finds
nothing: 404), but a BuildRequest by its id alone, so for a RESERVED
server another project would learn from Nova's policy (403) that the
server exists. :func:`install` makes Nova's lookup of a server treat a
BuildRequest as it treats an instance: a normal user (not an
administrator) of another project gets Nova's own ``InstanceNotFound``.
Nova then answers every call of that project on the server itself,
exactly as it answers for a server that does not exist (its body checks
first, then 404).

Whoever sees the server is then asked Nova's own policy rule of the call
(:func:`authorize_change`, :mod:`reservation_ext.operation_rules`), so an
operator's policy file applies. A reader is
refused (403) as Nova refuses it, before the middleware says why a
RESERVED server cannot change (409).
"""

import functools

from nova.compute import api as compute_api
from nova import context as nova_context
from nova import exception as nova_exc
from nova import policies as nova_policies

from reservation_ext import exceptions
from reservation_ext.nova_api import wrapping
from reservation_ext import operation_rules


def hidden(ctx, project_id):
    """Return whether Nova hides an object of ``project_id`` from ``ctx``.

    As Nova's ``project_only`` queries: from a normal user (not an
    administrator) of another project.
    """
    return (nova_context.is_user_context(ctx) and
            ctx.project_id != project_id)


def install():
    """Wrap Nova's ``compute.api.API._get_instance`` once (see above)."""
    wrapping.wrap_once(compute_api.API, '_get_instance', _hiding)


def _hiding(original):
    def _get_instance(self, context, instance_uuid, *args, **kwargs):
        instance = original(self, context, instance_uuid, *args, **kwargs)
        if hidden(context, instance.project_id):
            raise nova_exc.InstanceNotFound(instance_id=instance_uuid)
        return instance
    return _get_instance


def visible_server(api, ctx, server_id):
    """Return the server as Nova shows it to ``ctx``, or None if none."""
    try:
        return api.get(ctx, server_id)
    except nova_exc.InstanceNotFound:
        return None


def authorize_change(ctx, instance, method, sub, action):
    """Raise Forbidden unless Nova's rule of the call allows ``ctx``.

    :param sub: the path below ``/servers/{id}`` (None for the server);
        ``action`` the action's name for ``/action``, else None.
    """
    rule = _rules().rule(method, sub, action)
    if rule is None:
        return
    target = {'project_id': instance.project_id,
              'user_id': instance.user_id}
    try:
        ctx.can(rule, target)
    except nova_exc.Forbidden as exc:
        raise exceptions.Forbidden(exc.format_message()) from exc


@functools.lru_cache(maxsize=None)
def _rules():
    return operation_rules.OperationRules(nova_policies.list_rules(),
                                          '/servers/{server_id}')
