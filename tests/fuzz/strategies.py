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

"""Hypothesis strategies of requests a careless client sends.

A generated request is a :class:`Request`: a method, a path of segments,
query pairs and a body. Bodies come in three kinds, mixed by every
request strategy:

- valid-shaped: drawn from the request JSON Schemas themselves
  (hypothesis-jsonschema over ``leases/schemas.py``, ``hosts/schemas.py``
  and the plugins' schemas), or built to be accepted (a lease with good
  dates);
- mutated: one of those with one to three changes anywhere inside
  (:func:`mutated`): a value replaced by a wrong type, a huge integer,
  non-ASCII digits, a bad date, odd unicode, a lone surrogate; a key
  dropped or unknown; a value nested far too deep;
- raw: bytes that are hardly JSON (:func:`raw_bodies`).

Ids that only exist at run time (a lease the test created) are
:class:`Ref` placeholders, resolved by the test when it sends. Deeply
nested values are :class:`Deep` placeholders, written out by
:func:`encode` (``json.dumps`` cannot nest thousands of levels).

Everything scales with ``RESERVATION_FUZZ_SCALE`` (:func:`examples`): 1 in
CI, e.g. 20 for a soak. The ``fuzz`` hypothesis profile has no deadline,
keeps no example database in the tree and is derandomized, so a CI run
is reproducible; a soak (scale > 1) draws fresh examples every run.
"""

import collections
import copy
import datetime
import json
import os
import urllib.parse

from hypothesis import HealthCheck
from hypothesis import settings
from hypothesis import strategies as st
from hypothesis_jsonschema import from_schema

SCALE = float(os.environ.get('RESERVATION_FUZZ_SCALE', '1'))

settings.register_profile(
    'fuzz', deadline=None, database=None, derandomize=SCALE <= 1,
    print_blob=True,
    # The tests share one service and DB across examples on purpose (what
    # one request leaves is the next one's state), and some strategies
    # filter hard.
    suppress_health_check=list(HealthCheck))


def examples(count):
    """``count`` examples, times ``RESERVATION_FUZZ_SCALE``."""
    return max(1, int(count * SCALE))


def fuzz_settings(count):
    """The ``fuzz`` profile's settings for ``count`` examples (scaled)."""
    return settings(settings.get_profile('fuzz'),
                    max_examples=examples(count))


Request = collections.namedtuple('Request', 'method path query body')


class Ref(collections.namedtuple('Ref', 'kind index')):
    """The ``index``-th id of ``kind`` the test made, resolved at send."""


class Deep(collections.namedtuple('Deep', 'depth shape')):
    """A JSON value ``depth`` levels deep: ``[[[...]]]`` or ``{"a": ...}``."""

    def text(self):
        if self.shape == 'list':
            return '[' * self.depth + ']' * self.depth
        return '{"a": ' * self.depth + '1' + '}' * self.depth


class Raw(bytes):
    """A body sent as these bytes, not JSON-encoded."""


NO_BODY = None
# A name the test makes unique when it sends the request.
UNIQUE_NAME = Ref('unique', 0)

# Digits that str.isdigit() or int() take but a decimal number is not
# written with: Arabic-Indic, superscript, N'Ko, Thai, fullwidth,
# mathematical, Bengali, roman numeral, fraction.
NON_ASCII_DIGITS = ('١٢', '²', '߁', '๓', '１２', '𝟙', '৩', 'Ⅻ', '½',
                    '٢٠٢٧', '٣٠d', '１h')
ODD_TEXT = ('', ' ', '\t', '\n', '\x00', 'a\x00b', '\x7f', '\x85',
            '\u202e', '\u200b', '\ufeff', '\ud800', 'x\udfffy', 'é',
            'e\u0301', 'ß', '𝔘𝔫𝔦𝔠𝔬𝔡𝔢', '🙂', '\U0010ffff', 'NaN',
            'Infinity', 'null', 'true', 'false', '-1', '0', '01', '+5',
            '1_000', '1e999', '0x10', '9' * 40, "' OR 1=1 --", '%s%n',
            '{}', '[]', '../../etc/passwd', '<script>', 'x' * 300,
            'now', '$vcpus', '["=", "$gpu", "true"]', '[[[[[[[[[[',
            '{"a": ', '\\', '"')
