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

"""The layers of the architecture page hold: imports point down only.

The order is read from the page itself (the first column of the
list-table in the "Layers" section of
``doc/source/contributor/architecture.rst``), so that the page and the
code cannot disagree. Each row is a folder (``reservation_ext/api/``) or
a module (``reservation_ext/states.py``); every package and top-level
module of ``reservation_ext/``, and the packages ``nova_filters/``,
``cinder_ext/`` and ``db/``, has exactly one row. A row's code imports
(at module level or in a function) its own row and the rows below it,
never a row above. A row whose code does not exist yet is allowed.

The leases DB package (``db/``) is the bottom layer: the scheduler
filter, the Cinder extension and the management commands use it without
pulling in the rest.

Outside the layered code, the benchmarks (``bench/``) and the tests
depend on each other one way only: the tests may import ``bench``, never
the reverse, and what both drive (a sandbox, the soaks' runs) is in
``harness/``, which imports neither.
"""

import ast
import os
import re

import db
from tests import base

TOP = os.path.dirname(os.path.dirname(os.path.dirname(
    os.path.abspath(__file__))))
PAGE = os.path.join(TOP, 'doc', 'source', 'contributor', 'architecture.rst')
# The layered code; the subpackages and modules of the first have a row
# each, the others are one row each.
ROOTS = ('reservation_ext', 'nova_filters', 'cinder_ext', 'db')
ABOVE_DB = ('reservation_ext', 'nova_filters', 'cinder_ext')

# What the code outside the layers never imports, so that the benchmarks
# and the tests depend on each other one way: the tests import ``bench``
# (the simulations they check) and ``harness``, ``bench`` imports
# ``harness``, ``harness`` neither.
OUTSIDE = {'bench': ('tests',), 'harness': ('tests', 'bench')}

# A section title: a line underlined with dashes.
_TITLE = re.compile(r'^(\S.*)\n-{3,}$', re.M)
# The first cell of a list-table row, and a literal (``...``) alone.
_FIRST_CELL = re.compile(r'^\s*\* - (.*)$', re.M)
_LITERAL = re.compile(r'^``([^`]+)``$')


def layer_rows(text, section='Layers'):
    """The paths of the first column of a section's list-table, in order.

    The header row is skipped.

    :raises ValueError: no such section, or a first cell that is not one
        literal path.
    """
    titles = list(_TITLE.finditer(text))
    starts = [m for m in titles if m.group(1).strip() == section]
    if not starts:
        raise ValueError('no section %r' % section)
    following = [m.start() for m in titles if m.start() > starts[0].end()]
    body = text[starts[0].end():following[0] if following else len(text)]
    paths = []
    for cell in _FIRST_CELL.findall(body)[1:]:
        literal = _LITERAL.match(cell.strip())
        if literal is None:
            raise ValueError('not a path: %r' % cell)
        paths.append(literal.group(1))
    return paths


def row_key(path):
    """The dotted module name of a row (or of a source file's path).

    ``reservation_ext/api/`` is ``reservation_ext.api``,
    ``reservation_ext/__init__.py`` is ``reservation_ext``.
    """
    parts = path.strip('/').split('/')
    if parts[-1] == '__init__.py':
        parts.pop()
    elif parts[-1].endswith('.py'):
        parts[-1] = parts[-1][:-len('.py')]
    return '.'.join(parts)


def unit_of(path):
    """The key of the row a source file (relative path) must be in.

    A subpackage or top-level module of ``reservation_ext/``, or one of
    the other roots.
    """
    parts = path.split('/')
    if parts[0] != 'reservation_ext':
        return parts[0]
    return row_key('/'.join(parts[:2]))


def sources(roots=ROOTS):
    """``{relative path: text}`` of every Python file of ``roots``."""
    found = {}
    for root in roots:
        for folder, _dirs, files in os.walk(os.path.join(TOP, root)):
            for name in files:
                if name.endswith('.py'):
                    path = os.path.join(folder, name)
                    with open(path) as f:
                        found[os.path.relpath(path, TOP)] = f.read()
    return found


def imports(path, text):
    """``(line, dotted name)`` of every import of a source file.

    ``from a import b`` gives ``a.b`` (a module or a name of ``a``: the
    row is the same); relative imports are made absolute.
    """
    package = row_key(path)
    if not path.endswith('__init__.py'):
        package = package.rpartition('.')[0]
    for node in ast.walk(ast.parse(text, path)):
        if isinstance(node, ast.Import):
            for alias in node.names:
                yield node.lineno, alias.name
        elif isinstance(node, ast.ImportFrom):
            module = node.module
            if node.level:
                parts = package.split('.')
                parts = parts[:len(parts) - node.level + 1]
                module = '.'.join(parts + ([module] if module else []))
            for alias in node.names:
                yield node.lineno, (module if alias.name == '*'
                                    else module + '.' + alias.name)


def row_of(name, keys):
    """The index in ``keys`` of the row of a dotted name, or None.

    The longest key that is the name or a package of it; None for code
    outside the layers (the standard library, other projects).
    """
    best = None
    for index, key in enumerate(keys):
        if name == key or name.startswith(key + '.'):
            if best is None or len(key) > len(keys[best]):
                best = index
    return best


