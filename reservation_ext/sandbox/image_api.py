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

"""Glance's v2 image API, over Nova's in-process images.

Nova's own image calls go to Nova's fake Glance
(``nova.tests.fixtures.GlanceFixture``, installed in the Nova process); the
clients (``nova boot --image``, ``openstack server create --image``,
``openstack image list``) look images up through the catalog's ``image``
endpoint. This app serves the same fake's images there, so both always
see the same images, snapshots included. It answers what the clients
need: the version document, ``GET /v2/images`` (filtered by name or
any other property) and ``GET /v2/images/{id}``; and what Cinder's
upload of a volume to an image needs: the image schema, ``POST
/v2/images``, ``PUT /v2/images/{id}/file`` (the data is counted and
checksummed, not kept) and ``DELETE /v2/images/{id}``.
keystonemiddleware checks the tokens.
"""

import datetime
import hashlib
import re

import webob
import webob.dec
import webob.exc

VERSION = 'v2.16'
IMAGE_PATH = re.compile(r'/v2/images/(?P<image_id>[^/]+)(?P<file>/file)?')
CHUNK = 65536
# Glance v2 shows these as they are; every other key of the fake's
# ``properties`` becomes a top-level property, as in Glance.
FIELDS = ('id', 'name', 'status', 'visibility', 'protected', 'tags',
          'container_format', 'disk_format', 'min_ram', 'min_disk', 'size',
          'checksum', 'owner', 'created_at', 'updated_at')


class ImageAPI:
    """A WSGI app serving the images of ``store`` (Nova's GlanceFixture)."""

    def __init__(self, store):
        self._store = store

    @webob.dec.wsgify
    def __call__(self, req):
        path = req.path_info.rstrip('/')
        if path in ('', '/versions', '/v2'):
            return self._versions(req)
        if path == '/v2/schemas/image':
            return webob.Response(json_body=SCHEMA)
        if path == '/v2/images':
            return self._images(req)
        match = IMAGE_PATH.fullmatch(path)
        if match is None:
            return webob.exc.HTTPNotFound()
        image = self._store.images.get(match.group('image_id'))
        if image is None:
            return webob.exc.HTTPNotFound(
                explanation='No image found with ID %s'
                % match.group('image_id'))
        if match.group('file'):
            return self._upload(req, image)
        return self._image(req, image)

    def _images(self, req):
        if req.method == 'POST':
            return self._create(req)
        if req.method == 'GET':
            return self._list(req)
        return webob.exc.HTTPMethodNotAllowed()

    def _image(self, req, image):
        if req.method == 'GET':
            return webob.Response(json_body=_glance_view(image))
        if req.method == 'DELETE':
            self._store.delete(None, image['id'])
            return webob.Response(status=204)
        return webob.exc.HTTPMethodNotAllowed()

    def _versions(self, req):
        return webob.Response(json_body={'versions': [{
            'id': VERSION, 'status': 'CURRENT',
            'links': [{'rel': 'self', 'href': req.host_url + '/v2/'}]}]})

    def _list(self, req):
        images = [_glance_view(image) for image in self._store.detail(None)]
        # As in Glance, any other key filters on a property's value.
        filters = {key: value for key, value in req.GET.items()
                   if key not in ('marker', 'limit', 'sort_key',
                                  'sort_dir', 'sort')}
        images = [image for image in images
                  if all(str(image.get(key)) == value
                         for key, value in filters.items())]
        if 'marker' in req.GET:
            # Everything fits in the first page.
            images = []
        return webob.Response(json_body={
            'images': images, 'first': '/v2/images',
            'schema': '/v2/schemas/images'})

    def _create(self, req):
        """A ``queued`` image, owned by the token's project.

        As in Glance, an admin may name another ``owner``.
        """
        body = req.json_body
        if not isinstance(body, dict):
            return webob.exc.HTTPBadRequest(explanation='Expected an object')
        if 'admin' not in req.headers.get('X-Roles', '').split(','):
            body.pop('owner', None)
        metadata = {key: body.pop(key) for key in list(body)
                    if key in FIELDS}
        metadata.setdefault('visibility', 'shared')
        metadata.setdefault('owner', req.headers.get('X-Project-Id'))
        metadata.update({'status': 'queued', 'size': None,
                         'properties': body})
        image = self._store.create(None, metadata)
        return webob.Response(status=201, json_body=_glance_view(image))

    def _upload(self, req, image):
        """Take the data of a ``queued`` image; it becomes ``active``."""
        if req.method != 'PUT':
            return webob.exc.HTTPMethodNotAllowed()
        if image['status'] != 'queued':
            return webob.exc.HTTPConflict(
                explanation='Image status transition from %s to saving is '
                            'not allowed' % image['status'])
        size, checksum = 0, hashlib.md5(usedforsecurity=False)
        for chunk in _body_chunks(req.environ):
            size += len(chunk)
            checksum.update(chunk)
        self._store.update(None, image['id'], {
            'status': 'active', 'size': size,
            'checksum': checksum.hexdigest()})
        return webob.Response(status=204)


# What glanceclient validates images against: the fields above, and any
# other property as a string.
SCHEMA = {
    'name': 'image',
    'properties': {key: {} for key in FIELDS + ('self', 'file', 'schema')},
    'additionalProperties': {'type': 'string'},
    'links': [{'rel': 'self', 'href': '{self}'},
              {'rel': 'enclosure', 'href': '{file}'},
              {'rel': 'describedby', 'href': '{schema}'}],
}


def _body_chunks(environ):
    """The request body in pieces; wsgiref leaves chunked bodies encoded."""
    stream = environ['wsgi.input']
    if environ.get('HTTP_TRANSFER_ENCODING', '').lower() != 'chunked':
        left = int(environ.get('CONTENT_LENGTH') or 0)
        while left:
            chunk = stream.read(min(left, CHUNK))
            if not chunk:
                return
            left -= len(chunk)
            yield chunk
        return
    while True:
        size = int(stream.readline().split(b';')[0], 16)
        if size == 0:
            stream.readline()
            return
        yield stream.read(size)
        stream.readline()


def _glance_view(image):
    """The Glance v2 body of an image of Nova's fake Glance."""
    view = dict(image.get('properties', {}))
    view.update({key: image.get(key) for key in FIELDS})
    for key in ('created_at', 'updated_at'):
        if isinstance(view[key], datetime.datetime):
            view[key] = view[key].strftime('%Y-%m-%dT%H:%M:%SZ')
    view.update({
        'self': '/v2/images/%s' % image['id'],
        'file': '/v2/images/%s/file' % image['id'],
        'schema': '/v2/schemas/image',
    })
    return view