BAD_DATES = ('2027-02-30 10:00', '2027-13-01 10:00', '2027-00-10 10:00',
             '2027-01-10 24:00', '2027-01-10 10:60', '0000-01-01 00:00',
             '0001-01-01 00:00', '9999-12-31 23:59', '1969-12-31 23:59',
             '2027-01-10T10:00:00+99:99', '2027-01-10T10:00:00-23:59',
             '9999-12-31T23:59:00-12:00', '2027-01-10 10:00:00.1234567',
             '٢٠٢٧-٠١-١٠ ١٠:٠٠', '2027-01-10 ١٠:00', '2027-01-10 10:00 PM',
             'tomorrow', '10/01/2027', '2027-01-10', '2027-01-10 10',
             '+2027-01-10 10:00', 'now now', 'NOW', '2027-1-1 1:01',
             '2027-01-10T10:00:00Z', '2027-01-10 10:00:60', '1e10')
MAX_INT32 = 2 ** 31 - 1
EDGE_INTS = (MAX_INT32, MAX_INT32 + 1, 2 ** 32, 2 ** 53 + 1, 2 ** 63 - 1,
             2 ** 63, 2 ** 64, -2 ** 31, -2 ** 31 - 1, -2 ** 63 - 1, -1, 0)


def weighted(*choices):
    """Draw from each ``(weight, strategy)`` of ``choices`` in proportion.

    ``st.one_of`` counts a strategy given twice once.
    """
    return st.sampled_from([strategy for weight, strategy in choices
                            for _ in range(weight)]).flatmap(
        lambda strategy: strategy)


def huge_ints():
    """Integers beyond 32 and 64 bits, both signs, and the edges."""
    return st.one_of(st.sampled_from(EDGE_INTS),
                     st.integers(min_value=MAX_INT32 + 1,
                                 max_value=10 ** 300),
                     st.integers(min_value=-10 ** 300,
                                 max_value=-2 ** 31 - 1))


def odd_text():
    """Strings a careless client sends: odd unicode, digits, junk."""
    return st.one_of(st.sampled_from(ODD_TEXT + NON_ASCII_DIGITS + BAD_DATES),
                     huge_ints().map(str),
                     st.text(max_size=12))


def scalars():
    """Every JSON scalar kind, weighted to the odd ones."""
    return st.one_of(st.none(), st.booleans(), st.integers(-3, 3),
                     huge_ints(), st.floats(allow_nan=False,
                                            allow_infinity=False),
                     odd_text())


def json_values():
    """Any JSON value, small, with odd scalars."""
    return st.recursive(
        scalars(),
        lambda children: st.one_of(
            st.lists(children, max_size=3),
            st.dictionaries(odd_text(), children, max_size=3)),
        max_leaves=6)


def deep_values():
    """Values nested from just over the limit to thousands of levels."""
    return st.builds(Deep, st.one_of(st.integers(33, 40),
                                     st.sampled_from((1000, 5000, 10000))),
                     st.sampled_from(('list', 'object')))


def bad_values():
    """What a field gets that it did not ask for."""
    return st.one_of(scalars(), json_values(), deep_values())


def raw_bodies():
    """Bodies that are hardly JSON."""
    return st.one_of(
        st.builds(lambda deep: Raw(deep.text().encode()), deep_values()),
        st.sampled_from([Raw(text) for text in (
            b'', b' ', b'{', b'}', b'{"name": }', b'NaN', b'Infinity',
            b'[NaN]', b'{"name": -Infinity}', b'"\\ud800"', b'\xff\xfe',
            b'\xef\xbb\xbf{}', b'{"a": "\xc3"}', b'null', b'[]', b'0',
            b'{"name": 1' + b'0' * 5000 + b'}',
            b'{"a": 1, "a": 2}', b'\x00')]),
        st.binary(max_size=40).map(Raw))


