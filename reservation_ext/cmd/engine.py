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

"""reservation-engine: run the due lease events.

    reservation-engine --config-file F [--config-file G ...]

Runs until SIGTERM or SIGINT, then finishes the current batch and exits.
Any number of engines may run against the same leases DB. A DB outage
is logged at every poll and does not end the process; the engine carries
on when the DB answers again.
"""

import signal
import sys
import threading

from oslo_log import log as logging

from db import api as db_api
from reservation_ext import clock
from reservation_ext import conf as conf_mod
from reservation_ext.enforcement import enforcer
from reservation_ext.engine import runner
from reservation_ext.leases import notifications
from reservation_ext import plugins

PROG = 'reservation-engine'
LOG = logging.getLogger(__name__)


def main(argv=None, checkpoint=None):
    """Parse ``argv``, set up logging and the DB, run until signalled.

    :param checkpoint: the engine's checkpoint (see
        :class:`reservation_ext.engine.runner.Engine`); the HA tests pass
        one that kills the process
    """
    conf = conf_mod.CONF
    logging.register_options(conf)
    conf(sys.argv[1:] if argv is None else argv, project='reservation-ext',
         prog=PROG)
    logging.setup(conf, PROG)
    db_api.configure(conf)

    stop = threading.Event()

    def _stop(signum, frame):
        LOG.info('Signal %d received, stopping', signum)
        stop.set()

    signal.signal(signal.SIGTERM, _stop)
    signal.signal(signal.SIGINT, _stop)

    engine = runner.Engine(conf, clock.SYSTEM,
                           plugins.load_plugins(conf, clock.SYSTEM),
                           notifications.get_notifier(conf),
                           enforcement=enforcer.from_conf(conf, clock.SYSTEM),
                           checkpoint=checkpoint)
    LOG.info('Engine %s started', engine.engine_id)
    engine.run(stop)
    LOG.info('Engine %s stopped', engine.engine_id)
    db_api.get_engine().dispose()


if __name__ == '__main__':
    main()
