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

"""sushy-tools' Redfish emulator in this process, for the power tests.

:class:`RedfishEmulator` serves the emulator's Flask app, with its fake
systems driver, on a free port of 127.0.0.1 from a thread: one
ComputerSystem per host name given (its Redfish id a UUID derived from
the name), each On at the start unless ``power_states`` says otherwise;
with ``auth``, behind the emulator's HTTP basic authentication (a bcrypt
htpasswd file). ``requests`` records the method and path of every request
it answered, so that a test sees which resets were asked. The fake driver
applies a reset one to eleven seconds after it was asked, as a BMC would
some time later: :meth:`RedfishEmulator.wait_for_power_state` waits
(bounded) for what a test expects.

The emulator's app is one object per process (its routes are bound to
it), configured here for the fixture's life: fixtures take turns in a
process (a lock), and each one has its own state directory, so no state
leaks from one test to the next.
"""

import os
import threading
import uuid

import bcrypt
import fixtures
from sushy_tools.emulator import main as emulator
from werkzeug import serving

from reservation_ext.clients import polling

# The namespace of the systems' ids: the same name, the same id.
SYSTEM_ID_NAMESPACE = uuid.UUID('1b4b7e3e-4a5e-4a0e-9a52-3c0f6f1d6a20')
# A hang guard on the fake driver's delay (at most eleven seconds).
POWER_STATE_TIMEOUT = 30

_TURN = threading.Lock()


def system_id(name):
    """The Redfish id of the system named ``name``."""
    return str(uuid.uuid5(SYSTEM_ID_NAMESPACE, name))


class RedfishEmulator(fixtures.Fixture):
    """The Redfish emulator with one system per name, On, on a free port.

    :param names: the systems' names (the hosts' hypervisor hostnames).
    :param auth: ``(username, password)`` that the emulator requires
        (HTTP basic), or None for none.
    :param power_states: ``{name: PowerState}`` at the start, for those
        not On (``Off``, ``PoweringOn``, ``PoweringOff``).

    ``address`` is its URL (``http://127.0.0.1:PORT``); ``requests`` the
    ``(method, path)`` of each request answered, in order.
    """

    def __init__(self, names, auth=None, power_states=None):
        super().__init__()
        self.names = list(names)
        self.auth = auth
        self.power_states = dict(power_states or {})
        self.requests = []

    def _setUp(self):
        _TURN.acquire()
        self.addCleanup(_TURN.release)
        state_dir = self.useFixture(fixtures.TempDir()).path
        config = emulator.app.config
        saved = dict(config)
        self.addCleanup(_restore, config, saved)
        config.update({
            'SUSHY_EMULATOR_FAKE_DRIVER': True,
            'SUSHY_EMULATOR_STATE_DIR': state_dir,
            'SUSHY_EMULATOR_FAKE_SYSTEMS': [
                {'uuid': system_id(name), 'name': name,
                 'power_state': self.power_states.get(name, 'On'),
                 'external_notifier': False, 'nics': []}
                for name in self.names],
        })
        # The app memoizes its drivers (the systems among them): built
        # anew from this configuration.
        vars(emulator.app).pop('_cache', None)
        self.addCleanup(vars(emulator.app).pop, '_cache', None)
        app = emulator.app
        if self.auth is not None:
            app = emulator.RedfishAuthMiddleware(
                app, self._htpasswd(state_dir, *self.auth))
        server = serving.make_server('127.0.0.1', 0, self._recorded(app),
                                     threaded=True)
        # A short poll: shutdown() waits for serve_forever's next one.
        thread = threading.Thread(target=server.serve_forever,
                                  kwargs={'poll_interval': 0.05},
                                  name='redfish-emulator', daemon=True)
        thread.start()
        self.addCleanup(thread.join)
        self.addCleanup(server.server_close)
        self.addCleanup(server.shutdown)
        self.address = 'http://127.0.0.1:%d' % server.server_port

    def _recorded(self, app):
        def recorded(environ, start_response):
            self.requests.append((environ['REQUEST_METHOD'],
                                  environ['PATH_INFO']))
            return app(environ, start_response)
        return recorded

    def resets(self, name):
        """How many ComputerSystem.Reset requests ``name`` received."""
        path = '/redfish/v1/Systems/%s/Actions/ComputerSystem.Reset' % (
            system_id(name))
        return self.requests.count(('POST', path))

    @staticmethod
    def _htpasswd(state_dir, username, password):
        path = os.path.join(state_dir, 'htpasswd')
        digest = bcrypt.hashpw(password.encode(), bcrypt.gensalt(rounds=4))
        with open(path, 'w') as stream:
            stream.write('%s:%s\n' % (username, digest.decode()))
        return path

    def power_state(self, name):
        """The system's PowerState as the emulator has it (On, Off...)."""
        return emulator.app.systems.get_power_state(system_id(name))

    def wait_for_power_state(self, name, wanted):
        """Return once the system ``name`` is ``wanted`` (On or Off)."""
        wait_for_power_state(self.power_state, name, wanted,
                             POWER_STATE_TIMEOUT)


def wait_for_power_state(power_state, name, wanted, timeout):
    """Return once ``power_state(name)`` is ``wanted``.

    :raises PluginError: not so after ``timeout`` seconds.
    """
    polling.wait_for(
        lambda: power_state(name), lambda state: state == wanted, timeout,
        0.2, lambda state: '%s is %s, not %s' % (name, state, wanted))


def _restore(config, saved):
    config.clear()
    config.update(saved)
