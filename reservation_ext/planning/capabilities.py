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

"""Capability queries: which reservable hosts a request may get.

A query is JSON text (or the decoded object) in one of two forms:

* Blazar's JSON filter syntax (nova's JsonFilter): ``["=", "$gpu",
  "true"]``, ``["and", [...], [...]]``, ``["or", ...]``, ``["not", ...]``,
  ``["in", "$rack", "r1", "r2"]``, ``<``, ``>``, ``<=``, ``>=``, plus every
  ComputeCapabilitiesFilter operator below as a list operator. ``=``,
  ``<``, ``>``, ``<=`` and ``>=`` compare numbers when the operand is a
  number and strings otherwise. ``==`` is ``=`` and ``!=`` its negation,
  as in Blazar, which compiles all three to SQL (in)equality on the stored
  value: ``["==", "$hypervisor_hostname", "compute-1"]`` works. Unlike
  Blazar, values that are both numbers are equal as numbers (``"8"`` and
  ``"8.0"``), as the ordering operators compare them.
* ``{"name": "<expr>"}`` with ComputeCapabilitiesFilter expressions
  (nova's extra_specs_ops): ``"= 5"`` (numeric >=, as in nova), ``"== 5"``,
  ``"!= 5"``, ``">= 5"``, ``"<= 5"``, ``"s== x"``, ``"s!= x"``, ``"s>= x"``,
  ``"s> x"``, ``"s<= x"``, ``"s< x"``, ``"<in> gcc"`` (substring),
  ``"<or> a <or> b"`` (one of); without an operator the whole text must be
  equal. All items must hold.

``$name`` is a column of computehosts when there is one (``vcpus``,
``hypervisor_type``, ...) and an extra capability (a host_capabilities row)
otherwise. A host that lacks the capability, or whose value is not a
number for a numeric operator, matches no comparison, ``!=`` and ``s!=``
included (as in nova, where a missing value never matches); only an
explicit ``["not", ...]`` selects it. A secret capability
(:mod:`reservation_ext.power.credentials`) is as if no host had it.

:func:`compile` turns a query into one SQL boolean expression over
computehosts, so that the planner filters hosts in the same statement as
it checks their allocations. The same queries select network segments
(:data:`NETWORK_SEGMENTS`: ``$network_type``, ``$physical_network`` and
``$segment_id`` are the segment's columns, any other name one of its
extra capabilities), as Chameleon's Blazar does for ``network_properties``
and ``resource_properties``, and storage pools (:data:`REPORTED_POOL_TARGET`,
:data:`POOL_TARGET`). Strings compare bytewise and substrings are
case-sensitive on every backend.
"""

import dataclasses
import json
import operator

import sqlalchemy as sa
from sqlalchemy.ext import compiler
from sqlalchemy.sql import expression
from sqlalchemy.sql import visitors

from db import tables
from reservation_ext import exceptions
from reservation_ext.power import credentials
from reservation_ext.store import hosts as store_hosts
from reservation_ext import validation

HOSTS = tables.HOSTS
CAPABILITIES = tables.CAPABILITIES

COLUMNS = frozenset(('vcpus', 'memory_mb', 'local_gb', 'hypervisor_type',
                     'hypervisor_version', 'hypervisor_hostname',
                     'service_name', 'availability_zone', 'cpu_info'))


@dataclasses.dataclass(frozen=True)
class Target:
    """What a query selects: rows of ``table``, by columns or capabilities.

    ``capabilities`` holds the extra capabilities (``name``, ``value``,
    ``num_value``), ``owner`` its column naming the row of ``table``.
    """

    table: sa.Table
    columns: frozenset
    capabilities: sa.Table
    owner: sa.Column

    def is_numeric(self, name):
        """Return whether ``name`` may hold numbers.

        Capabilities may (num_value); columns must be numeric.
        """
        return name not in self.columns or isinstance(
            self.table.c[name].type, sa.Integer)

    def values_of(self, session, ids):
        """Return ``{id: {name: value}}`` of the rows' capabilities."""
        caps = self.capabilities
        found = {}
        for owner, name, value in session.execute(
                sa.select(self.owner, caps.c.name, caps.c.value)
                .where(self.owner.in_(ids))):
            found.setdefault(owner, {})[name] = value
        return found

    def where(self, name, condition, numeric=False):
        """Return ``condition(value column)`` of a column or capability.

        Never NULL, so that ``not`` is the exact complement. A secret
        capability (a BMC password) selects nothing: whether a lease is
        granted must not tell its value.
        """
        if credentials.is_secret(name):
            return sa.false()
        if name in self.columns:
            column = self.table.c[name]
            if not column.nullable:
                return condition(column)
            return sa.and_(column.is_not(None), condition(column))
        caps = self.capabilities
        value = caps.c.num_value if numeric else caps.c.value
        key, = self.table.primary_key.columns
        return sa.exists().where(self.owner == key, caps.c.name == name,
                                 condition(value)).correlate(self.table)


