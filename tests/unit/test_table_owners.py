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

"""Each table of the leases DB is written by one module, its owner.

:data:`db.tables.OWNERS` names the owner of every table. The check reads
every Python file of ``reservation_ext/``, ``nova_filters/``,
``cinder_ext/`` and ``db/`` (not the migrations, which make the schema)
statement by statement, and finds each write in it:

* SQL expressions: ``sa.insert(X)``, ``sa.update(X)``, ``sa.delete(X)``,
  ``X.insert()``, ``X.update()``, ``X.delete()``;
* ORM writes: ``session.add``/``add_all``/``merge``/``delete``/
  ``bulk_*``, and ``session.query(...)...update()``/``delete()``;
* raw SQL (``sa.text``, ``exec_driver_sql``) that inserts, updates or
  deletes;
* calls of the generic helpers that write the table they are given
  (:data:`WRITES_ITS_ARGUMENT`): the caller writes it.

The table of a write is resolved through ``tables.NAME``, a module-level
``NAME = tables.NAME`` binding, or ``models.Model.__table__`` (in
``db/`` only); the module that writes must be its owner. A write whose
table cannot be told fails, except in the generic helpers of
:data:`GENERIC_WRITERS`, each with its reason.
"""

import ast
import os
import re

import sqlalchemy as sa

from db import models
from db import tables
import reservation_ext
from tests import base

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(
    reservation_ext.__file__)))
PACKAGES = ('reservation_ext', 'nova_filters', 'cinder_ext', 'db')
SKIPPED = (os.path.join('db', 'migrations'),)
ARCHITECTURE = os.path.join(ROOT, 'doc', 'source', 'contributor',
                            'architecture.rst')
OWNERS_SECTION = 'Who writes each table'

# The canonical handles of db/tables.py: name -> table name.
HANDLES = {name: value.name for name, value in vars(tables).items()
           if isinstance(value, sa.Table)}
CANONICAL = {table: name for name, table in HANDLES.items()}
# The models by class name -> table name.
MODELS = {mapper.class_.__name__: mapper.local_table.name
          for mapper in models.Base.registry.mappers}

# The names a module imports SQLAlchemy's statement constructors under.
SQL_MODULES = frozenset(['sa', 'sqlalchemy', 'expression', 'dml', 'mysql',
                         'postgresql', 'sqlite'])
VERBS = frozenset(['insert', 'update', 'delete'])
SESSION_WRITES = frozenset(['add', 'add_all', 'merge', 'delete',
                            'bulk_save_objects', 'bulk_insert_mappings',
                            'bulk_update_mappings'])
RAW_SQL_CALLS = frozenset(['text', 'exec_driver_sql'])
RAW_WRITE = re.compile(
    r'^\s*(?:insert\s+into|update|delete\s+from)\s+[`"]?(\w+)', re.I)

# Helpers that write the table passed as one of their arguments (its
# index): the write is the caller's, to the table it passes.
WRITES_ITS_ARGUMENT = {'bump_counter': 1}
# (module, function): why its writes may name no table.
GENERIC_WRITERS = {
    ('db.api', 'bump_counter'):
        'makes the single counter row of the table its caller passes '
        '(pool_state, booking_state, volume_capacity_state); the call is '
        "checked as the caller's write",
    ('db.api', '_increment'):
        'bumps the single counter row of the table bump_counter passes',
}


class Write:
    """One write found: where, in which function, to which table."""

    def __init__(self, path, line, module, function, table, what):
        self.path, self.line, self.module = path, line, module
        self.function, self.table, self.what = function, table, what

    def __repr__(self):
        return '%s:%d %s() %s %s' % (self.path, self.line, self.function,
                                     self.what, self.table or '<unknown>')


