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

A page whose comment says ``.. doc-runner: starts-sandboxes`` starts its
sandboxes itself: a ``./run-sandbox`` or ``reservation-sandbox`` command
runs in the background, as in another shell (:class:`BackgroundSandbox`),
and the next command waits for its ``sandbox ready`` line; the sandbox
runs until the page's next sandbox command, or the shell's end. Its
``/tmp/NAME`` paths are ``TMP/NAME`` of a directory of the test's.
"""

import os
import queue
import re
import shlex
import signal
import subprocess
import threading
import time
import uuid

from harness import sandbox as sandbox_mod

CHECKOUT = os.path.dirname(os.path.dirname(os.path.dirname(
    os.path.abspath(__file__))))
COMMAND_TIMEOUT = 300
_PLACEHOLDER = re.compile(r'<([a-z][a-z_ ]*)>')
_UUID = '[0-9a-f]{8}-(?:[0-9a-f]{4}-){3}[0-9a-f]{12}'
# What a page's commands copy from earlier output: ids, a sandbox's URLs
# (their ports are chosen at each start) and IPv4 addresses (Neutron
# picks them); a URL first, so that its address is not taken alone.
_LITERAL = '|'.join((r'https?://(?:127\.0\.0\.1|localhost):\d+', _UUID,
                     r'(?<![\d.])(?:\d{1,3}\.){3}\d{1,3}(?!\d|\.\d)'))
# The marker of a page that starts its sandboxes with its own commands.
STARTS_SANDBOXES = 'starts-sandboxes'
# The commands that start a sandbox, as the docs write them.
SANDBOX_COMMANDS = ('./run-sandbox', 'reservation-sandbox')
# argparse's last line when a command's arguments are refused.
_ARGUMENT_ERROR = re.compile(r'^[\w.-]+: error: ')
_TMP_PATH = re.compile(r'(?<![\w/.~-])/tmp/(?=[\w.-])')


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

    The same holds for a sandbox's URL (``http://127.0.0.1:PORT``) and
    an IPv4 address.

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
    return re.sub(_LITERAL, swap, command)


def _ids(text):
    """``(shape, id)`` of each id (URL, address) in ``text``, in order.

    The shape is its kind and what precedes it on its line, without the
    table's borders and spaces: its key, or its row's first cells.
    """
    for line in text.splitlines():
        for match in re.finditer(_LITERAL, line):
            prefix = re.sub(_LITERAL, '', line[:match.start()])
            yield ((_kind(match.group(0)), re.sub(r'[\s|+]', '', prefix)),
                   match.group(0))


def _kind(value):
    """An id, a URL or an address: each counted among its own kind."""
    if re.fullmatch(_UUID, value):
        return 'id'
    return 'url' if value.startswith('http') else 'address'


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


def starts_sandbox(command):
    """Whether ``command`` is a sandbox's, run as in another shell."""
    words = command.split(None, 1)
    return bool(words) and words[0] in SANDBOX_COMMANDS


def sandbox_error(shown):
    """A regex of the error a sandbox command's shown output ends in.

    None when it ends otherwise (e.g. in ``sandbox ready``): the command
    must then start a sandbox. Numbers may differ, as in
    :func:`expected_error`; a ``[status N]`` line after it is not part
    of it.
    """
    lines = [line for line in shown.splitlines()
             if line.strip() and expected_status(line) is None]
    if not lines or not _ARGUMENT_ERROR.match(lines[-1]):
        return None
    return re.sub(r'\d+', r'\\d+', re.escape(lines[-1].strip()))


def tmp_mapped(command, tmp_dir):
    """``command`` with each ``/tmp/NAME`` path as ``tmp_dir/NAME``.

    So that a page's ``/tmp/sb`` is the test's own, never a reader's.
    """
    return _TMP_PATH.sub(lambda match: tmp_dir.rstrip('/') + '/', command)


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


def _interruptible():
    """Let SIGINT stop the child, as it stops a shell's foreground job.

    A test run started in the background (``cmd &``) ignores SIGINT, and
    a shell started with it ignored cannot trap it.
    """
    signal.signal(signal.SIGINT, signal.SIG_DFL)


class BackgroundSandbox:
    """A sandbox command run as in another shell, until it is stopped.

    It has a session of its own, as a shell's foreground job has a
    process group: :meth:`stop` sends that group SIGINT, as Ctrl-C in
    that shell would. The sandbox's own children have sessions of their
    own and stop with it.
    """

    def __init__(self, command, workdir, env):
        self.command = command
        self.output = []
        self._ready = threading.Event()
        self.process = subprocess.Popen(
            ['bash', '--noprofile', '--norc', '-c', command], cwd=workdir,
            env=env, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT, text=True, start_new_session=True,
            preexec_fn=_interruptible)
        self._reader = threading.Thread(target=self._read, daemon=True)
        self._reader.start()

    def _read(self):
        # Also drains the pipe after ``sandbox ready``, so that the
        # sandbox never blocks on a full pipe.
        for line in self.process.stdout:
            self.output.append(line)
            if line.strip() == sandbox_mod.READY_LINE:
                self._ready.set()

    def text(self):
        """What it printed so far."""
        return ''.join(self.output)

    def wait_ready(self, timeout=sandbox_mod.START_TIMEOUT):
        """None once it printed ``sandbox ready``; its status if it ended.

        :raises AssertionError: neither within ``timeout`` seconds.
        """
        deadline = time.monotonic() + timeout
        while not self._ready.wait(0.2):
            if self.process.poll() is not None:
                # The rest of its output, unless a child keeps the pipe.
                self._reader.join(10)
                return self.process.returncode
            if time.monotonic() > deadline:
                raise AssertionError('not ready in %d s:\n$ %s\n%s' % (
                    timeout, self.command, self.text()))
        return None

    def stop(self):
        """Stop it as Ctrl-C would, if it runs; it must exit 0.

        :raises AssertionError: it did not, or not within the sandbox
            harness's stop timeout (it is then killed).
        """
        if self.process.poll() is not None:
            return
        os.killpg(self.process.pid, signal.SIGINT)
        try:
            status = self.process.wait(sandbox_mod.STOP_TIMEOUT)
        except subprocess.TimeoutExpired:
            os.killpg(self.process.pid, signal.SIGKILL)
            self.process.wait()
            raise AssertionError('did not stop in %d s after SIGINT:\n$ %s'
                                 '\n%s' % (sandbox_mod.STOP_TIMEOUT,
                                           self.command, self.text()))
        if status != 0:
            raise AssertionError('exited with status %d after SIGINT:\n$ %s'
                                 '\n%s' % (status, self.command, self.text()))


