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
"""

import os

import fixtures

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
        shell = doc_runner.DocShell(self.sandbox.state_dir, workdir)
        self.addCleanup(shell.close)
        for command, shown in steps:
            shell.run_step(command, shown)


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
        # The page's --hosts, after the class's, wins.
        classes['TestUserGuide' + title] = type(
            'TestUserGuide' + title, (_PageCommands, base.SandboxTestCase),
            {'PAGE': name, 'OPTIONS': tuple(options),
             '__module__': __name__})
    return classes


globals().update(_page_classes())
