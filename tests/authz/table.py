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

"""The authorization table: what each persona gets from each call.

A row is one call (an endpoint of the lease API, a server or volume
action on a reserved or leased resource, a boot with a hint) with the
outcome expected for each of the six personas:

``admin``
    role admin (and member, reader) in a project of its own;
``member``, ``reader``
    of the project that owns the lease, server or volume;
``other``
    a member of another project;
``shared``
    a member of a project the owner's host lease is shared with
    (``projects``);
``no token``
    a request without a token, which keystonemiddleware refuses.

An outcome is a status code (2xx: allowed; 403: a policy refusal, for
who may know that the resource exists; 404: another project learns
nothing, the same answer as for a resource that does not exist; 401: no
token), a server's state for boots (``ACTIVE``, ``RESERVED``, ``ERROR``
as for a reservation that does not exist), or for a base rule of the
policy whether it holds.

Each row names the rules of :func:`reservation_ext.policy.list_rules`
that it exercises; ``tests.authz.test_table`` fails when a rule has no
row. The harness tests (``tests.functional.test_authorization_nova``
and ``_cinder``) run the rows of their ``harness`` against a *world*
they build: the owner's resources, whose methods the calls use. A call
is made with ``own=True`` when the persona is expected to succeed on a
resource it would use up (a delete, a start), so that it gets a fresh
one; the others all try the same one, which must still be there
afterwards.
"""

import collections
import dataclasses
import json
import re
import typing
import uuid

ADMIN = 'admin'
MEMBER = 'member'
READER = 'reader'
OTHER = 'other'
SHARED = 'shared'
ANONYMOUS = 'no token'

OWNER_PROJECT = 'owner-project'
SHARED_PROJECT = 'shared-project'


@dataclasses.dataclass(frozen=True)
class Persona:
    """Who calls: a project and its roles (no token: ``project`` None)."""

    name: str
    project: typing.Optional[str]
    roles: tuple = ()

    @property
    def user(self):
        # Nova's stubbed harness takes the user called 'admin' for an
        # administrator; only the admin persona is called so.
        return 'admin' if self.name == ADMIN else 'user-%s-%s' % (
            self.name, self.project)


PERSONAS = (
    Persona(ADMIN, 'admin-project', ('admin', 'member', 'reader')),
    Persona(MEMBER, OWNER_PROJECT, ('member', 'reader')),
    Persona(READER, OWNER_PROJECT, ('reader',)),
    Persona(OTHER, 'other-project', ('member', 'reader')),
    Persona(SHARED, SHARED_PROJECT, ('member', 'reader')),
    Persona(ANONYMOUS, None),
)

# A call: ``target`` is the owner's id that the call names (in the path
# or the body), which another project must not be able to tell from an
# id that does not exist.
Call = collections.namedtuple('Call', 'method path body target')

LEASE_API = 'lease API'
COMPUTE = 'compute'
VOLUME = 'volume'
BOOT = 'boot'
VOLUME_CREATE = 'volume create'
POLICY = 'policy'


@dataclasses.dataclass(frozen=True)
class Row:
    """One call and the outcome expected for each persona."""

    name: str
    harness: str
    api: str
    call: typing.Callable
    expect: dict
    rules: tuple = ()
    # The id whose answer another project's must equal (None: one that
    # does not exist).
    twin: typing.Optional[typing.Callable] = None

    def outcome(self, persona):
        return self.expect[persona.name]

    def succeeds(self, persona):
        """Whether ``persona`` is expected to get what it asked for."""
        outcome = self.outcome(persona)
        if isinstance(outcome, int) and not isinstance(outcome, bool):
            return outcome < 300
        return outcome in ('ACTIVE', 'RESERVED', True)


def _answers(admin, member, reader, other, shared):
    return {ADMIN: admin, MEMBER: member, READER: reader, OTHER: other,
            SHARED: shared, ANONYMOUS: 401}


def _holds(*names):
    return {persona.name: persona.name in names for persona in PERSONAS}


def _on(method, path, target, body=None):
    return Call(method, path % target, body, target)


def _policy(rule, *names):
    return Row(rule, 'policy', POLICY, None, _holds(*names), (rule,))


# The owner's project: who may read it and who may change it.
_READ = (200, 200, 200, 404, 404)
_CHANGE = (200, 200, 403, 404, 404)
_DELETE = (204, 204, 403, 404, 404)
_ADMIN_ONLY = (200, 403, 403, 403, 403)
_ANYONE = (200, 200, 200, 200, 200)
# A RESERVED server: who sees it is told why it cannot change (409),
# after Nova's own rule of the call (403 for a reader).
_HELD = (409, 409, 403, 404, 404)
_ENGINE = (202, 403, 403, 403, 403)