class Checker(ast.NodeVisitor):
    """Finds the writes and the misnamed table handles of one module."""

    def __init__(self, module, path, in_db):
        self.module, self.path, self.in_db = module, path, in_db
        self.bindings = {}
        self.writes = []
        # Table handles bound under another name than db.tables' own,
        # and models' tables reached outside db/.
        self.misnamed = []
        self.model_tables = []
        self.functions = []

    def check(self, tree):
        """Read ``tree`` (the module's AST); return ``self``."""
        for node in tree.body:
            if isinstance(node, ast.Assign):
                self._binding(node)
        self.visit(tree)
        return self

    def _binding(self, node):
        value = node.value
        handle = isinstance(value, ast.Name) or (
            isinstance(value, ast.Attribute) and (
                _is_name(value.value, 'tables') or value.attr == '__table__'))
        table = self.table_of(value) if handle else None
        if table is None or len(node.targets) != 1:
            return
        target = node.targets[0]
        name = target.id if isinstance(target, ast.Name) else None
        if name != CANONICAL[table]:
            self.misnamed.append('%s:%d binds %s under the name %s, not %s' % (
                self.path, node.lineno, table, name, CANONICAL[table]))
            return
        self.bindings[name] = table

    def table_of(self, node):
        """The table an expression names, or None."""
        if isinstance(node, ast.Call):
            node = node.func
        if isinstance(node, ast.Name):
            return self.bindings.get(node.id)
        if not isinstance(node, ast.Attribute):
            return None
        if _is_name(node.value, 'tables'):
            return HANDLES.get(node.attr)
        if _is_name(node.value, 'models'):
            return MODELS.get(node.attr)
        if node.attr == '__table__' and isinstance(node.value,
                                                   ast.Attribute):
            return self.table_of(node.value)
        return None

    def visit_FunctionDef(self, node):
        self.functions.append(node.name)
        self.generic_visit(node)
        self.functions.pop()

    visit_AsyncFunctionDef = visit_FunctionDef

    def visit_Attribute(self, node):
        if (node.attr == '__table__' and not self.in_db and
                isinstance(node.value, ast.Attribute) and
                _is_name(node.value.value, 'models')):
            self.model_tables.append(
                '%s:%d reaches models.%s.__table__ outside db/: use its '
                'handle in db.tables' % (self.path, node.lineno,
                                         node.value.attr))
        self.generic_visit(node)

    def visit_Call(self, node):
        found = self._write_of(node)
        if found is not None:
            what, target = found
            self.writes.append(Write(
                self.path, node.lineno, self.module,
                self.functions[-1] if self.functions else None,
                target if isinstance(target, str) else
                self.table_of(target), what))
        self.generic_visit(node)

    def _write_of(self, node):
        """``(what, target)`` of a write call, or None.

        ``target`` is the expression naming the table, or the table name
        itself (raw SQL).
        """
        func = node.func
        name = (func.attr if isinstance(func, ast.Attribute) else
                getattr(func, 'id', None))
        if name in WRITES_ITS_ARGUMENT:
            index = WRITES_ITS_ARGUMENT[name]
            return name, (node.args[index] if len(node.args) > index
                          else None)
        if name in RAW_SQL_CALLS:
            return _raw_write(node)
        if not isinstance(func, ast.Attribute):
            return None
        if name in VERBS and _is_sql_module(func.value):
            return name, node.args[0] if node.args else None
        if name in SESSION_WRITES and _is_session(func.value):
            return 'session.' + name, node.args[0] if node.args else None
        if name in ('update', 'delete'):
            query = _query_of(func.value)
            if query is not None:
                return 'query.' + name, query.args[0] if query.args else None
        if name in VERBS and not node.args and not node.keywords:
            return name, func.value
        return None


def _is_name(node, name):
    return isinstance(node, ast.Name) and node.id == name


def _is_sql_module(node):
    return isinstance(node, ast.Name) and node.id in SQL_MODULES


def _is_session(node):
    name = (node.id if isinstance(node, ast.Name) else
            getattr(node, 'attr', ''))
    return name.endswith('session')


def _query_of(node):
    """The ``.query(...)`` call a method chain starts from, or None."""
    while isinstance(node, ast.Call) and isinstance(node.func,
                                                    ast.Attribute):
        if node.func.attr == 'query':
            return node
        node = node.func.value
    return None


