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

"""A real Ironic (Bare Metal API) in a child process, for the power tests.

:class:`IronicServer` runs the ``ironic`` command (API and conductor in
one process, ``rpc_transport = none``) without authentication, on SQLite
in a directory of its own, with the ``fake-hardware`` hardware type and
its ``fake`` power interface, on a free port of 127.0.0.1; it enrolls one
node per name given, powered on. ``url`` is its endpoint.

Ironic is a test requirement; without it the test is skipped, unless
``RESERVATION_REQUIRE_IRONIC=1`` (as ``.ci/run`` sets it) makes that a
failure.
"""

import importlib.util
import os
import socket
import subprocess
import sys
import time
import unittest

import fixtures
import requests
from testtools import content

from tests import power_emulator

START_TIMEOUT = 120
STOP_TIMEOUT = 30
# A transition of the fake power interface is done in moments; a hang
# guard only.
POWER_TIMEOUT = 60
MICROVERSION = '1.5'

CONFIG = """\
[DEFAULT]
rpc_transport = none
auth_strategy = noauth
host = reservation-test
enabled_hardware_types = fake-hardware
enabled_power_interfaces = fake
enabled_management_interfaces = fake
enabled_boot_interfaces = fake
enabled_deploy_interfaces = fake
enabled_inspect_interfaces = no-inspect
enabled_console_interfaces = no-console
enabled_bios_interfaces = no-bios
enabled_raid_interfaces = no-raid
enabled_vendor_interfaces = no-vendor
enabled_network_interfaces = noop
enabled_rescue_interfaces = no-rescue
enabled_storage_interfaces = noop
enabled_firmware_interfaces = no-firmware
[api]
host_ip = 127.0.0.1
port = {port}
[database]
connection = sqlite:///{state_dir}/ironic.sqlite
[dhcp]
dhcp_provider = none
[conductor]
# Nothing but the API changes a node's power state.
sync_power_state_interval = -1
[oslo_concurrency]
lock_path = {state_dir}/locks
"""


def _bin(name):
    return os.path.join(os.path.dirname(sys.executable), name)


def _free_port():
    with socket.socket() as sock:
        sock.bind(('127.0.0.1', 0))
        return sock.getsockname()[1]


class IronicServer(fixtures.Fixture):
    """A real Ironic with one fake-hardware node per name, powered on.

    ``nodes`` maps each name to its node's UUID.
    """

    def __init__(self, names):
        super().__init__()
        self.names = list(names)

    def setUp(self):
        # Checked before the fixture's own setUp, which would turn the
        # skip into a SetupError.
        if importlib.util.find_spec('ironic') is None:
            reason = 'Ironic is not installed'
            if os.environ.get('RESERVATION_REQUIRE_IRONIC') == '1':
                raise AssertionError(
                    reason + ' (RESERVATION_REQUIRE_IRONIC=1)')
            raise unittest.SkipTest(reason)
        super().setUp()

    def _setUp(self):
        state_dir = self.useFixture(fixtures.TempDir()).path
        config = os.path.join(state_dir, 'ironic.conf')
        port = _free_port()
        with open(config, 'w') as stream:
            stream.write(CONFIG.format(port=port, state_dir=state_dir))
        log_path = os.path.join(state_dir, 'ironic.log')
        with open(log_path, 'ab') as log:
            subprocess.run(
                [_bin('ironic-dbsync'), '--config-file', config,
                 'create_schema'], stdout=log, stderr=subprocess.STDOUT,
                check=True, timeout=START_TIMEOUT)
            process = subprocess.Popen(
                [_bin('ironic'), '--config-file', config],
                stdin=subprocess.DEVNULL, stdout=log,
                stderr=subprocess.STDOUT)
        self.addCleanup(self._stop, process)
        self.addDetail('ironic-log', content.content_from_file(
            log_path, buffer_now=False))
        self.url = 'http://127.0.0.1:%d' % port
        self._wait_until_up(process)
        self.nodes = {name: self._enroll(name) for name in self.names}

    @staticmethod
    def _stop(process):
        process.terminate()
        try:
            process.wait(STOP_TIMEOUT)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()

    def _wait_until_up(self, process):
        deadline = time.monotonic() + START_TIMEOUT
        while True:
            if process.poll() is not None:
                raise AssertionError('ironic ended with status %s' %
                                     process.returncode)
            try:
                if requests.get(self.url + '/v1', timeout=5).ok:
                    return
            except requests.ConnectionError:
                pass
            if time.monotonic() > deadline:
                raise AssertionError('ironic not up in %d s' % START_TIMEOUT)
            time.sleep(0.5)

    def request(self, method, path, **kwargs):
        """The JSON answer of Ironic to a request (no body: None)."""
        response = requests.request(
            method, self.url + '/v1' + path, timeout=30, headers={
                'X-OpenStack-Ironic-API-Version': MICROVERSION}, **kwargs)
        response.raise_for_status()
        return response.json() if response.content else None

    def _enroll(self, name):
        node = self.request('POST', '/nodes', json={
            'driver': 'fake-hardware', 'name': name})
        self.request('PUT', '/nodes/%s/states/power' % node['uuid'],
                     json={'target': 'power on'})
        self.wait_for_power_state(name, 'power on')
        return node['uuid']

    def power_state(self, node):
        """The node's ``power_state`` as Ironic has it."""
        return self.request('GET', '/nodes/%s' % node)['power_state']

    def wait_for_power_state(self, node, wanted):
        """Return once Ironic says ``node`` is ``wanted``."""
        power_emulator.wait_for_power_state(self.power_state, node, wanted,
                                            POWER_TIMEOUT)