def _lease(rule):
    return 'reservation:leases:%s' % rule


def _hosts(rule):
    return 'reservation:hosts:%s' % rule


POLICY_ROWS = [
    _policy('context_is_admin', ADMIN),
    _policy('admin_api', ADMIN),
    _policy('project_member_api', MEMBER),
    _policy('project_reader_api', MEMBER, READER),
    _policy('project_member_or_admin', ADMIN, MEMBER),
    _policy('project_reader_or_admin', ADMIN, MEMBER, READER),
    # The deprecated default: anyone of the project, or an administrator.
    _policy('admin_or_owner', ADMIN, MEMBER, READER),
    # No persona has the role service: the engine's own tests cover it.
    _policy('service_api'),
    _policy('service_or_admin', ADMIN),
]

LEASE_ROWS = [
    Row('create a lease', 'nova', LEASE_API,
        lambda w, own: Call('POST', '/leases', w.lease_body(), None),
        _answers(201, 201, 403, 201, 201), (_lease('create'),)),
    Row("show the owner's lease", 'nova', LEASE_API,
        lambda w, own: _on('GET', '/leases/%s', w.lease_id),
        _answers(*_READ), (_lease('get'),)),
    Row('list leases', 'nova', LEASE_API,
        lambda w, own: Call('GET', '/leases', None, w.lease_id),
        _answers(*_ANYONE), (_lease('list'),)),
    Row("list every project's leases", 'nova', LEASE_API,
        lambda w, own: Call('GET', '/leases?all_projects=true', None,
                            w.lease_id),
        _answers(*_ADMIN_ONLY), (_lease('list_all_projects'),)),
    Row('ask for schedule proposals', 'nova', LEASE_API,
        lambda w, own: Call('POST', '/leases/proposals', w.propose_body(),
                            None),
        _answers(201, 201, 403, 201, 201), (_lease('propose'),)),
    Row("rename the owner's lease", 'nova', LEASE_API,
        lambda w, own: _on('PUT', '/leases/%s', w.lease_id,
                           {'name': 'renamed'}),
        _answers(*_CHANGE), (_lease('update'),)),
    Row("delete the owner's lease", 'nova', LEASE_API,
        lambda w, own: _on('DELETE', '/leases/%s',
                           w.fresh_lease() if own else w.lease_id),
        _answers(*_DELETE), (_lease('delete'),)),
    Row('see the free capacity over time', 'nova', LEASE_API,
        lambda w, own: Call('GET', w.availability_path(), None, w.lease_id),
        _answers(*_ANYONE), ('reservation:availability:get',)),
    Row('list the resource types', 'nova', LEASE_API,
        lambda w, own: Call('GET', '/plugins', None, None),
        _answers(*_ANYONE), ('reservation:plugins:get',)),
]

HOST_ROWS = [
    Row('add a reservable host', 'nova', LEASE_API,
        lambda w, own: Call('POST', '/os-hosts', {
            'name': w.spare_host(reservable=False)}, None),
        _answers(201, 403, 403, 403, 403), (_hosts('create'),)),
    Row('show a reservable host', 'nova', LEASE_API,
        lambda w, own: _on('GET', '/os-hosts/%s', w.host_id),
        _answers(*_ADMIN_ONLY), (_hosts('get'),)),
    Row('list the reservable hosts', 'nova', LEASE_API,
        lambda w, own: Call('GET', '/os-hosts', None, None),
        _answers(*_ADMIN_ONLY), (_hosts('list'),)),
    Row("set a host's capabilities", 'nova', LEASE_API,
        lambda w, own: _on('PUT', '/os-hosts/%s', w.host_id,
                           {'rack': 'r1'}),
        _answers(*_ADMIN_ONLY), (_hosts('update'),)),
    Row('remove a reservable host', 'nova', LEASE_API,
        lambda w, own: _on('DELETE', '/os-hosts/%s',
                           w.spare_host(reservable=True)),
        _answers(204, 403, 403, 403, 403), (_hosts('delete'),)),
    Row('list the allocations of hosts', 'nova', LEASE_API,
        lambda w, own: Call('GET', '/os-hosts/allocations', None,
                            w.lease_id),
        _answers(*_ADMIN_ONLY), (_hosts('get_allocations'),)),
    Row("show a host's allocation", 'nova', LEASE_API,
        lambda w, own: _on('GET', '/os-hosts/%s/allocation', w.host_id),
        _answers(*_ADMIN_ONLY), (_hosts('get_allocations'),)),
    Row('list the capabilities in use', 'nova', LEASE_API,
        lambda w, own: Call('GET', '/os-hosts/properties', None, None),
        _answers(*_ADMIN_ONLY), (_hosts('get_properties'),)),
    Row('make a capability private', 'nova', LEASE_API,
        lambda w, own: Call('PATCH', '/os-hosts/properties/gpu',
                            {'private': False}, None),
        _answers(*_ADMIN_ONLY), (_hosts('update_properties'),)),
]


