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

"""reservation-engine: run the due lease events, as an OpenStack service.

    reservation-engine --config-file F [--config-file G ...]

The engine is a service of oslo.service's threading backend (no eventlet),
run in this process by its ``Launcher``:

- SIGTERM or SIGINT drains: the engine claims no more events, finishes
  the actions under way, records their outcomes, and the process exits 0.
- SIGHUP re-reads the config files and applies the mutable options: the
  log level (``debug``) and those marked "can be changed without
  restarting" in the sample config (``[reservation]
  event_poll_interval``).
- SIGUSR2 writes a Guru Meditation Report (oslo.reports: version,
  threads' stacks, configuration) to stderr, or to a file in
  ``[oslo_reports] log_dir``.

The engine records itself in the leases DB's ``engine_heartbeats``
(:class:`Heartbeat`): its start, each poll in which the DB answered,
and its clean stop; ``reservation-status engines`` shows them.

Any number of engines may run against the same leases DB. A DB outage
is logged at every poll and does not end the process; the engine carries
on when the DB answers again.
"""

import os
import signal
import socket
import sys
import threading

from oslo_log import log as logging
from oslo_reports import guru_meditation_report as gmr
from oslo_reports import opts as gmr_opts
from oslo_service import backend
from oslo_service.backend import base as service_base
from pbr import version as pbr_version

from db import api as db_api
from reservation_ext import clock
from reservation_ext import conf as conf_mod
from reservation_ext import context
from reservation_ext.enforcement import enforcer
from reservation_ext.engine import runner
from reservation_ext.leases import notifications
from reservation_ext import plugins
from reservation_ext.store import engines as store_engines

PROG = 'reservation-engine'
LOG = logging.getLogger(__name__)


class Version:
    """The package's version, as Guru Meditation Reports ask for it."""

    def __init__(self):
        self.info = pbr_version.VersionInfo('reservation-ext')

    def vendor_string(self):
        """Return who makes it."""
        return 'OpenStack'

    def product_string(self):
        """Return what it is."""
        return PROG

    def version_string_with_package(self):
        """Return the package's version (the heartbeat shows it too)."""
        return self.info.version_string()


class Heartbeat:
    """The engine's row of ``engine_heartbeats``: start, polls, stop.

    A failed write is logged and otherwise ignored: the engine's work
    does not depend on its heartbeat, and the next poll writes it again.

    :param clock_: the source of the times written
    :param engine_id: the engine's id (default: host name and process
        id, as the engine's own default)
    """

    def __init__(self, clock_, engine_id=None):
        self.clock = clock_
        host, pid = socket.gethostname(), os.getpid()
        # The engine's own default id: what its claims carry too.
        self.engine_id = engine_id or '%s:%d' % (host, pid)
        self.identity = {
            'engine_id': self.engine_id, 'host': host, 'pid': pid,
            'version': Version().version_string_with_package()}

    def start(self):
        """Record the engine as started now (no poll yet)."""
        self._write(store_engines.record_start, self.identity,
                    self.clock.now())

    def on_poll(self, ctx=None):
        """Record a successful poll now (the engine's ``on_poll``)."""
        self._write(store_engines.record_poll, self.identity,
                    self.clock.now())

    def stop(self):
        """Remove the engine's row: it stopped cleanly."""
        self._write(store_engines.forget, self.identity['engine_id'])

    def _write(self, function, *args):
        """Run ``function(session, *args)`` in a writer transaction."""
        try:
            with db_api.writer(context.get_admin_context(),
                               self.clock) as session:
                function(session, *args)
        except Exception:
            LOG.warning('Engine %s could not write its heartbeat (%s)',
                        self.identity['engine_id'], function.__name__,
                        exc_info=True)


class EngineService(service_base.ServiceBase):
    """The engine as an oslo.service service.

    The launcher calls ``start`` in a thread of its own, where the
    engine's loop runs; ``stop`` only asks the engine to stop; ``wait``
    returns once it has finished and recorded the actions under way (the
    drain).
    """

    def __init__(self, engine, heartbeat):
        self.engine = engine
        self.heartbeat = heartbeat
        self._stop = threading.Event()
        self._stopped = threading.Event()

    def start(self):
        """Run the engine's loop until :meth:`stop`; drop the heartbeat."""
        try:
            self.heartbeat.start()
            self.engine.run(self._stop)
            self.heartbeat.stop()
        finally:
            self._stopped.set()

    def stop(self, graceful=True):
        """Ask the engine to stop after the actions under way."""
        self._stop.set()

    def wait(self):
        """Wait for the engine to drain."""
        self._stopped.wait()

    def reset(self):
        """Note a SIGHUP: the mutable options are already applied."""
        LOG.info('Engine %s reloaded its configuration',
                 self.engine.engine_id)


def _parse_args(argv):
    """Register the options, parse ``argv``, set up logging."""
    conf = conf_mod.CONF
    logging.register_options(conf)
    gmr_opts.set_defaults(conf)
    conf(argv, project='reservation-ext', prog=PROG)
    logging.setup(conf, PROG)
    return conf


def _build_engine(conf, checkpoint, heartbeat):
    """Make the engine, with the heartbeat's engine id."""
    return runner.Engine(conf, clock.SYSTEM,
                         plugins.load_plugins(conf, clock.SYSTEM),
                         notifications.get_notifier(conf),
                         engine_id=heartbeat.engine_id,
                         enforcement=enforcer.from_conf(conf, clock.SYSTEM),
                         checkpoint=checkpoint,
                         on_poll=heartbeat.on_poll)


def _handle_signals(launcher):
    """Route the signals to the launcher: SIGTERM/SIGINT stop, SIGHUP mutate.

    The handlers run in the main thread, which only waits for the
    service; stop() sets an event and restart() re-reads the files.
    """
    def _stop(signum, frame):
        """Drain the engine and let the process exit."""
        LOG.info('Signal %d received, draining', signum)
        launcher.stop()

    def _reload(signum, frame):
        """Apply the mutable options of the re-read files."""
        LOG.info('SIGHUP received, reloading the configuration')
        launcher.restart()

    signal.signal(signal.SIGTERM, _stop)
    signal.signal(signal.SIGINT, _stop)
    signal.signal(signal.SIGHUP, _reload)


def main(argv=None, checkpoint=None):
    """Parse ``argv``, set up logging, GMR and the DB, run until signalled.

    :param checkpoint: the engine's checkpoint (see
        :class:`reservation_ext.engine.runner.Engine`); the HA tests pass
        one that kills the process
    """
    conf = _parse_args(sys.argv[1:] if argv is None else argv)
    gmr.TextGuruMeditation.setup_autorun(Version(), service_name=PROG,
                                         conf=conf)
    db_api.configure(conf)
    # The package made threading the default (see its doc); this fails
    # if something chose eventlet's backend before.
    backend.init_backend(backend.BackendType.THREADING)
    # 'mutate': SIGHUP applies the mutable options in place; the engine
    # and its claims are kept.
    launcher = backend.get_component('Launcher')(conf,
                                                 restart_method='mutate')
    heartbeat = Heartbeat(clock.SYSTEM)
    service = EngineService(_build_engine(conf, checkpoint, heartbeat),
                            heartbeat)
    launcher.launch_service(service)
    _handle_signals(launcher)
    LOG.info('Engine %s started', heartbeat.engine_id)
    launcher.wait()
    LOG.info('Engine %s stopped', heartbeat.engine_id)
    db_api.get_engine().dispose()


if __name__ == '__main__':
    main()
