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

"""How to reach a host's BMC, and which host properties are secret.

A host's BMC access has the fields ``address`` (``http(s)://host[:port]``),
``system_id`` (the Redfish ComputerSystem's id or path; unset: the BMC's
only system), ``username``, ``password`` and ``verify`` (TLS: true, false,
or a CA bundle's path; default true). They come from two places, the
second taking over field by field:

- ``[power] credentials_file``: a YAML mapping of hypervisor hostname to
  those fields, read at every call (an edit takes effect at once, without
  a restart), so that credentials need not be in the leases DB;
- the host's extra capabilities ``redfish_<field>``.

:data:`SECRET_PROPERTIES` are the extra capabilities that no view shows
(``/v1/os-hosts``, its ``properties`` listing, the allocations' host
views): :func:`is_secret` is the one test of it.
"""

import dataclasses

from oslo_utils import strutils
import yaml

from reservation_ext import exceptions
from reservation_ext.power import drivers
from reservation_ext import validation

PROPERTY_PREFIX = 'redfish_'
FIELDS = ('address', 'system_id', 'username', 'password', 'verify')
SECRET_PROPERTIES = frozenset((PROPERTY_PREFIX + 'username',
                               PROPERTY_PREFIX + 'password'))
# Where Redfish puts the ComputerSystems (DSP0266's fixed URI).
SYSTEMS_PATH = '/redfish/v1/Systems/'

# Every schema says what a valid value is (the error's reason), so that
# no error quotes a value, which could be a password.
ACCESS_SCHEMA = {
    'type': 'object',
    'properties': {
        'address': {'type': 'string', 'pattern': '^https?://[^/]+/?$',
                    'description': 'an http:// or https:// URL of the '
                                   'BMC, without a path'},
        'system_id': {'type': 'string', 'minLength': 1,
                      'description': 'a Redfish ComputerSystem id or path'},
        'username': {'type': 'string', 'description': 'a string'},
        'password': {'type': 'string', 'description': 'a string'},
        'verify': {'type': ['boolean', 'string'],
                   'description': 'true, false or a CA bundle path'},
    },
    'additionalProperties': False,
}
FILE_SCHEMA = {'type': 'object', 'additionalProperties': ACCESS_SCHEMA,
               'description': 'a mapping of hypervisor hostname to BMC '
                              'access'}


def is_secret(name):
    """Return whether the capability ``name`` is a secret no view shows."""
    return name in SECRET_PROPERTIES


def without_secrets(capabilities):
    """Return ``capabilities`` (name: value) less the secret ones."""
    return {name: value for name, value in capabilities.items()
            if not is_secret(name)}


@dataclasses.dataclass(frozen=True)
class BmcAccess:
    """Say where one host's BMC is and how to log in to it."""

    address: str
    system_id: str = None
    username: str = None
    password: str = dataclasses.field(default=None, repr=False)
    verify: object = True

    @property
    def system_path(self):
        """Return the ComputerSystem's path, or None for the BMC's only one."""
        if self.system_id is None or self.system_id.startswith('/'):
            return self.system_id
        return SYSTEMS_PATH + self.system_id


def read_file(path):
    """Return the credentials file's entries: ``{hostname: {field: value}}``.

    :raises drivers.PowerError: the file is unreadable or malformed.
    """
    try:
        with open(path) as stream:
            entries = yaml.safe_load(stream) or {}
    except (OSError, yaml.YAMLError) as exc:
        raise drivers.PowerError(
            'power credentials file %s: %s' % (path, exc)) from exc
    try:
        validation.check_schema(entries, FILE_SCHEMA, field=path)
    except exceptions.InvalidInput as exc:
        raise drivers.PowerError(
            'power credentials file %s' % exc) from exc
    return entries


def bmc_access(target, credentials_file=None):
    """Return the BMC access of ``target``: its file entry, then properties.

    :raises drivers.PowerError: the host has no BMC address, or a value
        is malformed; the message names the host and the field.
    """
    fields = {}
    if credentials_file:
        fields.update(read_file(credentials_file).get(
            target.hypervisor_hostname, {}))
    for field in FIELDS:
        value = target.properties.get(PROPERTY_PREFIX + field)
        if value is not None:
            fields[field] = value
    name = target.hypervisor_hostname
    if not fields.get('address'):
        raise drivers.PowerError(
            'host %s has no BMC address: give it the extra capability '
            '%saddress or an entry in [power] credentials_file' % (
                name, PROPERTY_PREFIX))
    try:
        validation.check_schema(fields, ACCESS_SCHEMA)
    except exceptions.InvalidInput as exc:
        raise drivers.PowerError('host %s: BMC access %s: %s' % (
            name, exc.field, exc.reason)) from exc
    fields['verify'] = _verify(fields.get('verify', True))
    return BmcAccess(**fields)


def _verify(value):
    """Return True, False or a CA bundle's path, from YAML or a capability."""
    if isinstance(value, bool):
        return value
    if value.lower() in strutils.TRUE_STRINGS + strutils.FALSE_STRINGS:
        return strutils.bool_from_string(value, strict=True)
    return value
