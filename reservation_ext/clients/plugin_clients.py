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

"""The clients a resource plugin acts through: Nova, Cinder, Neutron, Heat.

The engine and the lease API give the plugins the service user's clients
(:mod:`.compute`, :mod:`.block_storage`, :mod:`.network`); nova-api and
cinder-api give clients that act in process instead. A client that is not
given is the service user's, made at first use: the lease API may never
call Nova for a volume plugin, and makes no Keystone session for it.

The service user's clients send their requests through ``transport``
(a ``requests.Session``) when one is given: the fault-injecting one of
the tests, for instance.
"""

import functools

from reservation_ext.clients import block_storage
from reservation_ext.clients import compute
from reservation_ext.clients import identity
from reservation_ext.clients import image
from reservation_ext.clients import network
from reservation_ext.clients import orchestration


class PluginClients:
    """``nova``, ``cinder``, ``network``: the given or the service user's.

    ``heat``, ``trusts`` (Keystone trusts) and ``images`` are always the
    service user's adapter's, made at first use.
    """

    def __init__(self, conf, nova=None, cinder=None, transport=None,
                 network=None):
        self._conf = conf
        self._transport = transport
        if nova is not None:
            self.nova = nova
        if cinder is not None:
            self.cinder = cinder
        if network is not None:
            self.network = network

    @functools.cached_property
    def nova(self):
        """Return the Nova client (:class:`.compute.NovaClient`)."""
        return compute.NovaClient(self._conf, self._transport)

    @functools.cached_property
    def cinder(self):
        """Return the Cinder client (:class:`.block_storage.CinderClient`)."""
        return block_storage.CinderClient(self._conf, self._transport)

    @functools.cached_property
    def network(self):
        """Return the Neutron client (:class:`.network.NeutronClient`)."""
        return network.NeutronClient(self._conf, self._transport)

    @functools.cached_property
    def heat(self):
        """Return the Heat client (:class:`.orchestration.HeatClient`)."""
        return orchestration.HeatClient(self._conf, self._transport)

    @functools.cached_property
    def trusts(self):
        """Return the trusts client (:class:`.identity.TrustClient`)."""
        return identity.TrustClient(self._conf, self._transport)

    @functools.cached_property
    def images(self):
        """Return the image API client (:class:`.image.ImageClient`)."""
        return image.ImageClient(self._conf, self._transport)
