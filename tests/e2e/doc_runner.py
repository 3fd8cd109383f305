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

"""The docs' commands, run as written against a sandbox.

:func:`readme_commands` reads the commands of the README's code blocks
(every line, a trailing backslash joining the next), :func:`rst_commands`
those of a user guide page's literal blocks (the lines after a ``$``
prompt; the other lines are output). :class:`DocShell` runs them one
after the other in one bash, in a directory where ``.sandbox`` is the
sandbox's state directory and ``doc`` the checkout's docs, starting from
a PATH without the sandbox's clients: the openrc files put them there,
as for a user. A ``<placeholder>`` is filled from the output of the
commands before it (:data:`FILLS`).
"""

import os
import queue
import re
import shlex
import subprocess
import threading
import uuid

CHECKOUT = os.path.dirname(os.path.dirname(os.path.dirname(
    os.path.abspath(__file__))))
COMMAND_TIMEOUT = 300
_PLACEHOLDER = re.compile(r'<([a-z][a-z_ ]*)>')
_UUID = '[0-9a-f]{8}-(?:[0-9a-f]{4}-){3}[0-9a-f]{12}'


def readme_commands(text, first, last):
    """The commands of the README's code blocks between two headings.

    :param first: the text of the line where the part starts.
    :param last: the line before which it ends.
    """
    part = text[text.index(first):text.index(last)]
    lines = [line[4:] for line in part.splitlines()
             if line.startswith('    ')]
    return _joined(lines)


def rst_steps(text):
    """The ``(command, shown output)`` of a page's literal blocks.

    A command is a line after a ``$`` prompt (and the lines its trailing
    backslashes join); its shown output is the block's lines after it,
    up to the next prompt or the block's end.
    """
    steps, continuing, indent = [], False, None
    for line in text.splitlines():
        stripped = line.strip()
        if continuing:
            steps[-1][0].append(stripped)
            continuing = stripped.endswith('\\')
            continue
        if indent is not None and stripped and not line.startswith(indent):
            indent = None
        if stripped.startswith('$ '):
            indent = line[:len(line) - len(line.lstrip())]
            steps.append(([stripped[2:]], []))
            continuing = stripped.endswith('\\')
        elif indent is not None:
            steps[-1][1].append(line[len(indent):])
    return [('\n'.join(command), '\n'.join(shown).strip('\n'))
            for command, shown in steps]


def page_options(text):
    """The sandbox options of a page's ``.. doc-runner:`` comment, or None.

    A page without one is not run.
    """
    match = re.search(r'^\.\. doc-runner:(.*)$', text, re.MULTILINE)
    return None if match is None else shlex.split(match.group(1))


def _joined(lines):
    commands, current = [], ''
    for line in lines:
        current += line + '\n'
        if not line.rstrip().endswith('\\'):
            commands.append(current.rstrip('\n'))
            current = ''
    return [command for command in commands if command.strip()]


def _after_reservations(output):
    return output[output.rindex('reservations'):] \
        if 'reservations' in output else ''


def _reservation_id(outputs):
    """The first reservation's id in the last lease shown or created."""
    for output in reversed(outputs):
        match = re.search(r'"id": "(%s)"' % _UUID,
                          _after_reservations(output))
        if match:
            return match.group(1)
    return None


def _flavor_id(outputs):
    return _last_match(outputs, r'"flavor_id": "([^"]+)"')


def _proposal_id(outputs):
    """The first proposal's id in the last ``lease propose`` table."""
    return _last_match(outputs, r'^\| (%s) \| \d{4}-' % _UUID)


def _last_match(outputs, pattern):
    for output in reversed(outputs):
        match = re.search(pattern, output, re.MULTILINE)
        if match:
            return match.group(1)
    return None


# What each placeholder of the docs stands for, found in earlier output.
FILLS = {
    'reservation id from the lease': _reservation_id,
    'reservation id': _reservation_id,
    'flavor_id from the lease': _flavor_id,
    'proposal id': _proposal_id,
}


def filled(command, outputs):
    """``command`` with its placeholders filled from ``outputs``.

    :raises AssertionError: a placeholder has no rule, or no earlier
        output has its value.
    """
    def fill(match):
        rule = FILLS.get(match.group(1))
        if rule is None:
            raise AssertionError('no rule fills <%s> in: %s'
                                 % (match.group(1), command))
        value = rule(outputs)
        if value is None:
            raise AssertionError('no output before <%s> has its value: %s'
                                 % (match.group(1), command))
        return value
    return _PLACEHOLDER.sub(fill, command)


