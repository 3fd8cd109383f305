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

"""A paste filter of cinder-api: request bodies that nobody can read.

Cinder's JSON reader fails with a 500 on a body nested thousands of
levels deep, before the reservation extension sees it. This filter, in
front of Cinder's API in ``etc/cinder/api-paste.ini``, answers such a
body (nested deeper than
:data:`reservation_ext.validation.MAX_DEPTH`, not UTF-8, with lone
surrogates) with Cinder's 400 fault naming ``body``; every other request
goes on unchanged.
"""

from oslo_serialization import jsonutils
import webob
import webob.dec

from reservation_ext import exceptions
from reservation_ext import validation


class BodyCheck:
    """Refuse unreadable JSON bodies with a 400, as Cinder's fault."""

    def __init__(self, application):
        self.application = application

    @webob.dec.wsgify
    def __call__(self, req):
        """Refuse an unreadable body; pass any other request on."""
        if req.content_length:
            try:
                validation.readable_json(req.body)
            except exceptions.InvalidInput as exc:
                return _fault(exc)
        return self.application


def _fault(exc):
    return webob.Response(
        status=400, content_type='application/json',
        body=jsonutils.dump_as_bytes(
            {'badRequest': {'code': 400, 'message': exc.message}}))


def filter_factory(global_conf, **local_conf):
    """Return :class:`BodyCheck` (the paste filter factory)."""
    return BodyCheck
