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

"""The leases DB package (``db/``) is the bottom layer.

The services above it import it; it imports none of them, so that the
scheduler filter, the Cinder extension and the management commands can
use it without pulling in the rest, and no import cycle can form.
"""

import ast
import os

import db
from tests import base

ABOVE = ('reservation_ext', 'nova_filters', 'cinder_ext')


def imported_modules(path):
    """The names of the modules a Python source file imports."""
    with open(path) as f:
        tree = ast.parse(f.read(), path)
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            yield from (alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module:
            yield node.module


def db_sources():
    """Every Python file under ``db/``, migrations included."""
    top = os.path.dirname(os.path.abspath(db.__file__))
    for folder, _dirs, files in os.walk(top):
        yield from (os.path.join(folder, name) for name in sorted(files)
                    if name.endswith('.py'))


class DBLayeringTest(base.TestCase):

    def test_db_imports_nothing_from_the_layers_above(self):
        offending = [
            (os.path.relpath(path), module)
            for path in db_sources()
            for module in imported_modules(path)
            if module.split('.')[0] in ABOVE]
        self.assertEqual([], offending)

    def test_the_walk_sees_the_db_api_and_the_migrations(self):
        names = {os.path.basename(path) for path in db_sources()}
        self.assertTrue({'api.py', 'models.py', 'env.py'} <= names, names)
