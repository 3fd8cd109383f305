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

"""Run a doc page's commands against a running sandbox; print a transcript.

    .venv/bin/python tools/doc_transcript.py STATE_DIR COMMANDS_FILE

COMMANDS_FILE holds commands separated by blank lines (a command may
span lines). They run in order in one bash, as the doc tests run them
(:class:`tests.e2e.doc_runner.DocShell`: ``.sandbox`` is STATE_DIR, the
PATH has no client until an openrc puts them there); the transcript, in
the form a user guide page shows (``$ command``, then its output, then
``[status N]`` when it failed), goes to stdout, to paste into the page.
"""

import sys
import tempfile

sys.path.insert(0, __file__.rsplit('/tools/', 1)[0])

from tests.e2e import doc_runner  # noqa: E402

# Client noise a page does not show.
_NOISE = ('Could not load ', 'nova CLI is deprecated')


def main(state_dir, path):
    """Run the commands of ``path`` against the sandbox in ``state_dir``."""
    with open(path) as commands_file:
        commands = [command.strip('\n') for command in
                    commands_file.read().split('\n\n') if command.strip()]
    shell = doc_runner.DocShell(state_dir, tempfile.mkdtemp())
    for command in commands:
        ran, status, output = shell.run(command)
        print('$ ' + ran.replace('\n', '\n    '))
        print('\n'.join(line for line in output.rstrip('\n').splitlines()
                        if not line.startswith(_NOISE)))
        if status:
            print('[status %d]' % status)
    shell.close()


if __name__ == '__main__':
    main(*sys.argv[1:])