# The reservable hosts (the default target) and network segments.
HOST_TARGET = Target(HOSTS, COLUMNS, CAPABILITIES, CAPABILITIES.c.host_id)
NETWORK_SEGMENTS = Target(
    tables.NETWORK_SEGMENTS,
    frozenset(('network_type', 'physical_network', 'segment_id')),
    tables.NETWORK_CAPABILITIES, tables.NETWORK_CAPABILITIES.c.network_id)
# Storage pools: by ``$name`` or what Cinder reported for them
# (``pool_properties``), or by their extra capabilities
# (``resource_properties``).
REPORTED_POOL_TARGET = Target(
    tables.STORAGE_POOLS, frozenset(('name',)), tables.STORAGE_POOL_REPORTED,
    tables.STORAGE_POOL_REPORTED.c.pool_id)
POOL_TARGET = Target(
    tables.STORAGE_POOLS, frozenset(('name',)),
    tables.STORAGE_POOL_CAPABILITIES,
    tables.STORAGE_POOL_CAPABILITIES.c.pool_id)

_NUMERIC = {'==': operator.eq, '!=': operator.ne, '>=': operator.ge,
            '<=': operator.le, '=': operator.ge}
_STRING = {'s==': operator.eq, 's!=': operator.ne, 's>=': operator.ge,
           's>': operator.gt, 's<=': operator.le, 's<': operator.lt}
# JsonFilter's comparisons: numeric or string depending on the operand.
# Blazar reads its "==" and "!=" the same way (not as extra_specs ops).
_JSON = {'=': operator.eq, '==': operator.eq, '!=': operator.ne,
         '<': operator.lt, '>': operator.gt, '<=': operator.le,
         '>=': operator.ge}
_OPERATORS = frozenset(_NUMERIC).union(_STRING, _JSON,
                                       ('in', '<in>', '<or>'))
_LOGICAL = ('and', 'or', 'not')


class _Bytewise(expression.ColumnElement):
    """Order a string by its bytes (SQLite's default, "C" on PostgreSQL)."""

    inherit_cache = True
    type = sa.String()
    _traverse_internals = [
        ('element', visitors.InternalTraversal.dp_clauseelement)]

    def __init__(self, element):
        self.element = element


@compiler.compiles(_Bytewise)
def _bytewise(element, compiler_, **kw):
    return compiler_.process(element.element, **kw)


@compiler.compiles(_Bytewise, 'postgresql')
def _bytewise_pg(element, compiler_, **kw):
    return '%s COLLATE "C"' % compiler_.process(element.element, **kw)


class _Position(expression.ColumnElement):
    """Find where ``needle`` is in ``haystack`` (1-based; 0: nowhere).

    Case-sensitive everywhere, unlike LIKE on SQLite.
    """

    inherit_cache = True
    type = sa.Integer()
    _traverse_internals = [
        ('haystack', visitors.InternalTraversal.dp_clauseelement),
        ('needle', visitors.InternalTraversal.dp_clauseelement)]

    def __init__(self, haystack, needle):
        self.haystack = haystack
        self.needle = needle


@compiler.compiles(_Position)
def _position(element, compiler_, **kw):
    return 'POSITION(%s IN %s)' % (
        compiler_.process(element.needle, **kw),
        compiler_.process(element.haystack, **kw))


@compiler.compiles(_Position, 'sqlite')
def _position_sqlite(element, compiler_, **kw):
    return 'INSTR(%s, %s)' % (
        compiler_.process(element.haystack, **kw),
        compiler_.process(element.needle, **kw))


def compile(query, field, target=HOST_TARGET):
    """Compile a capability query to a boolean SQL expression.

    :param query: JSON text, or the decoded list or dict; ``None``, ``''``,
        ``[]`` and ``{}`` mean no constraint.
    :param field: the request field the query came from, named in errors.
    :param target: what is selected (a :class:`Target`): hosts by default.
    :returns: an expression over ``computehosts`` (the target's table) for
        a WHERE clause.
    :raises InvalidInput: the query is malformed.
    """
    if isinstance(query, str):
        if not query.strip():
            return sa.true()
        query = validation.load_json(query, field)
    if not query:
        return sa.true()
    if isinstance(query, list):
        return _Compiler(field, target).json_filter(query)
    if isinstance(query, dict):
        return _Compiler(field, target).extra_specs(query)
    raise exceptions.InvalidInput(
        field, 'must be a JSON list (filter) or object (capabilities)')


