"""The read side of Glance's v2 image API, over Nova's in-process images.

Nova's own image calls go to Nova's fake Glance
(``nova.tests.fixtures.GlanceFixture``, installed in the Nova process); the
clients (``nova boot --image``, ``openstack server create --image``,
``openstack image list``) look images up through the catalog's ``image``
endpoint. This app serves the same fake's images there, so both always
see the same images, snapshots included. It answers what the clients
need: the version document, ``GET /v2/images`` (with the ``name``
filter) and ``GET /v2/images/{id}``; keystonemiddleware checks the tokens.
"""

import datetime
import re

import webob
import webob.dec
import webob.exc

VERSION = 'v2.16'
IMAGE_PATH = re.compile(r'/v2/images/(?P<image_id>[^/]+)')
# Glance v2 shows these as they are; every other key of the fake's
# ``properties`` becomes a top-level property, as in Glance.
FIELDS = ('id', 'name', 'status', 'visibility', 'protected', 'tags',
          'container_format', 'disk_format', 'min_ram', 'min_disk', 'size',
          'checksum', 'created_at', 'updated_at')


class ImageAPI:
    """A WSGI app serving the images of ``store`` (Nova's GlanceFixture)."""

    def __init__(self, store):
        self._store = store

    @webob.dec.wsgify
    def __call__(self, req):
        path = req.path_info.rstrip('/')
        if path in ('', '/versions', '/v2'):
            return self._versions(req)
        if req.method != 'GET':
            return webob.exc.HTTPMethodNotAllowed()
        if path == '/v2/images':
            return self._list(req)
        match = IMAGE_PATH.fullmatch(path)
        if match:
            return self._show(req, match.group('image_id'))
        return webob.exc.HTTPNotFound()

    def _versions(self, req):
        return webob.Response(json_body={'versions': [{
            'id': VERSION, 'status': 'CURRENT',
            'links': [{'rel': 'self', 'href': req.host_url + '/v2/'}]}]})

    def _list(self, req):
        images = [_glance_view(image) for image in self._store.detail(None)]
        if 'name' in req.GET:
            images = [i for i in images if i['name'] == req.GET['name']]
        if 'marker' in req.GET:
            # Everything fits in the first page.
            images = []
        return webob.Response(json_body={
            'images': images, 'first': '/v2/images',
            'schema': '/v2/schemas/images'})

    def _show(self, req, image_id):
        image = self._store.images.get(image_id)
        if image is None:
            return webob.exc.HTTPNotFound(
                explanation='No image found with ID %s' % image_id)
        return webob.Response(json_body=_glance_view(image))


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
