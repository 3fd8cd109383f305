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

"""Every package's docstring names each of its modules and subpackages.

A reader finds a package's parts from its ``__init__.py``; a module
added without a word there is one a reader does not know of. Alembic's
revision scripts, named by their revision, are listed by alembic itself.
"""

import ast
import os

from tests import base

TOP = os.path.dirname(os.path.dirname(os.path.dirname(
    os.path.abspath(__file__))))
PACKAGES = ('reservation_ext', 'nova_filters', 'cinder_ext', 'db',
            'harness', 'bench')
UNLISTED = (os.path.join('db', 'migrations', 'versions'),)


def parts(folder):
    """Return the module and subpackage names of the package ``folder``."""
    names = []
    for name in sorted(os.listdir(folder)):
        path = os.path.join(folder, name)
        if name.endswith('.py') and name != '__init__.py':
            names.append(name[:-3])
        elif os.path.isfile(os.path.join(path, '__init__.py')):
            names.append(name)
    return names


def unnamed_parts():
    """Return ``(package, part)`` for each part its docstring omits."""
    missing = []
    for package in PACKAGES:
        for folder, _dirs, files in os.walk(os.path.join(TOP, package)):
            relative = os.path.relpath(folder, TOP)
            if '__init__.py' not in files or relative in UNLISTED:
                continue
            with open(os.path.join(folder, '__init__.py')) as f:
                doc = ast.get_docstring(ast.parse(f.read())) or ''
            missing.extend((relative, name) for name in parts(folder)
                           if name not in doc)
    return missing


class PackageDocsTest(base.TestCase):

    def test_every_package_docstring_names_all_its_parts(self):
        self.assertEqual([], unnamed_parts())

    def test_the_walk_sees_the_packages_and_their_modules(self):
        self.assertIn('store', parts(os.path.join(TOP, 'reservation_ext')))
        self.assertIn('planner', parts(
            os.path.join(TOP, 'reservation_ext', 'planning')))
