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

"""A reservation-engine that kills itself (SIGKILL) at random checkpoints.

    python killing_engine.py KILL_LOG PROBABILITY SEED --config-file F ...

For the engine HA test and soak only (:mod:`harness.engine_ha`). It
runs :func:`reservation_ext.cmd.engine.main` with a checkpoint
(see :class:`reservation_ext.engine.runner.Engine`) that, with
``PROBABILITY`` at each checkpoint, appends ``<point> <event id>`` to
``KILL_LOG`` and kills the process with SIGKILL, as ``kill -9`` would:

- ``claimed``: the claim is committed, no plugin acted yet;
- ``plugin_action``: a timer kills the process a random moment (up to
  :data:`MID_ACTION_DELAY` seconds) into the plugin's action, while it
  talks to Nova or Cinder; the kill is logged as ``mid_plugin``. A timer
  that has not fired when the event's actions are over is cancelled;
- ``recording``: every action of the event is done, its outcome is not
  committed.

An event is killed at most once (the log is read first), so that every
lease's delay stays within one claim timeout of its due time.
"""

import collections
import os
import random
import signal
import sys
import threading

from reservation_ext.cmd import engine
from reservation_ext.engine import runner

# How far into a plugin action the ``plugin_action`` kill may land.
MID_ACTION_DELAY = 0.5
MID_PLUGIN = 'mid_plugin'


def _killed_events(log_path):
    try:
        with open(log_path) as log:
            return {line.split()[1] for line in log if line.strip()}
    except FileNotFoundError:
        return set()


def _kill(log_path, point, event_id):
    # O_APPEND: one short write per line, whole, among concurrent engines.
    fd = os.open(log_path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o644)
    os.write(fd, ('%s %s\n' % (point, event_id)).encode())
    os.close(fd)
    os.kill(os.getpid(), signal.SIGKILL)


def checkpoint_killing(log_path, probability, rng):
    """The checkpoint that kills this process (see the module doc)."""

    # By event: the engine runs several at once, each checkpointed in the
    # thread that runs it.
    timers = collections.defaultdict(list)
    lock = threading.Lock()

    def checkpoint(point, event):
        if point == runner.RECORDING:
            with lock:
                for timer in timers.pop(event['id'], ()):
                    timer.cancel()
        with lock:
            draw = rng.random()
        if draw >= probability or event['id'] in _killed_events(log_path):
            return
        if point == runner.PLUGIN_ACTION:
            timer = threading.Timer(rng.uniform(0, MID_ACTION_DELAY), _kill,
                                    (log_path, MID_PLUGIN, event['id']))
            with lock:
                timers[event['id']].append(timer)
            timer.start()
        else:
            _kill(log_path, point, event['id'])

    return checkpoint


def main(argv):
    log_path, probability, seed = argv[:3]
    engine.main(argv[3:], checkpoint=checkpoint_killing(
        log_path, float(probability), random.Random(int(seed))))


if __name__ == '__main__':
    main(sys.argv[1:])