def _networks(rule):
    return 'reservation:networks:%s' % rule


NETWORK_ROWS = [
    Row('register a network segment', 'nova', LEASE_API,
        lambda w, own: Call('POST', '/networks', w.segment_body(), None),
        _answers(201, 403, 403, 403, 403), (_networks('create'),)),
    Row('show a network segment', 'nova', LEASE_API,
        lambda w, own: _on('GET', '/networks/%s', w.segment(False)),
        _answers(*_ADMIN_ONLY), (_networks('get'),)),
    Row('list the network segments', 'nova', LEASE_API,
        lambda w, own: Call('GET', '/networks', None, None),
        _answers(*_ADMIN_ONLY), (_networks('list'),)),
    Row("set a network segment's capabilities", 'nova', LEASE_API,
        lambda w, own: _on('PUT', '/networks/%s', w.segment(False),
                           {'stitch': 'true'}),
        _answers(*_ADMIN_ONLY), (_networks('update'),)),
    Row('remove a network segment', 'nova', LEASE_API,
        lambda w, own: _on('DELETE', '/networks/%s', w.segment(own)),
        _answers(204, 403, 403, 403, 403), (_networks('delete'),)),
    Row('list the allocations of network segments', 'nova', LEASE_API,
        lambda w, own: Call('GET', '/networks/allocations', None, None),
        _answers(*_ADMIN_ONLY), (_networks('get_allocations'),)),
    Row("show a network segment's allocation", 'nova', LEASE_API,
        lambda w, own: _on('GET', '/networks/%s/allocation',
                           w.segment(False)),
        _answers(*_ADMIN_ONLY), (_networks('get_allocations'),)),
]


def _floatingips(rule):
    return 'reservation:floatingips:%s' % rule


FLOATINGIP_ROWS = [
    Row('register a reservable floating IP', 'nova', LEASE_API,
        lambda w, own: Call('POST', '/floatingips', w.floatingip_body(),
                            None),
        _answers(201, 403, 403, 403, 403), (_floatingips('create'),)),
    Row('show a reservable floating IP', 'nova', LEASE_API,
        lambda w, own: _on('GET', '/floatingips/%s', w.floatingip(False)),
        _answers(*_ADMIN_ONLY), (_floatingips('get'),)),
    Row('list the reservable floating IPs', 'nova', LEASE_API,
        lambda w, own: Call('GET', '/floatingips', None, None),
        _answers(*_ADMIN_ONLY), (_floatingips('list'),)),
    Row('remove a reservable floating IP', 'nova', LEASE_API,
        lambda w, own: _on('DELETE', '/floatingips/%s', w.floatingip(own)),
        _answers(204, 403, 403, 403, 403), (_floatingips('delete'),)),
]


def _storage_pools(rule):
    return 'reservation:storage_pools:%s' % rule


STORAGE_POOL_ROWS = [
    Row('register a reservable storage pool', 'nova', LEASE_API,
        lambda w, own: Call('POST', '/storage-pools', w.storage_pool_body(),
                            None),
        _answers(201, 403, 403, 403, 403), (_storage_pools('create'),)),
    Row('show a reservable storage pool', 'nova', LEASE_API,
        lambda w, own: _on('GET', '/storage-pools/%s',
                           w.storage_pool(False)),
        _answers(*_ADMIN_ONLY), (_storage_pools('get'),)),
    Row('list the reservable storage pools', 'nova', LEASE_API,
        lambda w, own: Call('GET', '/storage-pools', None, None),
        _answers(*_ADMIN_ONLY), (_storage_pools('list'),)),
    Row("set a storage pool's capabilities", 'nova', LEASE_API,
        lambda w, own: _on('PUT', '/storage-pools/%s', w.storage_pool(False),
                           {'tier': 'fast'}),
        _answers(*_ADMIN_ONLY), (_storage_pools('update'),)),
    Row('remove a reservable storage pool', 'nova', LEASE_API,
        lambda w, own: _on('DELETE', '/storage-pools/%s',
                           w.storage_pool(own)),
        _answers(204, 403, 403, 403, 403), (_storage_pools('delete'),)),
]