def _containers(value):
    """Every list and dict inside ``value``, itself first."""
    found, pending = [], [value]
    while pending:
        item = pending.pop()
        if isinstance(item, dict):
            found.append(item)
            pending.extend(item.values())
        elif isinstance(item, list):
            found.append(item)
            pending.extend(item)
    return found


MUTATIONS = ('replace', 'replace', 'replace', 'drop', 'unknown', 'deep',
             'wrap', 'empty')


@st.composite
def mutated(draw, bodies):
    """A body of ``bodies`` with one to three changes anywhere inside."""
    body = copy.deepcopy(draw(bodies))
    if not isinstance(body, (dict, list)):
        return draw(bad_values())
    for change in draw(st.lists(st.sampled_from(MUTATIONS), min_size=1,
                                max_size=3)):
        target = draw(st.sampled_from(_containers(body)))
        if change == 'unknown' and isinstance(target, dict):
            target[draw(odd_text())] = draw(bad_values())
            continue
        if not target:
            continue
        key = draw(st.sampled_from(sorted(target) if isinstance(target, dict)
                                   else range(len(target))))
        if change == 'drop':
            del target[key]
        elif change == 'deep':
            target[key] = draw(deep_values())
        elif change == 'wrap':
            target[key] = [target[key]]
        elif change == 'empty':
            target[key] = type(target[key])() if isinstance(
                target[key], (str, list, dict)) else ''
        else:
            target[key] = draw(bad_values())
    return body


def schema_bodies(schema):
    """Values the JSON Schema ``schema`` accepts, drawn fast.

    The keywords the request schemas use (``type``, ``properties``,
    ``required``, ``additionalProperties``, ``items``, ``enum``,
    ``const``, lengths, bounds, ``pattern``); values that break a bound
    the schema leaves open (huge integers, odd text) come with them.
    hypothesis-jsonschema (:func:`jsonschema_bodies`) covers every
    keyword but takes tens of milliseconds an object, too slow for the
    bulk of the requests.
    """
    if 'const' in schema:
        return st.just(schema['const'])
    if 'enum' in schema:
        return st.sampled_from(schema['enum'])
    types = schema.get('type')
    if types is None:
        return json_values()
    types = types if isinstance(types, list) else [types]
    return st.one_of(*[_TYPED[name](schema) for name in types])


def jsonschema_bodies(schema):
    """Values ``schema`` accepts, by hypothesis-jsonschema."""
    return from_schema(schema)


def _object(schema):
    properties = {key: schema_bodies(value)
                  for key, value in schema.get('properties', {}).items()}
    required = schema.get('required', [])
    fixed = st.fixed_dictionaries(
        {key: properties.get(key, json_values()) for key in required},
        optional={key: value for key, value in properties.items()
                  if key not in required})
    additional = schema.get('additionalProperties', True)
    if additional is False:
        return fixed
    values = json_values() if additional is True else schema_bodies(
        additional)
    return st.builds(lambda given, more: {**more, **given}, fixed,
                     st.dictionaries(odd_text(), values, max_size=2))


def _array(schema):
    least = schema.get('minItems', 0)
    return st.lists(schema_bodies(schema.get('items', {})), min_size=least,
                    max_size=min(schema.get('maxItems', least + 3),
                                 least + 3))


def _string(schema):
    least = schema.get('minLength', 0)
    most = schema.get('maxLength', least + 16)
    if 'pattern' in schema:
        return st.from_regex(schema['pattern']).filter(
            lambda text: least <= len(text) <= most)
    return st.text(min_size=least, max_size=min(most, least + 16))