def upward_imports(rows, files):
    """The imports of ``files`` (``{path: text}``) of a row above their own.

    ``[(path, line, imported name, its row)]``.
    """
    keys = [row_key(row) for row in rows]
    found = []
    for path, text in sorted(files.items()):
        own = row_of(unit_of(path), keys)
        for line, name in imports(path, text):
            target = row_of(name, keys)
            if target is not None and own is not None and target < own:
                found.append((path, line, name, rows[target]))
    return found


def rows_missing(rows, paths):
    """The units of the source files ``paths`` that have no row."""
    keys = {row_key(row) for row in rows}
    return sorted({unit_of(path) for path in paths} - keys)


def rows_of_no_unit(rows, paths):
    """The rows of existing code that are not a whole unit.

    A row inside a package (``reservation_ext/planning/planner.py``)
    would split it, and its other modules could hide under the package's
    own row. Rows of code that does not exist yet are not counted.
    """
    units = {unit_of(path) for path in paths}
    modules = {row_key(path) for path in paths}
    return [row for row in rows
            if row_key(row) not in units and any(
                module == row_key(row) or
                module.startswith(row_key(row) + '.')
                for module in modules)]


class LayersTest(base.TestCase):
    """The code against the table of the architecture page."""

    def setUp(self):
        super().setUp()
        with open(PAGE) as f:
            self.rows = layer_rows(f.read())
        self.files = sources()

    def test_imports_point_down_the_table(self):
        self.assertEqual([], upward_imports(self.rows, self.files))

    def test_every_package_and_module_has_a_row(self):
        self.assertEqual([], rows_missing(self.rows, self.files))

    def test_every_row_of_existing_code_is_one_package_or_module(self):
        self.assertEqual([], rows_of_no_unit(self.rows, self.files))

    def test_no_row_twice(self):
        keys = [row_key(row) for row in self.rows]
        self.assertEqual(len(keys), len(set(keys)), self.rows)

    def test_the_table_is_read(self):
        self.assertEqual('db/', self.rows[-1])
        self.assertIn('reservation_ext/api/', self.rows)
        self.assertIn('reservation_ext/states.py', self.rows)

    def test_an_upward_import_is_caught(self):
        # Without this, a walk that saw nothing would pass: the real
        # table, and code that imports up, down and its own row.
        files = {
            'reservation_ext/clock.py':
                'import datetime\n\nimport db\n\n\ndef now():\n'
                '    from reservation_ext.api import wsgi\n',
            'reservation_ext/api/handlers/leases.py':
                'from ...cmd import engine\nfrom .. import wsgi\n',
            'db/api.py': 'from . import models\nimport reservation_ext\n'}
        self.assertEqual([
            ('db/api.py', 2, 'reservation_ext', 'reservation_ext/__init__.py'),
            ('reservation_ext/api/handlers/leases.py', 1,
             'reservation_ext.cmd.engine', 'reservation_ext/cmd/'),
            ('reservation_ext/clock.py', 7, 'reservation_ext.api.wsgi',
             'reservation_ext/api/')], upward_imports(self.rows, files))

    def test_code_without_a_row_is_caught(self):
        self.assertEqual(['reservation_ext.extra'], rows_missing(
            self.rows, ['reservation_ext/extra/a.py',
                        'reservation_ext/api/wsgi.py']))
        self.assertEqual(['reservation_ext/planning/planner.py'],
                         rows_of_no_unit(
                             ['reservation_ext/planning/planner.py',
                              'reservation_ext/planning/',
                              'reservation_ext/later/'],
                             ['reservation_ext/planning/planner.py']))

    def test_the_rows_of_a_section_are_its_first_column(self):
        text = ('Layers\n------\n\n.. list-table::\n   :header-rows: 1\n\n'
                '   * - folder\n     - what\n   * - ``a/``\n     - A\n'
                '   * - ``b.py``\n     - B, not ``c/``\n\n'
                'Next\n----\n\n   * - ``d/``\n')
        self.assertEqual(['a/', 'b.py'], layer_rows(text))
        self.assertRaises(ValueError, layer_rows,
                          text.replace('``a/``', 'a'))


class DBLayeringTest(base.TestCase):
    """``db/`` imports nothing of the project."""

    def test_db_imports_nothing_from_the_layers_above(self):
        offending = [
            (path, name)
            for path, text in sorted(sources().items())
            if path.startswith('db/')
            for _line, name in imports(path, text)
            if name.split('.')[0] in ABOVE_DB]
        self.assertEqual([], offending)

    def test_the_walk_sees_the_db_api_and_the_migrations(self):
        top = os.path.relpath(os.path.dirname(os.path.abspath(db.__file__)),
                              TOP)
        names = {os.path.basename(path) for path in sources()
                 if path.startswith(top + os.sep)}
        self.assertTrue({'api.py', 'models.py', 'env.py'} <= names, names)


class BenchAndTestsTest(base.TestCase):
    """``bench/`` and ``harness/`` never import the tests."""

    def test_benchmarks_and_harnesses_never_import_the_tests(self):
        offending = [
            (path, name)
            for path, text in sorted(sources(tuple(OUTSIDE)).items())
            for _line, name in imports(path, text)
            if name.split('.')[0] in OUTSIDE[path.split('/')[0]]]
        self.assertEqual([], offending)

    def test_the_walk_sees_the_benchmarks_and_the_harnesses(self):
        paths = set(sources(tuple(OUTSIDE)))
        self.assertTrue({'bench/energy.py', 'harness/sandbox.py'} <= paths)