def _reserved(method, sub, body, expect, rules=(), twin=None):
    name = '%s %s on a RESERVED server' % (
        method, next(iter(body)) if body and sub == '/action' else
        sub or '/servers/{id}')
    return Row(name, 'nova', COMPUTE,
               lambda w, own: _on(method, '/servers/%s' + (sub or ''),
                                  w.reserved_server(own), body),
               _answers(*expect), rules, twin)


def _leased(method, sub, body, expect):
    name = '%s %s on a server on a leased host' % (
        method, next(iter(body)) if body and sub == '/action' else
        sub or '/servers/{id}')
    return Row(name, 'nova', COMPUTE,
               lambda w, own: _on(method, '/servers/%s' + (sub or ''),
                                  w.leased_server(own), body),
               _answers(*expect))


SERVER_ROWS = [
    _reserved('GET', None, None, _READ),
    Row('list servers with a RESERVED one', 'nova', COMPUTE,
        lambda w, own: Call('GET', '/servers/detail', None,
                            w.reserved_server(False)),
        _answers(*_ANYONE)),
    _reserved('DELETE', None, None, _DELETE),
    _reserved('PUT', None, {'server': {'name': 'renamed'}}, _HELD),
    _reserved('POST', '/action', {'reboot': {'type': 'SOFT'}}, _HELD),
    _reserved('POST', '/action', {'pause': None}, _HELD),
    # Nova itself answers a server id that has no mapping to a cell
    # otherwise than another project's server (of any kind): a RESERVED
    # server answers as another project's ordinary server does.
    _reserved('POST', '/action', {'os-stop': None}, _HELD,
              twin=lambda w: w.leased_server(False)),
    _reserved('POST', '/action', {'resize': {'flavorRef': '1'}}, _HELD),
    _reserved('POST', '/action', {'createImage': {'name': 'snap'}}, _HELD),
    _reserved('POST', '/action', {'lock': None}, _HELD),
    # Nova's rule: an administrator's only.
    _reserved('POST', '/action', {'migrate': None},
              (409, 403, 403, 404, 404)),
    _reserved('POST', '/metadata', {'metadata': {'k': 'v'}}, _HELD),
    _reserved('POST', '/os-volume_attachments', {'volumeAttachment': {
        'volumeId': '9b4ad9d2-7d1b-4a3e-9b38-4a1c2c1ac0de'}}, _HELD),
    Row('start a RESERVED server (the engine)', 'nova', COMPUTE,
        lambda w, own: w.start_call(own), _answers(*_ENGINE),
        ('reservation:servers:start',)),
    Row("give a RESERVED server its lease's flavor (the engine)", 'nova',
        COMPUTE, lambda w, own: w.flavor_call(),
        _answers(*_ENGINE), ('reservation:servers:start',)),
    _leased('GET', None, None, _READ),
    _leased('PUT', None, {'server': {'name': 'renamed'}}, _CHANGE),
    _leased('POST', '/action', {'reboot': {'type': 'SOFT'}},
            (202, 202, 403, 404, 404)),
    _leased('POST', '/metadata', {'metadata': {'k': 'v'}}, _CHANGE),
    _leased('DELETE', None, None, _DELETE),
]

BOOT_ROWS = [
    # The filter lets the owner's and the shared project's servers onto
    # the lease's hosts; any other boot fails as with a reservation that
    # does not exist (an administrator's project too).
    Row("boot with the owner's host reservation", 'nova', BOOT,
        lambda w, own: w.reservation_boot(),
        _answers('ERROR', 'ACTIVE', 403, 'ERROR', 'ACTIVE')),
    Row("boot a reserved server with the owner's proposal", 'nova', BOOT,
        lambda w, own: w.proposal_boot(own),
        _answers(404, 'RESERVED', 403, 404, 404)),
]


def _volume(method, sub, body, expect, rules=()):
    name = '%s %s on a reserved volume' % (
        method, next(iter(body)) if body and sub == '/action' else
        sub or '/volumes/{id}')
    return Row(name, 'cinder', VOLUME,
               lambda w, own: _on(method, '/volumes/%s' + (sub or ''),
                                  w.reserved_volume(own), body),
               _answers(*expect), rules)