def _raw_write(node):
    if not (node.args and isinstance(node.args[0], ast.Constant) and
            isinstance(node.args[0].value, str)):
        return None
    match = RAW_WRITE.match(node.args[0].value)
    return ('raw SQL', match.group(1)) if match else None


def check_source(source, module, path=None, in_db=None):
    """The :class:`Checker` of one module's source, once it has read it."""
    path = path or module.replace('.', '/') + '.py'
    in_db = module.split('.')[0] == 'db' if in_db is None else in_db
    return Checker(module, path, in_db).check(ast.parse(source, path))


def violations(checker):
    """The writes of a checked module that its owners do not allow."""
    found = []
    for write in checker.writes:
        if write.table is None:
            if (write.module, write.function) not in GENERIC_WRITERS:
                found.append('%r: cannot tell which table it writes'
                             % write)
        elif tables.OWNERS.get(write.table) != write.module:
            found.append('%r: %s is written by %s only' % (
                write, write.table, tables.OWNERS.get(write.table)))
    return found


def module_paths():
    """``(module, path)`` of every checked Python file, path from ROOT."""
    for package in PACKAGES:
        for folder, dirs, files in os.walk(os.path.join(ROOT, package)):
            relative = os.path.relpath(folder, ROOT)
            if relative.startswith(SKIPPED):
                dirs[:] = []
                continue
            dirs.sort()
            for name in sorted(files):
                if name.endswith('.py'):
                    yield _module(relative, name), os.path.join(relative,
                                                                name)


def _module(folder, name):
    parts = folder.split(os.sep)
    if name != '__init__.py':
        parts.append(name[:-len('.py')])
    return '.'.join(parts)


def check_tree():
    """The checkers of every module of the tree."""
    checkers = []
    for module, path in module_paths():
        with open(os.path.join(ROOT, path)) as f:
            checkers.append(check_source(f.read(), module, path))
    return checkers


def documented_owners():
    """``{table: module}`` as the architecture page's owners table says."""
    with open(ARCHITECTURE) as f:
        text = f.read()
    section = text.split('\n%s\n' % OWNERS_SECTION, 1)[1]
    rows = re.findall(r'^\s*\* - ``(\w+)``\n\s*- ``([\w.]+)``', section,
                      re.M)
    return dict(rows)


class TableOwnersTest(base.TestCase):

    @classmethod
    def setUpClass(cls):
        super().setUpClass()
        cls.checkers = check_tree()

    def test_every_table_has_an_owner(self):
        self.assertEqual(set(models.Base.metadata.tables),
                         set(tables.OWNERS))

    def test_every_write_is_made_by_the_owner_of_its_table(self):
        self.assertEqual([], [problem for checker in self.checkers
                              for problem in violations(checker)])

    def test_every_owner_writes_its_table(self):
        written = {(write.table, write.module)
                   for checker in self.checkers for write in checker.writes}
        self.assertEqual({}, {table: owner
                              for table, owner in tables.OWNERS.items()
                              if (table, owner) not in written})

    def test_tables_are_bound_only_under_their_canonical_names(self):
        self.assertEqual([], [problem for checker in self.checkers
                              for problem in checker.misnamed])

    def test_models_tables_are_reached_through_db_tables_outside_db(self):
        self.assertEqual([], [problem for checker in self.checkers
                              for problem in checker.model_tables])

    def test_each_generic_writer_allowed_writes_an_untold_table(self):
        untold = {(write.module, write.function)
                  for checker in self.checkers for write in checker.writes
                  if write.table is None}
        self.assertEqual(set(), set(GENERIC_WRITERS) - untold)

    def test_the_walk_sees_every_package_and_skips_the_migrations(self):
        modules = {module for module, _path in module_paths()}
        self.assertTrue({'db.api', 'db.tables', 'nova_filters',
                         'cinder_ext.extension',
                         'reservation_ext.store.allocations'} <= modules)
        self.assertFalse([module for module in modules
                          if module.startswith('db.migrations')])

    def test_the_architecture_page_lists_the_owners_of_db_tables(self):
        self.assertEqual(tables.OWNERS, documented_owners())


