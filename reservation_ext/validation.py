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

"""Validation of user input: JSON bodies, request shapes, names, keys,
integers and booleans sent as text.

:func:`load_json` reads a JSON text that a user sent: no deeper than
:data:`MAX_DEPTH`, no ``NaN`` or ``Infinity``, text that is Unicode
(no lone surrogates). JSON Schema (:func:`check_schema`) checks the
shape of a request: keys, types, choices. The functions below it check
what a schema cannot say (names, integers and booleans sent as text,
ids) and return the normalized value; dates, durations and lease
windows are read by :mod:`reservation_ext.dates`. Every integer of a
checked value, and every integer sent as text, fits the leases DB's
integer columns (:data:`MAX_INTEGER`); digits are ASCII ``0-9`` only
(``str.isdigit`` and ``int`` also take ``'١٢'`` and ``'²'``). Every
error is :class:`reservation_ext.exceptions.InvalidInput` naming the
field as the user wrote it.

Where Blazar defines an error for the same mistake (a missing
parameter), the reason is Blazar's message, word for word, after the
field's name, so that tools matching Blazar's messages keep working.
"""

import contextlib
import json
import re
import uuid

import jsonschema
from oslo_utils import strutils

from reservation_ext import exceptions

NAME_MAX_LENGTH = 80
# The deepest JSON a request may send: Blazar's bodies are 4 levels deep
# (capability queries a few more); deeper ones would only exhaust the
# recursion of the code that reads them.
MAX_DEPTH = 32
# The integer columns of the leases DB are 32 bits on every backend.
MAX_INTEGER = 2 ** 31 - 1
MIN_INTEGER = -2 ** 31


_DIGITS_RE = re.compile(r'[0-9]+')
# int() of text also takes blanks around, a sign and underscores.
_INTEGER_RE = re.compile(r'[+-]?[0-9]+')

_CONTROL_RE = re.compile(r'[\x00-\x1f\x7f-\x9f]')

# Schema fragments of the fields that the functions below parse: the
# schema checks the JSON type, the function the text.
DATE = {'type': 'string', 'description': 'a date string'}
DURATION = {'type': ['integer', 'string'],
            'description': 'a duration such as "5d", "12h", "30m" or a '
                           'number of seconds'}
NAME = {'type': 'string'}
# python-blazarclient sends the numbers of --reservation as text ("2").
INTEGER = {'type': ['integer', 'string'], 'description': 'an integer'}
TEXT = {'type': 'string', 'minLength': 1,
        'description': 'a non-empty string'}
# The value of an extra capability (a host's, a network segment's): its
# column holds 255 characters. In an update, ``null`` removes it.
CAPABILITY = {'type': ['string', 'number', 'boolean'], 'maxLength': 255,
              'description': 'a string of at most 255 characters or a '
                             'number (an extra capability)'}
CAPABILITY_UPDATE = dict(CAPABILITY, type=CAPABILITY['type'] + ['null'])

_VALIDATOR = jsonschema.Draft202012Validator
_TYPE_NAMES = {'array': 'a list', 'boolean': 'a boolean',
               'integer': 'an integer', 'number': 'a number',
               'object': 'an object', 'string': 'a string'}


def nullable(schema):
    """Return ``schema`` also accepting ``null`` (a key given as "unset")."""
    types = schema['type']
    types = types if isinstance(types, list) else [types]
    return dict(schema, type=types + ['null'])


def load_json(text, field=''):
    """Return the value of the JSON ``text`` a user sent, checked.

    The value is checked as :func:`check_json` checks it.

    :param field: the JSON's name in a request, as :func:`check_schema`'s
        (errors name ``body`` when there is none).
    :raises InvalidInput: naming ``field`` when ``text`` is not JSON.
    """
    text = _utf8(text, field)
    try:
        value = json.loads(text, parse_constant=_no_constant)
    except RecursionError:
        raise too_deep(field_name([], field))
    except ValueError as exc:
        raise exceptions.InvalidInput(field_name([], field),
                                      'is not valid JSON: %s' % exc)
    check_json(value, field)
    return value


def readable_json(raw):
    """Return the JSON value of a request body, or None when not JSON.

    For a service's own edge (nova-api, cinder-api) that answers invalid
    JSON itself but fails on JSON it cannot walk.

    :raises InvalidInput: naming ``body``, for JSON nested deeper than
        :data:`MAX_DEPTH`, bytes that are not UTF-8, lone surrogates.
    """
    text = _utf8(raw, '')
    try:
        value = json.loads(text)
    except RecursionError:
        raise too_deep('body')
    except ValueError:
        return None
    check_json(value)
    return value


def _utf8(raw, field):
    """Return ``raw`` as text; refuse bytes that are not UTF-8.

    ``json.loads`` would also take UTF-16 and UTF-32, which the services'
    own readers do not.
    """
    if not isinstance(raw, bytes):
        return raw
    try:
        return raw.decode('utf-8')
    except UnicodeDecodeError:
        raise exceptions.InvalidInput(field_name([], field),
                                      'is not UTF-8 text')