_TYPED = {
    'object': _object,
    'array': _array,
    'string': _string,
    'integer': lambda schema: st.integers(schema.get('minimum'),
                                          schema.get('maximum')),
    'number': lambda schema: st.one_of(
        st.integers(schema.get('minimum'), schema.get('maximum')),
        st.floats(schema.get('minimum'), schema.get('maximum'),
                  allow_nan=False, allow_infinity=False)),
    'boolean': lambda schema: st.booleans(),
    'null': lambda schema: st.none(),
}


def bodies(valid, schema=None):
    """Valid bodies, schema-shaped ones, their mutations, and raw bytes."""
    drawn = [(4, valid), (3, mutated(valid)), (1, raw_bodies()),
             (1, bad_values())]
    if schema is not None:
        drawn += [(1, schema_bodies(schema)),
                  (1, mutated(schema_bodies(schema)))]
    return weighted(*drawn)


# Dates -------------------------------------------------------------------

DATE_FORMATS = ('%Y-%m-%d %H:%M', '%Y-%m-%dT%H:%M:%S.%f', '%Y-%m-%dT%H:%MZ',
                '%Y-%m-%d %H:%M:%S', '%Y-%m-%dT%H:%M:%S+00:00')


def dates(now, days=60):
    """Dates: good ones in the forms accepted, "now", and bad ones.

    The good ones run from an hour before ``now`` to ``days`` later.
    """
    good = st.builds(
        lambda minutes, fmt: (now + datetime.timedelta(minutes=minutes))
        .strftime(fmt), st.integers(-60, days * 24 * 60),
        st.sampled_from(DATE_FORMATS))
    return weighted((3, good), (1, st.just('now')),
                    (1, st.sampled_from(BAD_DATES)))


def durations():
    return st.one_of(st.sampled_from(('1h', '2d', '30m', '1d12h', '3600',
                                      '0', '0s', '-1h', '1y', 'h', '',
                                      '99999999999d', '١h', '²', '1.5h')),
                     st.integers(-10, 10 ** 6), huge_ints())


# Lease API bodies ---------------------------------------------------------

def _with_type(resource_type, schema):
    """A reservation schema of ``resource_type``: the plugin's, typed."""
    return dict(schema, properties=dict(
        schema.get('properties', {}), resource_type={'const': resource_type}),
        required=sorted(set(schema.get('required', [])) | {'resource_type'}))


QUERIES = st.sampled_from((
    '["=", "$gpu", "true"]', '[">=", "$vcpus", "2"]',
    '["and", ["=", "$gpu", "true"], [">=", "$memory_mb", 1024]]',
    '["or"]', '["in", "$gpu", "true", "false"]', '["=", "gpu", "true"]',
    '["<", "$vcpus", "1' + '0' * 400 + '"]', '[">", "$vcpus", 1e308]',
    '{"gpu": "true"}', '{"gpu": "<or> true <or> false"}', '', '[]',
    '["=", "$gpu"]', '["nope", "$a", 1]', '[' * 2000 + ']' * 2000))


