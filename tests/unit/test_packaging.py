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

"""Packaging: the license, the requirements and the extras.

The runtime requirements (``requirements.txt``) are what nova-api,
nova-scheduler, cinder-api and the engine import of the project; what only
the sandbox needs is the ``sandbox`` extra of ``setup.cfg``, and what only
the OpenStackClient plugin needs the ``client`` extra.
"""

import ast
import configparser
import importlib.metadata
import os
import re
import subprocess
import sys

from packaging import requirements
from packaging import utils as packaging_utils

from tests import base

TOP = os.path.dirname(os.path.dirname(os.path.dirname(
    os.path.abspath(__file__))))

# The license header every Python file starts with, the block of Nova's and
# the Oslo libraries' files. Copyright lines may come before it, closed by
# a "#" line (Nova's "# Copyright ... / # All Rights Reserved. / #").
LICENSE_HEADER = """\
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
"""
_COPYRIGHT = re.compile(r'(# Copyright .*\n(# .*\n)*#\n)?')

# The folders whose Python files carry the header.
SOURCE_DIRS = ('reservation_ext', 'nova_filters', 'cinder_ext', 'db',
               'tests', 'bench', 'harness')

# What only the sandbox runs: never a runtime requirement.
SANDBOX_ONLY = ('nova', 'cinder', 'openstack-placement', 'keystone',
                'keystonemiddleware', 'python-keystoneclient',
                'wsgi-intercept')

# The services the extension runs inside: imported, never required.
HOST_SERVICES = ('nova', 'cinder')


def _read(path):
    with open(os.path.join(TOP, path)) as f:
        return f.read()


def _setup_cfg():
    parser = configparser.ConfigParser(interpolation=None)
    parser.read_string(_read('setup.cfg'))
    return parser


def _names(lines):
    """The canonical project names of requirement lines."""
    return {packaging_utils.canonicalize_name(
        requirements.Requirement(line).name)
        for line in (line.strip() for line in lines)
        if line and not line.startswith('#')}


def _runtime_requirements():
    return _names(_read('requirements.txt').splitlines())


def _sandbox_extra():
    return _extra('sandbox')


def _extra(name):
    return _names(_setup_cfg()['extras'][name].splitlines())


def _python_files(folder):
    for dirpath, dirnames, filenames in os.walk(os.path.join(TOP, folder)):
        dirnames[:] = [d for d in dirnames if d != '__pycache__']
        for name in filenames:
            if name.endswith('.py'):
                yield os.path.join(dirpath, name)


def _imported_modules(paths):
    """The top-level modules that the files ``paths`` import."""
    modules = set()
    for path in paths:
        with open(path) as f:
            tree = ast.parse(f.read(), path)
        for node in ast.walk(tree):
            if isinstance(node, ast.Import):
                modules.update(a.name.split('.')[0] for a in node.names)
            elif isinstance(node, ast.ImportFrom) and node.level == 0:
                modules.add(node.module.split('.')[0])
    return modules


def _unlisted_imports(paths, listed):
    """The imports of ``paths`` whose distribution is not ``listed``.

    Standard library, the project's own packages and the host services
    aside; a module that no installed distribution provides counts too.
    """
    own = set(_setup_cfg()['files']['packages'].split())
    distributions = importlib.metadata.packages_distributions()
    unlisted = set()
    for module in _imported_modules(paths) - own - set(HOST_SERVICES):
        if module in sys.stdlib_module_names:
            continue
        names = {packaging_utils.canonicalize_name(name)
                 for name in distributions.get(module, ())}
        if not names & listed:
            unlisted.add(module)
    return unlisted


class PackagingTest(base.TestCase):

    def test_license_is_apache_2(self):
        self.assertEqual(['Apache License', 'Version 2.0, January 2004'],
                         [line.strip() for line in
                          _read('LICENSE').splitlines()[1:3]])
        self.assertIn('License :: OSI Approved :: Apache Software License',
                      _setup_cfg()['metadata']['classifier'])

    def test_python_files_start_with_the_license_header(self):
        try:
            tracked = subprocess.run(
                ['git', 'ls-files', '-z', '--', *SOURCE_DIRS], cwd=TOP,
                check=True, capture_output=True, text=True).stdout
        except (OSError, subprocess.CalledProcessError):
            self.skipTest('not a git checkout')
        missing = []
        for path in tracked.split('\0'):
            if not path.endswith('.py'):
                continue
            text = _read(path)
            start = _COPYRIGHT.match(text).end()
            if not text.startswith(LICENSE_HEADER, start):
                missing.append(path)
        self.assertEqual([], missing)

    def test_sandbox_only_packages_are_the_extra(self):
        extra = _sandbox_extra()
        self.assertEqual(set(), set(SANDBOX_ONLY) - extra)
        self.assertEqual(set(), extra & _runtime_requirements())

    def test_runtime_imports_are_requirements(self):
        extras = tuple(os.path.join(TOP, 'reservation_ext', folder, '')
                       for folder in ('sandbox', 'osc', 'calendars'))
        paths = [path
                 for folder in ('reservation_ext', 'nova_filters',
                                'cinder_ext', 'db')
                 for path in _python_files(folder)
                 if not path.startswith(extras)]
        self.assertEqual(set(), _unlisted_imports(
            paths, _runtime_requirements()))

    def test_sandbox_imports_are_requirements_or_its_extras(self):
        # --dashboard's child imports Django, which the dashboard extra
        # names for it.
        paths = _python_files(os.path.join('reservation_ext', 'sandbox'))
        self.assertEqual(set(), _unlisted_imports(
            paths, _runtime_requirements() | _sandbox_extra() |
            _extra('dashboard')))

    def test_dashboard_imports_are_requirements_or_the_extra(self):
        paths = _python_files(os.path.join('reservation_ext', 'calendars'))
        self.assertEqual(set(), _unlisted_imports(
            paths, _runtime_requirements() | _extra('dashboard')))

    def test_client_imports_are_requirements_or_the_extra(self):
        paths = _python_files(os.path.join('reservation_ext', 'osc'))
        self.assertEqual(set(), _unlisted_imports(
            paths, _runtime_requirements() | _extra('client')))
        self.assertEqual(set(), _extra('client') - _sandbox_extra())