def check_json(value, field=''):
    """Raise InvalidInput unless a decoded JSON ``value`` is fit to read.

    At most :data:`MAX_DEPTH` levels of lists and objects, and only
    Unicode text in keys and strings (JSON's ``\\ud800`` escapes decode
    to lone surrogates, which no database stores). The error names the
    offending field.
    """
    pending = [(value, [], 0)]
    while pending:
        value, path, depth = pending.pop()
        if isinstance(value, (dict, list)):
            if depth >= MAX_DEPTH:
                raise too_deep(field_name(path, field))
            items = (value.items() if isinstance(value, dict)
                     else enumerate(value))
            for key, item in items:
                _check_text(key, path, field)
                pending.append((item, path + [key], depth + 1))
        else:
            _check_text(value, path, field)


def _check_text(value, path, field):
    if isinstance(value, str) and not _is_unicode(value):
        raise exceptions.InvalidInput(
            field_name(path, field),
            'is not Unicode text (it has a lone surrogate)')


def _is_unicode(text):
    try:
        text.encode('utf-8')
    except UnicodeEncodeError:
        return False
    return True


def too_deep(field):
    """Return the InvalidInput for JSON nested beyond :data:`MAX_DEPTH`."""
    return exceptions.InvalidInput(
        field, 'is nested too deeply (at most %d levels of lists and '
        'objects)' % MAX_DEPTH)


def _no_constant(name):
    # json accepts NaN, Infinity and -Infinity, which JSON does not have.
    raise ValueError('%s is not a JSON number' % name)


def check_schema(value, schema, field=''):
    """Raise InvalidInput unless ``value`` matches the JSON Schema.

    The error names the field as the user wrote it: its path below
    ``field`` (``reservations[0].min``, ``lease_params.start``), with
    the offending key for an unknown or missing key; ``field`` itself
    (``body`` when none is given) when the value as a whole is wrong. Of
    several errors, the first one closest to the top is reported:
    unknown and missing keys before the values of the others. Every
    integer in ``value`` must also fit the DB (:data:`MAX_INTEGER`).
    """
    errors = list(_VALIDATOR(schema).iter_errors(value))
    if errors:
        error = min(errors, key=lambda error: len(error.path))
        name, reason = _describe(error)
        raise exceptions.InvalidInput(
            field_name(list(error.path) + name, field), reason)
    _check_integers(value, field)


def _check_integers(value, field):
    """Raise InvalidInput for the first integer beyond the DB's range.

    The error names the integer's field.
    """
    pending = [(value, [])]
    while pending:
        value, path = pending.pop()
        if isinstance(value, dict):
            pending.extend((item, path + [key])
                           for key, item in value.items())
        elif isinstance(value, list):
            pending.extend((item, path + [index])
                           for index, item in enumerate(value))
        elif isinstance(value, int) and not isinstance(value, bool):
            _check_range(value, field_name(path, field))


def _check_range(number, field):
    if number > MAX_INTEGER:
        raise exceptions.InvalidInput(field,
                                      'must be at most %d' % MAX_INTEGER)
    if number < MIN_INTEGER:
        raise exceptions.InvalidInput(field,
                                      'must be at least %d' % MIN_INTEGER)


def field_name(path, field=''):
    """Return the name of the field at ``path`` below ``field``.

    The name is as the user wrote it: ``['reservations', 0, 'min']`` is
    ``reservations[0].min``; the top of a request body is ``body``.
    """
    name = field
    for part in path:
        if isinstance(part, int):
            name += '[%d]' % part
        else:
            name += ('.' if name else '') + part
    return name or 'body'


def _describe(error):
    """Return ``(keys to add to the error's path, reason)`` of an error.

    ``error`` is a JSON Schema validation error.

    A (sub)schema's ``description`` says what a valid value is
    (``"must be " + description``); other reasons come from the keyword
    that failed.
    """
    if error.validator == 'additionalProperties':
        allowed = error.schema.get('properties', {})
        return [sorted(key for key in error.instance
                       if key not in allowed)[0]], 'unknown key'
    if error.validator == 'required':
        key = next(key for key in error.validator_value
                   if key not in error.instance)
        return [key], missing_reason(key)
    if 'description' in error.schema:
        return [], 'must be ' + error.schema['description']
    reason = _REASONS.get(error.validator)
    return [], reason(error.validator_value) if reason else error.message


def _type_reason(types):
    # "or null" would read as "or leave it out": say what to give.
    names = types if isinstance(types, list) else [types]
    return 'must be ' + ' or '.join(_TYPE_NAMES[name] for name in names
                                    if name != 'null')