def reservations(plugin_schemas):
    """Reservations: sensible ones, and drawn from the plugins' schemas.

    Only of the resource types ``plugin_schemas`` names.
    """
    host = st.fixed_dictionaries(
        {'resource_type': st.just('physical:host'),
         'min': st.sampled_from((1, '1', 2, '2')),
         'max': st.sampled_from((1, '2', 3, 2))},
        optional={'hypervisor_properties': QUERIES,
                  'resource_properties': QUERIES,
                  'hosts': st.lists(st.sampled_from((
                      'compute-1', 'compute-2', '1', '2', '²', '١',
                      str(2 ** 40), 2, 2 ** 40)), max_size=2),
                  'on_end': st.sampled_from(('release', 'recycle', 'x')),
                  'grace_period': durations(),
                  'min_vcpus': st.sampled_from((1, '4', 2 ** 33)),
                  'availability_zone': st.sampled_from(('nova', 'zone2'))})
    capacity = st.fixed_dictionaries(
        {'resource_type': st.just('virtual:instance'),
         'amount': st.sampled_from((1, 2, '2')),
         'vcpus': st.sampled_from((1, 2)),
         'memory_mb': st.sampled_from((512, '1024')),
         'disk_gb': st.sampled_from((1, 0))},
        optional={'affinity': st.sampled_from((True, False, None, 'maybe')),
                  'resource_properties': QUERIES})
    volume = st.fixed_dictionaries(
        {'resource_type': st.just('virtual:volume'),
         'size_gb': st.sampled_from((1, '2', 10 ** 6))})
    floatingip = st.fixed_dictionaries(
        {'resource_type': st.just('virtual:floatingip'),
         'network_id': st.sampled_from((FLOATING_NETWORK, 'other', ''))},
        optional={'amount': st.sampled_from((1, '2', 0, 2 ** 40)),
                  'required_floatingips': st.lists(st.sampled_from((
                      '172.24.4.2', '172.24.4.3', '10.0.0.1', '::1', 'x',
                      '172.24.4.02')), max_size=2)})
    shaped = [schema_bodies(_with_type(resource_type, schema))
              for resource_type, schema in plugin_schemas.items()]
    sensible = [(1, strategy) for resource_type, strategy in (
        ('physical:host', host), ('virtual:instance', capacity),
        ('virtual:volume', volume), ('virtual:floatingip', floatingip))
        if resource_type in plugin_schemas]
    return weighted((4, _good(plugin_schemas)), *sensible,
                    *[(1, strategy) for strategy in shaped])


def _good(plugin_schemas):
    """The :data:`GOOD_RESERVATIONS` of the types ``plugin_schemas`` names."""
    return st.sampled_from([
        reservation for reservation in GOOD_RESERVATIONS
        if reservation['resource_type'] in plugin_schemas])


# The external network whose addresses a fuzz test registers.
FLOATING_NETWORK = 'ext-net'
# Reservations the lease API accepts (when there is room).
GOOD_RESERVATIONS = (
    {'resource_type': 'physical:host', 'min': 1, 'max': 1},
    {'resource_type': 'physical:host', 'min': '1', 'max': '2',
     'resource_properties': '["=", "$gpu", "true"]'},
    {'resource_type': 'physical:host', 'min': 1, 'max': 1,
     'hypervisor_properties': '[">=", "$vcpus", "2"]',
     'on_end': 'release'},
    {'resource_type': 'virtual:instance', 'amount': 2, 'vcpus': 1,
     'memory_mb': 512, 'disk_gb': 1, 'affinity': False},
    {'resource_type': 'virtual:instance', 'amount': '1', 'vcpus': 2,
     'memory_mb': 1024, 'disk_gb': 0},
    {'resource_type': 'virtual:floatingip', 'network_id': FLOATING_NETWORK,
     'amount': 1})
NAMES = st.text(alphabet='abcdefghijklmnopqrstuvwxyz0123456789-', min_size=1,
                max_size=12)


def _ordered(now):
    return st.builds(
        lambda start, hours, fmt: {
            'start_date': (now + start).strftime(fmt),
            'end_date': (now + start + hours).strftime(fmt)},
        st.integers(0, 30 * 24 * 60).map(
            lambda minutes: datetime.timedelta(minutes=minutes)),
        st.integers(1, 72).map(lambda hours: datetime.timedelta(hours=hours)),
        st.sampled_from(DATE_FORMATS))


def windows(now):
    """``start_date`` and ``end_date``, most of them in order."""
    ordered = _ordered(now)
    given = st.fixed_dictionaries({'end_date': dates(now)},
                                  optional={'start_date': dates(now)})
    return weighted((3, ordered), (1, given))


