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

"""What the sandbox's child processes share: arguments, readiness, stopping.

The supervisor (:mod:`reservation_ext.sandbox.main`) starts every child
with the state directory, the listening sockets it serves on
(``--listen NAME=FD``), the write end of a pipe on which the child says
``ready`` (``--ready-fd``) and, for a child that must wait for another,
the read end of a pipe on which the supervisor says go (``--go-fd``).
A child stops on SIGTERM or SIGINT; the kernel sends it SIGTERM when the
supervisor is gone (see ``main``), so a killed supervisor leaves no
service behind.
"""

import argparse
import os
import select
import signal
import threading

# How long a child may take to notice a stop while it waits for go.
STOP_POLL_INTERVAL = 0.5


def parse_args(argv, description):
    parser = argparse.ArgumentParser(description=description)
    parser.add_argument('--state-dir', required=True)
    parser.add_argument('--listen', action='append', default=[],
                        metavar='NAME=FD', help='inherited listening socket')
    parser.add_argument('--ready-fd', type=int, required=True)
    parser.add_argument('--go-fd', type=int)
    args = parser.parse_args(argv)
    args.listen = dict((name, int(fd)) for name, fd in
                       (item.split('=', 1) for item in args.listen))
    return args


def stop_event():
    """An event set by SIGTERM or SIGINT."""
    stop = threading.Event()
    for signum in (signal.SIGTERM, signal.SIGINT):
        signal.signal(signum, lambda signum, frame: stop.set())
    return stop


def signal_ready(fd):
    """Tell the supervisor that this child serves."""
    os.write(fd, b'ready\n')
    os.close(fd)


def wait_for_go(fd, stop):
    """Whether the supervisor said go before ``stop`` was set.

    False as well when the supervisor is gone (end of file).
    """
    while not stop.is_set():
        readable, _, _ = select.select([fd], [], [], STOP_POLL_INTERVAL)
        if readable:
            said = os.read(fd, 2)
            os.close(fd)
            return bool(said)
    return False
