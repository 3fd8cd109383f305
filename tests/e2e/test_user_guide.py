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

"""The user guide's pages, each run as written against a fresh sandbox.

A page with a ``.. doc-runner: OPTIONS`` comment gets a class here whose
sandbox has those options; its test runs every command after a ``$``
prompt, in order, in one shell (:mod:`tests.e2e.doc_runner`): a command
whose shown output has an ``ERROR`` line must fail with that error, any
other must succeed.

A page whose own commands start its sandboxes (the sandbox's and the
dashboard's pages) says ``.. doc-runner: starts-sandboxes`` instead: its
class starts none, and its commands' ``/tmp`` paths are in a directory of
the test's.
"""

import os

import fixtures
import testtools

from tests.e2e import base
from tests.e2e import doc_runner

GUIDE = os.path.join(doc_runner.CHECKOUT, 'doc', 'source', 'user')


class _PageCommands:
    """The commands of :attr:`PAGE`, run as written (a SandboxTestCase's)."""

    PAGE = None

    def test_every_command_of_the_page_works_as_written(self):
        with open(os.path.join(GUIDE, self.PAGE)) as page:
            steps = doc_runner.rst_steps(page.read())
        workdir = self.useFixture(fixtures.TempDir()).path
        shell = doc_runner.DocShell(workdir=workdir, **self.shell_options())
        self.addCleanup(shell.close)
        for command, shown in steps:
            shell.run_step(command, shown)

    def shell_options(self):
        """The DocShell's: the class's sandbox is ``.sandbox``."""
        return {'state_dir': self.sandbox.state_dir}


class _PageStartingSandboxes(_PageCommands):
    """The commands of a page that starts its sandboxes (a TestCase's)."""

    def shell_options(self):
        """No sandbox yet; ``/tmp/NAME`` is the test's."""
        return {'state_dir': None,
                'tmp_dir': self.useFixture(fixtures.TempDir()).path}


def _page_classes():
    """A test class per page with a ``.. doc-runner:`` comment."""
    classes = {}
    for name in sorted(os.listdir(GUIDE)):
        if not name.endswith('.rst'):
            continue
        with open(os.path.join(GUIDE, name)) as page:
            options = doc_runner.page_options(page.read())
        if options is None:
            continue
        title = ''.join(part.title() for part in
                        name[:-len('.rst')].replace('-', '_').split('_'))
        classes['TestUserGuide' + title] = _page_class(
            'TestUserGuide' + title, name, options)
    return classes


def _page_class(class_name, page, options):
    """The test class of ``page``, for its ``.. doc-runner:`` options."""
    attributes = {'PAGE': page, '__module__': __name__}
    if doc_runner.STARTS_SANDBOXES not in options:
        # The page's --hosts, after the class's, wins.
        attributes['OPTIONS'] = tuple(options)
        return type(class_name, (_PageCommands, base.SandboxTestCase),
                    attributes)
    if options != [doc_runner.STARTS_SANDBOXES]:
        raise ValueError('%s: %s takes no sandbox options, its commands '
                         'give them' % (page, doc_runner.STARTS_SANDBOXES))
    return type(class_name, (_PageStartingSandboxes, testtools.TestCase),
                attributes)


globals().update(_page_classes())