class _Compiler:
    """Compiles the two query forms, naming ``field`` in every error."""

    def __init__(self, field, target=HOST_TARGET):
        self.field = field
        self.target = target

    def error(self, reason, *args):
        """Return the InvalidInput naming the field, with ``reason``."""
        return exceptions.InvalidInput(self.field, reason % args)

    def json_filter(self, query):
        """Compile a JsonFilter query (a list) to a SQL condition."""
        if not isinstance(query, list) or not query:
            raise self.error('expected a non-empty list, got %s',
                             json.dumps(query))
        op, args = query[0], query[1:]
        if op in _LOGICAL:
            return self._logical(op, args)
        if not isinstance(op, str) or op not in _OPERATORS:
            raise self.error('unknown operator %s', json.dumps(op))
        if len(args) < 2:
            raise self.error('operator %s needs a $name and a value', op)
        name = self._variable(args[0])
        values = [self._operand(op, v) for v in args[1:]]
        if op == 'in':
            return self._json_one_of(name, values)
        if op == '<or>':
            return self._one_of(name, values)
        if len(values) != 1:
            raise self.error('operator %s takes one value', op)
        if op in _JSON:
            return self._json_compare(name, _JSON[op], values[0])
        return self._capability_op(name, op, values[0])

    def extra_specs(self, query):
        """Compile an extra-specs query (a dict) to a SQL condition."""
        conditions = []
        for name, spec in sorted(query.items()):
            if not name or not isinstance(spec, str):
                raise self.error('%s must map a name to an expression '
                                 'string', json.dumps({name: spec}))
            conditions.append(self._spec(name, spec))
        return sa.and_(*conditions)

    def _spec(self, name, spec):
        words = spec.split()
        op = words[0] if words else None
        if op == '<or>':
            return self._one_of(name, self._or_values(spec, words))
        if op not in _NUMERIC and op not in _STRING and op != '<in>':
            return self._compare(name, operator.eq, spec, numeric=False)
        if len(words) != 2:
            raise self.error('%s: operator %s takes one value, got %r',
                             name, op, spec)
        return self._capability_op(name, op, words[1])

    def _or_values(self, spec, words):
        values, keywords = words[1::2], words[2::2]
        if not values or len(words) % 2 or set(keywords) - {'<or>'}:
            raise self.error('%r must be "<or> a <or> b ..."', spec)
        return values

    def _logical(self, op, args):
        if not args:
            raise self.error('operator %s needs at least one condition', op)
        conditions = [self.json_filter(arg) for arg in args]
        if op == 'not':
            if len(conditions) != 1:
                raise self.error('operator not takes one condition')
            return sa.not_(conditions[0])
        return (sa.and_ if op == 'and' else sa.or_)(*conditions)

    def _variable(self, arg):
        if (not isinstance(arg, str) or not arg.startswith('$') or
                len(arg) < 2):
            raise self.error('expected a $name, got %s', json.dumps(arg))
        return arg[1:]

    def _operand(self, op, value):
        if isinstance(value, bool) or not isinstance(value, (str, int,
                                                             float)):
            raise self.error('operator %s: value %s must be a string or a '
                             'number', op, json.dumps(value))
        return value if isinstance(value, str) else str(value)

    def _json_compare(self, name, compare, value):
        return self._compare(name, compare, value,
                             self._numeric_operands(name, [value]))

    def _json_one_of(self, name, values):
        if not self._numeric_operands(name, values):
            return self._one_of(name, values)
        numbers = [store_hosts.as_number(value) for value in values]
        return self.target.where(name, lambda col: col.in_(numbers),
                                 numeric=True)

    def _capability_op(self, name, op, value):
        if op == '<in>':
            return self.target.where(name, lambda col: _Position(
                _as_string(col), _literal(value)) > 0)
        if op in _STRING:
            return self._compare(name, _STRING[op], value, numeric=False)
        return self._compare(name, _NUMERIC[op], value, numeric=True)

    def _compare(self, name, compare, value, numeric):
        if numeric:
            number = store_hosts.as_number(value)
            if number is None:
                raise self.error('%s: %r is not a number', name, value)
            if not self.target.is_numeric(name):
                raise self.error('%s is not numeric', name)
            return self.target.where(name, lambda col: compare(col, number),
                                     numeric=True)
        if compare in (operator.eq, operator.ne):
            return self.target.where(
                name, lambda col: compare(_as_string(col), value))
        return self.target.where(name, lambda col: compare(
            _Bytewise(_as_string(col)), _Bytewise(_literal(value))))

    def _one_of(self, name, values):
        return self.target.where(
            name, lambda col: _as_string(col).in_(values))

    def _numeric_operands(self, name, values):
        """Return whether JsonFilter compares ``values`` as numbers."""
        return self.target.is_numeric(name) and all(
            store_hosts.as_number(value) is not None for value in values)


def _literal(value):
    return sa.literal(value, sa.String())


def _as_string(column):
    if isinstance(column.type, sa.Integer):
        return sa.cast(column, sa.String)
    return column