_REASONS = {
    'type': _type_reason,
    'enum': lambda choices: 'must be one of: %s' % ', '.join(
        repr(choice) for choice in choices),
    'minimum': lambda minimum: 'must be at least %s' % minimum,
    'minLength': lambda length: 'must be at least %d characters' % length,
    'maxLength': lambda length: 'must be at most %d characters' % length,
    'minItems': lambda count: 'must have at least %d item(s)' % count,
}


def validate_name(value, field):
    """Return the name ``value`` without surrounding blanks.

    A name is a string of 1 to 80 characters (after stripping) with no
    control characters.
    """
    if not isinstance(value, str):
        raise exceptions.InvalidInput(field, 'must be a string')
    name = value.strip()
    if not name:
        raise exceptions.InvalidInput(field, 'must not be empty')
    if len(name) > NAME_MAX_LENGTH:
        raise exceptions.InvalidInput(
            field, 'must be at most %d characters' % NAME_MAX_LENGTH)
    if _CONTROL_RE.search(name):
        raise exceptions.InvalidInput(
            field, 'must not contain control characters')
    return name


@contextlib.contextmanager
def prefixed(prefix):
    """Put ``prefix`` in front of the field of InvalidInput raised inside.

    Plugins name fields as the user wrote them inside a reservation;
    the user needs to know which reservation (``reservations[1].``).
    """
    try:
        yield
    except exceptions.InvalidInput as exc:
        raise exceptions.InvalidInput(prefix + exc.field,
                                      exc.reason) from exc


def single_values(params):
    """Return ``{name: value}`` of query parameters each given once.

    :param params: a webob MultiDict of the query string.
    :raises InvalidInput: naming a parameter given more than once.
    """
    values = {}
    for key, value in params.items():
        if key in values:
            raise exceptions.InvalidInput(key, 'is given more than once')
        values[key] = value
    return values


def parse_boolean(value, field):
    """Return the boolean the text ``value`` names (true/false, 1/0...)."""
    try:
        return strutils.bool_from_string(value, strict=True)
    except ValueError:
        raise exceptions.InvalidInput(field, 'must be a boolean')


def parse_integer(value, field, minimum=0):
    """Return the integer ``value`` names (an int or ASCII digits).

    :raises InvalidInput: it is no integer, less than ``minimum`` or more
        than :data:`MAX_INTEGER`.
    """
    if isinstance(value, str) and _INTEGER_RE.fullmatch(value.strip()):
        try:
            value = int(value)
        except ValueError:
            # More digits than Python converts (sys.get_int_max_str_digits).
            raise exceptions.InvalidInput(field,
                                          'must be at most %d' % MAX_INTEGER)
    if isinstance(value, bool) or not isinstance(value, int):
        raise exceptions.InvalidInput(field, 'must be an integer')
    if value < minimum:
        raise exceptions.InvalidInput(field,
                                      'must be at least %d' % minimum)
    _check_range(value, field)
    return value


def database_id(text):
    """Return the integer id ``text`` spells in ASCII digits, or None.

    None too for a number no row can have (beyond :data:`MAX_INTEGER`):
    a path such as ``/v1/os-hosts/<id>`` then names nothing, rather than
    failing in the DB.
    """
    text = str(text)
    short = len(text) <= len(str(MAX_INTEGER))
    if _DIGITS_RE.fullmatch(text) and short and int(text) <= MAX_INTEGER:
        return int(text)
    return None


def resource_uuid(value, field, kind, reserve_command):
    """Return the UUID of the reserved ``kind`` a request names.

    ``kind`` is ``server`` or ``volume``.

    Only the Nova and Cinder extensions know the resource they reserved;
    a lease made through the lease API alone would have none to start, so
    a missing one points at ``reserve_command``.
    """
    if value is None:
        raise exceptions.InvalidInput(field, 'is required: reserve a %s '
                                      'with "%s"' % (kind, reserve_command))
    try:
        return str(uuid.UUID(str(value)))
    except ValueError:
        raise exceptions.InvalidInput(field, 'must be a %s UUID' % kind)


def check_extra_capabilities(capabilities, own_keys, reason, max_length):
    """Refuse extra capabilities named as a resource's own keys, or too long.

    :param own_keys: the names of the resource's own keys
    :param reason: why one of them is refused
    :param max_length: the longest name an extra capability may have
    :raises InvalidInput: naming the first such capability.
    """
    reserved = sorted(set(capabilities) & set(own_keys))
    if reserved:
        raise exceptions.InvalidInput(reserved[0], reason)
    too_long = sorted(key for key in capabilities if len(key) > max_length)
    if too_long:
        raise exceptions.InvalidInput(
            too_long[0], 'Extra capability key too long (at most %d '
            'characters)' % max_length)


def missing_reason(key):
    """Return Blazar's reason for a parameter ``key`` not given."""
    return 'Missing parameter %s' % key


def missing(field):
    """Return the InvalidInput for the parameter ``field`` not given."""
    return exceptions.InvalidInput(field, missing_reason(field))
