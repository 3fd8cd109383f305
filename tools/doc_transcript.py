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
    .venv/bin/python tools/doc_transcript.py - PAGE.rst

COMMANDS_FILE holds commands separated by blank lines (a command may
span lines); a ``.rst`` file's are its steps (those after a ``$``
prompt), with the ids its shown output has swapped for this run's, as
the doc tests do. They run in order in one bash, as the doc tests run
them (:class:`tests.e2e.doc_runner.DocShell`: ``.sandbox`` is STATE_DIR,
the PATH has no client until an openrc puts them there); the transcript,
in the form a user guide page shows (``$ command``, then its output,
then ``[status N]`` when it failed), goes to stdout, to paste into the
page.

STATE_DIR ``-`` is for a page whose commands start its sandboxes
(``.. doc-runner: starts-sandboxes``): no sandbox is linked, a sandbox's
command runs in the background until ``sandbox ready``, and its
``/tmp/NAME`` paths are in a temporary directory, shown as ``/tmp``.
Every sandbox a command started is stopped at the end. The shell's
working directory is shown as a reader's checkout,
``/home/you/reservation-ext``.
"""

import sys
import tempfile

sys.path.insert(0, __file__.rsplit('/tools/', 1)[0])

from tests.e2e import doc_runner  # noqa: E402

CHECKOUT_SHOWN = '/home/you/reservation-ext'
# Client noise a page does not show.
_NOISE = ('Could not load ', 'nova CLI is deprecated')


def steps(path):
    """``[(command, shown)]`` of ``path`` (shown is None in a list)."""
    with open(path) as commands_file:
        text = commands_file.read()
    if path.endswith('.rst'):
        return doc_runner.rst_steps(text)
    return [(command.strip('\n'), None) for command in text.split('\n\n')
            if command.strip()]


def main(state_dir, path):
    """Run the commands of ``path`` against the sandbox in ``state_dir``."""
    tmp_dir = tempfile.mkdtemp() if state_dir == '-' else None
    workdir = tempfile.mkdtemp()
    shell = doc_runner.DocShell(None if tmp_dir else state_dir, workdir,
                                tmp_dir=tmp_dir)
    try:
        for command, shown in steps(path):
            if shown is not None:
                command = doc_runner.literal_ids(command, shell.history)
            ran, status, output = shell.run(command)
            shell.history.append((shown or '', output))
            if tmp_dir:
                output = output.replace(tmp_dir.rstrip('/'), '/tmp')
            output = output.replace(workdir, CHECKOUT_SHOWN)
            print('$ ' + ran.replace('\n', '\n    '))
            print('\n'.join(line for line in
                            output.rstrip('\n').splitlines()
                            if not line.startswith(_NOISE)))
            if status:
                print('[status %d]' % status)
    finally:
        shell.close()


if __name__ == '__main__':
    main(*sys.argv[1:])