def lease_bodies(now, plugin_schemas):
    """Lease create bodies, acceptable and odd.

    A third acceptable (when there is room), the others with odd choices
    anywhere.
    """
    good = st.builds(
        lambda window, name, reservations: dict(
            window, name=name, reservations=reservations, events=[]),
        # Names are unique in a project: most good leases have their own.
        _ordered(now), weighted((3, st.just(UNIQUE_NAME)), (1, NAMES)),
        st.lists(_good(plugin_schemas), min_size=1, max_size=2))
    odd = st.builds(lambda window, rest: dict(rest, **window), windows(now),
                    _lease_rest(now, plugin_schemas))
    return weighted((1, good), (2, odd))


def _lease_rest(now, plugin_schemas):
    plain = st.fixed_dictionaries(
        {'name': weighted((3, NAMES), (1, st.text(max_size=12)),
                          (1, st.sampled_from(('x' * 81, ' ', '\x00')))),
         'reservations': st.lists(reservations(plugin_schemas),
                                  min_size=1, max_size=2),
         'events': st.just([])})
    extras = st.fixed_dictionaries({}, optional={
        'before_end_date': dates(now),
        'projects': st.lists(odd_text(), max_size=2),
        'proposal_id': st.builds(Ref, st.just('proposal'),
                                 st.integers(0, 1))})
    return weighted((3, plain), (1, st.builds(
        lambda given, more: dict(given, **more), plain, extras)))


def lease_updates(now):
    """Lease update bodies: good changes and clashing ones."""
    return st.fixed_dictionaries({}, optional={
        'name': st.text(max_size=10),
        'start_date': dates(now), 'end_date': dates(now),
        'before_end_date': dates(now),
        'prolong_for': durations(), 'reduce_by': durations(),
        'reservations': st.lists(st.fixed_dictionaries(
            {'id': st.one_of(st.builds(Ref, st.just('reservation'),
                                       st.integers(0, 3)), odd_text())},
            optional={'min': st.sampled_from((1, '2', 2 ** 40, '١')),
                      'max': st.sampled_from((2, '3', -1)),
                      'amount': st.sampled_from((1, 3, '²')),
                      'size_gb': st.sampled_from((2, 2 ** 35)),
                      'resource_properties': QUERIES}), max_size=2),
        'events': st.just([])})


def proposal_bodies(now, plugin_schemas):
    """Schedule proposal requests."""
    return st.fixed_dictionaries(
        {'reservations': st.lists(reservations(plugin_schemas),
                                  min_size=1, max_size=2),
         'duration': durations()},
        optional={'not_before': dates(now), 'not_after': dates(now),
                  'count': st.sampled_from((1, 3, 0, 2 ** 40, '2'))})


# Paths and query strings --------------------------------------------------

def segments(kind, count):
    """A path segment naming a ``kind`` the test made, or junk."""
    return st.one_of(st.builds(Ref, st.just(kind), st.integers(0, count - 1)),
                     st.sampled_from(NON_ASCII_DIGITS + (
                         '0', '-1', '1', '01', ' 1', '1 ', str(2 ** 31),
                         str(2 ** 64), '9' * 400, '%', '..', 'ü',
                         '\ud800', 'x' * 300)),
                     huge_ints().map(str), st.text(min_size=1, max_size=8))


def queries(names, values):
    """Query pairs: known names with ``values``, unknown names, repeats."""
    pair = st.tuples(st.one_of(st.sampled_from(names), odd_text()),
                     st.one_of(values, odd_text()))
    return st.lists(pair, max_size=4)


class Resolver:
    """What :class:`Ref` placeholders stand for in one test's run.

    ``known`` is ``{kind: [id, ...]}``, the ids the test made (it appends
    to the lists as the answers say); :data:`UNIQUE_NAME` is a new name
    each time.
    """

    def __init__(self, *kinds):
        self.known = {kind: [] for kind in kinds}
        self._names = 0

    def __call__(self, ref):
        if ref == UNIQUE_NAME:
            self._names += 1
            return 'lease-%d' % self._names
        known = self.known[ref.kind]
        return known[ref.index % len(known)] if known else 'none'

    def value(self, value):
        """``value`` resolved when it is a :class:`Ref`."""
        return self(value) if isinstance(value, Ref) else value

    def path(self, parts):
        """The path of ``parts``, resolved and percent-encoded."""
        return '/'.join(quote(self.value(part)) for part in parts)