class DocShell:
    """One bash that runs the docs' commands in order, as a user's shell.

    :param state_dir: the running sandbox's, linked as ``.sandbox``; None
        for a page that starts its sandboxes (:func:`starts_sandbox`).
    :param tmp_dir: where the commands' ``/tmp/NAME`` paths go
        (:func:`tmp_mapped`); None leaves them as written.
    """

    def __init__(self, state_dir, workdir, tmp_dir=None):
        links = [('doc', os.path.join(CHECKOUT, 'doc'))]
        if state_dir is not None:
            links.append(('.sandbox', state_dir))
        for name, target in links:
            os.symlink(target, os.path.join(workdir, name))
        self.workdir, self.tmp_dir = workdir, tmp_dir
        self.outputs = []
        self.history = []
        self.sandbox = None
        self.env = {'PATH': '/usr/local/bin:/usr/bin:/bin',
                    'HOME': os.environ.get('HOME', workdir),
                    'LANG': 'C.UTF-8'}
        self.process = subprocess.Popen(
            ['bash', '--noprofile', '--norc'], cwd=workdir, env=self.env,
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
        script. A sandbox's command (:func:`starts_sandbox`) runs in the
        background instead (:meth:`start_sandbox`).
        """
        command = filled(command, self.outputs)
        local = command if self.tmp_dir is None else tmp_mapped(
            command, self.tmp_dir)
        if starts_sandbox(command):
            status, text = self.start_sandbox(local)
        else:
            status, text = self._run_here(local, timeout)
        self.outputs.append(text)
        return command, status, text

    def _run_here(self, command, timeout):
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
                return int(line.split()[1]), ''.join(output)
            output.append(line)

    def start_sandbox(self, command):
        """Start a sandbox's command as in another shell; wait till ready.

        The sandbox started before is stopped first: one runs at a time.
        That shell's PATH starts with this Python's environment, where
        ``reservation-sandbox`` is installed: ``./run-sandbox`` (the
        checkout's) then finds its ``.venv`` current and never rebuilds
        the one the tests run from.

        :returns: ``(status, output)``: 0 and the output up to ``sandbox
            ready``, or the status and output of a command that ended.
        """
        self.stop_sandbox()
        if command.startswith('./run-sandbox'):
            command = os.path.join(CHECKOUT, command[2:])
        env = dict(self.env, PATH=sandbox_mod.BIN_DIR + ':' +
                   self.env['PATH'])
        self.sandbox = BackgroundSandbox(command, self.workdir, env)
        status = self.sandbox.wait_ready()
        return 0 if status is None else status, self.sandbox.text()

    def stop_sandbox(self):
        """Stop the sandbox a command started, if one runs."""
        sandbox, self.sandbox = self.sandbox, None
        if sandbox is not None:
            sandbox.stop()

    def run_step(self, command, shown):
        """Run a page's step; check it as its shown output says.

        A step that shows ``[status N]`` must exit with N; one that shows
        an ``ERROR`` line must fail with that error; any other must
        succeed. A sandbox's command whose shown output ends in an error
        (:func:`sandbox_error`) must fail with it (and the status shown,
        if any); any other must start a sandbox.

        :raises AssertionError: it did not.
        """
        ran, status, output = self.run(literal_ids(command, self.history))
        self.history.append((shown, output))
        wanted = expected_status(shown)
        if starts_sandbox(ran):
            error = sandbox_error(shown)
        else:
            error = expected_error(shown) if wanted is None else None
        if wanted is not None and status != wanted:
            raise AssertionError('exited with %d, not %d:\n$ %s\n%s'
                                 % (status, wanted, ran, output))
        if wanted is None and error is None and status != 0:
            raise AssertionError('failed with status %d:\n$ %s\n%s'
                                 % (status, ran, output))
        if error is not None and (status == 0 or
                                  not re.search(error, output)):
            raise AssertionError('expected to fail with %s, got status %d:'
                                 '\n$ %s\n%s' % (error, status, ran, output))
        return output

    def close(self):
        """Stop the sandbox a command started, if any; end the shell."""
        try:
            self.stop_sandbox()
        finally:
            self.process.stdin.close()
            self.process.wait(timeout=30)