class CheckerTest(base.TestCase):
    """The checker finds what it must, so that its silence means much."""

    def assert_violations(self, source, module, count=1):
        found = violations(check_source(source, module))
        self.assertEqual(count, len(found), found)
        return found

    def test_a_write_by_a_non_owner_fails(self):
        [found] = self.assert_violations(
            'from db import tables\n'
            'import sqlalchemy as sa\n'
            'ALLOCATIONS = tables.ALLOCATIONS\n'
            'def book(session, rows):\n'
            '    session.execute(sa.insert(ALLOCATIONS), rows)\n',
            'reservation_ext.planning.planner')
        self.assertIn('host_allocations is written by '
                      'reservation_ext.store.allocations only', found)

    def test_a_write_by_the_owner_passes(self):
        self.assert_violations(
            'from db import tables\n'
            'import sqlalchemy as sa\n'
            'def book(session, rows):\n'
            '    session.execute(sa.insert(tables.ALLOCATIONS), rows)\n'
            '    session.execute(tables.ALLOCATIONS.delete())\n',
            'reservation_ext.store.allocations', count=0)

    def test_every_form_of_write_names_its_table(self):
        checker = check_source(
            'from db import models\n'
            'from db import tables\n'
            'import sqlalchemy as sa\n'
            'HOSTS = tables.HOSTS\n'
            'def f(session):\n'
            '    sa.update(HOSTS)\n'
            '    HOSTS.insert()\n'
            '    tables.HOSTS.delete()\n'
            '    sa.delete(models.ComputeHost.__table__)\n'
            '    session.add(models.ComputeHost(id=1))\n'
            '    session.query(models.ComputeHost).filter().delete()\n'
            '    session.query(models.ComputeHost).update({"id": 2})\n'
            '    session.execute(sa.text("UPDATE computehosts SET x=1"))\n'
            '    bump_counter(session, HOSTS)\n',
            'db.somewhere')
        self.assertEqual(['computehosts'] * 9,
                         [write.table for write in checker.writes])

    def test_a_write_to_a_table_it_cannot_tell_fails(self):
        [found] = self.assert_violations(
            'import sqlalchemy as sa\n'
            'def flag(session, table):\n'
            '    session.execute(sa.update(table))\n',
            'reservation_ext.engine.host_monitor')
        self.assertIn('cannot tell which table', found)

    def test_an_orm_write_of_an_object_it_cannot_tell_fails(self):
        self.assert_violations(
            'def save(session, row):\n'
            '    session.merge(row)\n',
            'reservation_ext.store.hosts')

    def test_a_generic_writer_may_write_the_table_it_is_given(self):
        self.assert_violations(
            'import sqlalchemy as sa\n'
            'def _increment(session, table):\n'
            '    session.execute(sa.update(table))\n',
            'db.api', count=0)

    def test_a_table_bound_under_another_name_fails(self):
        checker = check_source(
            'from db import tables\n'
            'BOOKINGS = tables.ALLOCATIONS\n'
            'ALLOCATIONS = tables.ALLOCATIONS\n'
            'HELD = ALLOCATIONS\n',
            'reservation_ext.planning.planner')
        self.assertEqual(2, len(checker.misnamed), checker.misnamed)
        self.assertIn('under the name BOOKINGS', checker.misnamed[0])
        self.assertIn('under the name HELD', checker.misnamed[1])

    def test_a_models_table_outside_db_fails(self):
        checker = check_source(
            'from db import models\n'
            'def f():\n'
            '    return models.Lease.__table__\n',
            'reservation_ext.leases.views')
        self.assertEqual(1, len(checker.model_tables), checker.model_tables)

    def test_dict_and_list_methods_are_no_writes(self):
        checker = check_source(
            'def f(values, items):\n'
            '    values.update(a=1)\n'
            '    items.insert(0, 1)\n'
            '    values.update({"b": 2})\n',
            'reservation_ext.leases.parsing')
        self.assertEqual([], checker.writes)