def quote(segment):
    """A path segment percent-encoded; lone surrogates as raw bytes."""
    return urllib.parse.quote(str(segment).encode('utf-8', 'surrogatepass'),
                              safe='')


def query_string(pairs):
    return '&'.join('%s=%s' % (quote(key), quote(value))
                    for key, value in pairs)


def encode(body, resolve):
    """The bytes of ``body``.

    :class:`Raw` as is, else JSON with every :class:`Ref` resolved by
    ``resolve`` and :class:`Deep` written out.
    """
    if isinstance(body, Raw):
        return bytes(body)
    deep = []

    def default(value):
        raise TypeError(value)

    def prepared(value):
        if isinstance(value, Deep):
            deep.append(value)
            return '\x00deep%d\x00' % (len(deep) - 1)
        if isinstance(value, Ref):
            return resolve(value)
        if isinstance(value, dict):
            return {key: prepared(item) for key, item in value.items()}
        if isinstance(value, list):
            return [prepared(item) for item in value]
        return value

    text = json.dumps(prepared(body), default=default)
    for index, value in enumerate(deep):
        text = text.replace(json.dumps('\x00deep%d\x00' % index),
                            value.text())
    return text.encode('utf-8', 'surrogatepass')


# Nova and Cinder hints -----------------------------------------------------

def lease_params(now):
    """The ``lease_params`` hint: good windows, odd ones, junk.

    Each as an object or as the JSON text the clients send.
    """
    good = st.builds(
        lambda window, on_end: dict(
            {'start': window['start_date'], 'end': window['end_date']},
            **on_end), _ordered(now + datetime.timedelta(hours=1)),
        st.fixed_dictionaries({}, optional={'on_end': st.sampled_from((
            'delete', 'shelve', 'snapshot_delete', 'release'))}))
    odd = st.fixed_dictionaries({}, optional={
        'name': weighted((2, NAMES), (1, odd_text())),
        'start': dates(now), 'end': dates(now), 'duration': durations(),
        'before_end': dates(now), 'on_end': odd_text()})
    params = weighted((3, good), (2, odd), (2, mutated(good)),
                      (1, bad_values()))
    return weighted((2, params), (2, params.map(_json_text)),
                    (1, deep_values().map(Deep.text)))


def _json_text(value):
    """``value`` as JSON text (ASCII: ``json.dumps`` escapes the rest)."""
    return encode(value, lambda ref: str(ref.index)).decode('ascii')


def flag():
    """A boolean hint as clients send it, and what they should not."""
    return st.one_of(st.sampled_from((
        True, False, 'True', 'true', 'False', '1', '0', 'yes', ['True'],
        ['True', 'False'], [], {}, 'maybe', '١', '²')), scalars())


def reservation_hints(now, reservation_ids):
    """Scheduler hints of a server or volume create.

    Reserved, lease_params, reservation, proposal, preemptible, each
    possibly missing or odd (a hint may be a list of one value, as Nova
    keeps them).
    """
    own = ('reserved', 'lease_params', 'reservation', 'proposal',
           'preemptible')
    return st.fixed_dictionaries({}, optional={
        'reserved': weighted((3, st.just('True')), (1, flag())),
        'lease_params': lease_params(now),
        'reservation': st.one_of(reservation_ids, odd_text()),
        'proposal': st.one_of(st.builds(Ref, st.just('proposal'),
                                        st.integers(0, 1)), odd_text(),
                              scalars()),
        'preemptible': flag(),
        'same_host': odd_text()}).filter(lambda hints: set(hints) & set(own))
