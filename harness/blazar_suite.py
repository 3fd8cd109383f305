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

"""Blazar's own tests (blazar-tempest-plugin), unmodified, against a sandbox.

The plugin's API tests are gabbi files that reach the cloud at
``http://127.0.0.1/`` with DevStack's paths (``/compute/v2.1/...``,
``/reservation/v1/...``), and its scenarios read ``tempest.conf``. So:

- :func:`front_door` serves DevStack's paths on port 80 of 127.0.0.1 in
  front of the sandbox, as DevStack's Apache does (it needs that port:
  root, or a system that lets the user bind it);
- :func:`write_config` writes the ``tempest.conf`` of a sandbox, from its
  admin openrc and its catalog, in a workspace directory;
- :func:`run` runs ``tempest run`` on the plugin's tests there and
  returns each test's outcome with its traceback.
"""

import io
import os
import subprocess
import sys

import subunit
import testtools

from harness import fault_proxy

FRONT_PORT = 80
PLUGIN_TESTS = r'^blazar_tempest_plugin\.'
# Seconds: the scenarios poll the lease every lease_interval; a lease of
# theirs ends after 90 s at most.
LEASE_INTERVAL = 1
LEASE_END_TIMEOUT = 300

CONFIG = """[DEFAULT]
log_file = {workspace}/tempest.log

[auth]
admin_username = {OS_USERNAME}
admin_password = {OS_PASSWORD}
admin_project_name = {OS_PROJECT_NAME}
admin_domain_name = {OS_USER_DOMAIN_NAME}
use_dynamic_credentials = true
create_isolated_networks = false

[identity]
uri_v3 = {OS_AUTH_URL}
auth_version = v3
region = {OS_REGION_NAME}

[identity-feature-enabled]
api_v2 = false

[compute]
image_ref = {SANDBOX_IMAGE}
flavor_ref = 1
min_compute_nodes = 1

[service_available]
nova = true
cinder = true
glance = true
neutron = {neutron}
swift = false
blazar = true

[validation]
run_validation = false

[resource_reservation]
lease_interval = {lease_interval}
lease_end_timeout = {lease_end_timeout}
"""


def front_door(nova_url):
    """DevStack's ``/compute`` and ``/reservation`` paths on port 80.

    :param nova_url: the sandbox's nova-api root, which serves both the
        compute API and the lease API (at ``/reservation``).
    :returns: the proxy; ``stop()`` it when done.
    """
    return fault_proxy.FaultProxy(
        {'compute': nova_url, 'reservation': nova_url + '/reservation'},
        port=FRONT_PORT)


def write_config(workspace, admin_env, services):
    """Write ``workspace/tempest.conf`` for a sandbox; return its path.

    :param admin_env: the variables of the sandbox's admin openrc.
    :param services: the service types of the sandbox's catalog.
    """
    path = os.path.join(workspace, 'tempest.conf')
    with open(path, 'w') as conf:
        conf.write(CONFIG.format(
            workspace=workspace, neutron=str('network' in services).lower(),
            lease_interval=LEASE_INTERVAL,
            lease_end_timeout=LEASE_END_TIMEOUT, **admin_env))
    return path


def run(workspace, config_path, regex=PLUGIN_TESTS, exclude=None):
    """Run the plugin's tests; ``{test id: (status, traceback text)}``.

    :param regex: which tests (all of the plugin's by default).
    :param exclude: a regex of the tests not to run.

    ``status`` is subunit's: ``success``, ``fail``, ``skip``...
    """
    tempest = os.path.join(os.path.dirname(sys.executable), 'tempest')
    excluding = ['--exclude-regex', exclude] if exclude else []
    done = subprocess.run(
        [tempest, 'run', '--config-file', config_path, '--regex', regex,
         '--concurrency', '1', '--subunit'] + excluding,
        cwd=workspace, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
        stderr=subprocess.PIPE)
    outcomes = _outcomes(done.stdout)
    if not outcomes:
        raise AssertionError('tempest ran no test (exit %d):\n%s' % (
            done.returncode, done.stderr.decode(errors='replace')[-4000:]))
    return outcomes


def _outcomes(stream):
    """``{test id: (status, traceback text)}`` of a subunit v2 stream."""
    outcomes = {}

    def on_test(test):
        details = test['details'].get('traceback')
        text = details.as_text() if details is not None else ''
        # Without the attributes tempest appends (``[smoke]``).
        outcomes[test['id'].split('[')[0]] = (test['status'], text)

    result = testtools.StreamToDict(on_test)
    result.startTestRun()
    subunit.ByteStreamToStreamResult(io.BytesIO(stream)).run(result)
    result.stopTestRun()
    return outcomes