def literal_ids(command, history):
    """``command`` with the ids an earlier shown output had, as this run's.

    A page's commands use the ids its example run printed: each id in
    ``command`` found in an earlier step's shown output is replaced by
    the id at the same place of that step's actual output (the same key
    or column, the same rank among them). Other ids stay as written.

    :param history: ``[(shown, actual)]`` of the steps before, in order.
    """
    def swap(match):
        for shown, actual in reversed(history):
            place = _place(shown, match.group(0))
            if place is not None:
                value = _nth(actual, *place)
                if value is None:
                    raise AssertionError(
                        'no id at the place of %s in:\n%s'
                        % (match.group(0), actual))
                return value
        return match.group(0)
    return re.sub(_UUID, swap, command)


def _ids(text):
    """``(shape, id)`` of each id in ``text``, in order.

    The shape is what precedes the id on its line, without the table's
    borders and spaces: its key, or its row's first cells.
    """
    for line in text.splitlines():
        for match in re.finditer(_UUID, line):
            prefix = re.sub(_UUID, '', line[:match.start()])
            yield re.sub(r'[\s|+]', '', prefix), match.group(0)


def _place(text, value):
    seen = {}
    for shape, found in _ids(text):
        if found == value:
            return shape, seen.get(shape, 0)
        seen[shape] = seen.get(shape, 0) + 1
    return None


def _nth(text, shape, rank):
    found = [value for each, value in _ids(text) if each == shape]
    return found[rank] if rank < len(found) else None


def expected_status(shown):
    """The exit status a step shows as ``[status N]``, or None."""
    match = re.search(r'^\[status (\d+)\]$', shown, re.MULTILINE)
    return None if match is None else int(match.group(1))


def expected_error(shown):
    """A regex of the first ``ERROR`` line a step shows, or None.

    Numbers and ids in it may differ in another run.
    """
    for line in shown.splitlines():
        if line.startswith('ERROR'):
            pattern = re.escape(re.sub(_UUID, 'ANID', line.strip()))
            pattern = re.sub(r'\d+', r'\\d+', pattern)
            return pattern.replace('ANID', _UUID)
    return None


class DocShell:
    """One bash that runs the docs' commands in order, as a user's shell."""

    def __init__(self, state_dir, workdir):
        for name, target in (('.sandbox', state_dir),
                             ('doc', os.path.join(CHECKOUT, 'doc'))):
            os.symlink(target, os.path.join(workdir, name))
        self.outputs = []
        self.history = []
        self.process = subprocess.Popen(
            ['bash', '--noprofile', '--norc'], cwd=workdir,
            env={'PATH': '/usr/local/bin:/usr/bin:/bin',
                 'HOME': os.environ.get('HOME', workdir),
                 'LANG': 'C.UTF-8'},
            stdin=subprocess.PIPE, stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT, text=True)
        self.lines = queue.Queue()
        threading.Thread(target=self._read, daemon=True).start()

    def _read(self):
        for line in self.process.stdout:
            self.lines.put(line)
        self.lines.put(None)

    def run(self, command, timeout=COMMAND_TIMEOUT):
        """Run ``command`` (placeholders filled); its status and output.

        The command reads nothing: its stdin is /dev/null, not the
        script.
        """
        command = filled(command, self.outputs)
        marker = uuid.uuid4().hex
        # The marker on a line of its own, whatever the output ended with.
        self.process.stdin.write(
            '{ %s\n} < /dev/null\n' % command +
            'printf "\\n%s %%d\\n" $?\n' % marker)
        self.process.stdin.flush()
        output = []
        while True:
            line = self.lines.get(timeout=timeout)
            if line is None:
                raise AssertionError('bash ended during: %s' % command)
            if line.startswith(marker + ' '):
                status = int(line.split()[1])
                break
            output.append(line)
        text = ''.join(output)
        self.outputs.append(text)
        return command, status, text

    def run_step(self, command, shown):
        """Run a page's step; check it as its shown output says.

        A step that shows ``[status N]`` must exit with N; one that shows
        an ``ERROR`` line must fail with that error; any other must
        succeed.

        :raises AssertionError: it did not.
        """
        ran, status, output = self.run(literal_ids(command, self.history))
        self.history.append((shown, output))
        error = expected_error(shown)
        wanted = expected_status(shown)
        if wanted is not None:
            if status != wanted:
                raise AssertionError('exited with %d, not %d:\n$ %s\n%s'
                                     % (status, wanted, ran, output))
            return output
        if error is None and status != 0:
            raise AssertionError('failed with status %d:\n$ %s\n%s'
                                 % (status, ran, output))
        if error is not None and (status == 0 or
                                  not re.search(error, output)):
            raise AssertionError('expected to fail with %s, got status %d:'
                                 '\n$ %s\n%s' % (error, status, ran, output))
        return output

    def close(self):
        """End the shell."""
        self.process.stdin.close()
        self.process.wait(timeout=30)
