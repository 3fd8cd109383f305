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

"""Nova's and Cinder's documented response schemas, as tempest checks them.

Strict clients validate every server and volume view against these
schemas, whose objects have ``additionalProperties: false``: a key of
ours outside ``metadata`` fails them. The schemas, their choice by
microversion and the check are tempest's own: the tables of tempest's
servers and volumes clients (``schema_versions_info``), their
``get_schema`` and :meth:`RestClient.validate_response`.
"""

import fixtures
from tempest.lib.common import api_version_request
from tempest.lib.common import rest_client
from tempest.lib.services.compute import base_compute_client
from tempest.lib.services.compute import servers_client
from tempest.lib.services.volume import base_client as volume_base
from tempest.lib.services.volume.v3 import volumes_client

SERVERS = servers_client.ServersClient.schema_versions_info
VOLUMES = volumes_client.VolumesClient.schema_versions_info
# What tempest's clients validate without a microversion table.
COMPUTE_BASE = servers_client.schema
VOLUME_BASE = volumes_client.schema


class Answer(dict):
    """An answer's headers with its status, as tempest's clients get it."""

    def __init__(self, status, headers=()):
        super().__init__((key.lower(), value) for key, value in
                         dict(headers).items())
        self.status = status


def microversions(table, first, latest):
    """The microversions at which tempest changes a schema, up to ``latest``.

    The first of each row of ``table`` (``first`` for the row without a
    minimum), and ``latest`` itself: the service's newest.
    """
    versions = [row['min'] or first for row in table]
    newest = api_version_request.APIVersionRequest(latest)
    return [version for version in versions
            if api_version_request.APIVersionRequest(version) <= newest] + (
        [] if latest in versions else [latest])


def compute_schema(microversion):
    """The module of tempest's server schemas for ``microversion``."""
    with fixtures.MonkeyPatch(base_compute_client.__name__ +
                              '.COMPUTE_MICROVERSION', microversion):
        return base_compute_client.BaseComputeClient.get_schema(
            None, SERVERS)


def volume_schema(microversion):
    """The module of tempest's volume schemas for ``microversion``."""
    with fixtures.MonkeyPatch(volume_base.__name__ + '.VOLUME_MICROVERSION',
                              microversion):
        return volume_base.BaseClient.get_schema(None, VOLUMES)


def validate(schema, status, body, headers=()):
    """Check an answer as tempest does; raise what tempest raises.

    :raises tempest.lib.exceptions.InvalidHTTPResponseBody: the body is
        not what the schema documents (the message names the key).
    """
    rest_client.RestClient.validate_response(
        schema, Answer(status, headers), body)