VOLUME_ROWS = [
    _volume('GET', None, None, _READ),
    Row('list volumes with a reserved one', 'cinder', VOLUME,
        lambda w, own: Call('GET', '/volumes/detail', None,
                            w.reserved_volume(False)),
        _answers(*_ANYONE)),
    _volume('PUT', None, {'volume': {'name': 'renamed'}}, _CHANGE),
    _volume('DELETE', None, None, (202, 202, 403, 404, 404)),
    # Who sees a reserved volume is told why it cannot change (409),
    # after Cinder's own rule of the action (403 for a reader).
    _volume('POST', '/action', {'os-extend': {'new_size': 2}}, _HELD),
    _volume('POST', '/action', {'os-attach': {
        'instance_uuid': '9b4ad9d2-7d1b-4a3e-9b38-4a1c2c1ac0de',
        'mountpoint': '/dev/vdb'}}, _HELD),
    _volume('POST', '/action', {'os-reserve': None}, _HELD),
    _volume('POST', '/action', {'os-reimage': {
        'image_id': '9b4ad9d2-7d1b-4a3e-9b38-4a1c2c1ac0de',
        'reimage_reserved': True}}, _HELD),
    Row('start a reserved volume (the engine)', 'cinder', VOLUME,
        lambda w, own: w.engine_call('os-reservation-start', own),
        _answers(*_ENGINE), ('reservation:volumes:start',)),
    Row("give a reserved volume its lease's size (the engine)", 'cinder',
        VOLUME, lambda w, own: w.engine_call('os-reservation-size', own,
                                             size=1),
        _answers(*_ENGINE), ('reservation:volumes:start',)),
    Row('end a reserved volume (the engine)', 'cinder', VOLUME,
        lambda w, own: w.engine_call('os-reservation-end', own),
        _answers(*_ENGINE), ('reservation:volumes:end',)),
    Row("create a reserved volume with the owner's proposal", 'cinder',
        VOLUME_CREATE, lambda w, own: w.proposal_create(own),
        _answers(404, 202, 403, 404, 404)),
]

ROWS = (POLICY_ROWS + LEASE_ROWS + HOST_ROWS + NETWORK_ROWS +
        FLOATINGIP_ROWS + STORAGE_POOL_ROWS + SERVER_ROWS + BOOT_ROWS +
        VOLUME_ROWS)


def rows(harness):
    """The rows that ``harness`` runs."""
    return [row for row in ROWS if row.harness == harness]


def replace_id(call, target, replacement):
    """``call`` naming ``replacement`` wherever it named ``target``."""
    body = call.body
    if body is not None:
        body = json.loads(json.dumps(body).replace(target, replacement))
    return Call(call.method, call.path.replace(target, replacement), body,
                replacement)


def run(rows, world, send, personas=PERSONAS):
    """Make every call of ``rows`` as each persona; return the mismatches.

    ``send(persona, api, call)`` makes the call and returns ``(outcome,
    text)``. Where another project (``other``, ``shared``) is refused,
    the same call naming an id that does not exist must get the same
    answer, word for word; where it is answered, the answer must not
    name the owner's resource.

    :returns: ``(cells, problems)``: how many (row, persona) cells ran,
        and a line for each that did not go as the table says.
    """
    problems = []
    cells = 0
    for row in rows:
        for persona in personas:
            cells += 1
            call = row.call(world, row.succeeds(persona))
            outcome, text = send(persona, row.api, call)
            expected = row.outcome(persona)
            if outcome != expected:
                problems.append('%s, as %s: expected %s, got %s: %s' % (
                    row.name, persona.name, expected, outcome, text[:300]))
            elif persona.name in (OTHER, SHARED) and call.target:
                problem = _leak(row, persona, call, outcome, text, send,
                                row.twin(world) if row.twin else None)
                if problem:
                    problems.append(problem)
    return cells, problems


def _leak(row, persona, call, outcome, text, send, twin_id=None):
    """What another project could tell of the owner's resource, if any."""
    if row.succeeds(persona):
        if call.target in text:
            return '%s, as %s: the answer names %s: %s' % (
                row.name, persona.name, call.target, text[:300])
        return None
    twin = replace_id(call, call.target, twin_id or str(uuid.uuid4()))
    twin_outcome, twin_text = send(persona, row.api, twin)
    if (twin_outcome, _without(twin_text, twin.target)) != (
            outcome, _without(text, call.target)):
        return ('%s, as %s: %s %s differs from %s %s for %s' % (
            row.name, persona.name, outcome, text[:300], twin_outcome,
            twin_text[:300], twin.target))
    return None


def _without(text, target):
    """``text`` with ``target`` as a word (not inside "403") replaced."""
    return re.sub(r'(?<![\w-])%s(?![\w-])' % re.escape(target), '<id>',
                  text)
