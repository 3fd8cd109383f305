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

"""reservation-sandbox: an all-in-one cloud with reservation-ext enabled.

    reservation-sandbox [--state-dir DIR] [--hosts N] [--db-url URL]
                        [--notify-url URL] [--engines N] [--dashboard]
                        [--power] [--config SECTION.OPTION=VALUE ...]

Starts on 127.0.0.1, with SQLite and without a message broker, and
supervises five child processes (each logs to ``DIR/logs/<name>.log``):

- ``keystone`` (:mod:`reservation_ext.sandbox.keystone`): a real
  Keystone, with the admin and demo users and the catalog;
- ``nova`` (:mod:`reservation_ext.sandbox.nova`): nova-api with the lease
  API, Placement, the image API, conductor, scheduler with
  ReservationFilter and N fake compute hosts;
- ``cinder`` (:mod:`reservation_ext.sandbox.cinder`): cinder-api with the
  reservation extension, scheduler with ReservationFilter and a volume
  service with a fake driver for each of two backends (three pools);
- ``neutron`` (:mod:`reservation_ext.sandbox.neutron`): Neutron's API
  (ML2, routers, no agents), with the external network ``public`` and a
  network and router for the admin and demo projects, which Nova uses;
- ``engine``: ``reservation-engine`` polling every second (``--engines``
  N runs N of them, ``engine-1`` ... ``engine-N``; 0 runs none, for tests
  that run their own engines with ``DIR/nova.conf``);
- ``dashboard``, with ``--dashboard``
  (:mod:`reservation_ext.sandbox.dashboard`): Horizon with
  blazar-dashboard, logged in to through the sandbox's Keystone;
- ``redfish``, with ``--power``: sushy-tools' ``sushy-emulator`` with its
  fake driver, one Redfish system per compute host, which the engine
  switches through the ``redfish`` power driver (``[power]`` in
  nova.conf, with short times: :data:`config.POWER_OPTIONS`). The fake
  computes report up whatever the emulator says of their power.

The ports are free ones, bound here before any child starts and inherited
by the children. Once every API answers it writes ``DIR/openrc`` and
``DIR/openrc-demo`` and prints ``sandbox ready``. SIGINT (Ctrl-C) or
SIGTERM stops the engines, then the services together, and exits 0; a
child that ends on its own stops the sandbox with exit status 1.

The state directory is reset at every start (see
:mod:`reservation_ext.sandbox.config`). ``--db-url`` puts the leases DB
elsewhere (e.g. PostgreSQL); that database is migrated, not reset.
``--notify-url`` (an oslo.messaging transport URL, e.g. a RabbitMQ's)
sends the lease notifications there, on the ``notifications`` topic.
``--config SECTION.OPTION=VALUE`` (repeatable) sets any option an
operator would, in the config file of every process that reads its
section (:mod:`reservation_ext.sandbox.overrides`).
"""

import argparse
import ctypes
import importlib.util
import os
import secrets
import select
import shutil
import signal
import socket
import subprocess
import sys
import time

import requests

from db import migration
from reservation_ext.clients import polling
from reservation_ext import exceptions
from reservation_ext.sandbox import config
from reservation_ext.sandbox.dashboard import settings as dashboard_settings
from reservation_ext.sandbox import overrides

START_TIMEOUT = 300
STOP_TIMEOUT = 30
LOG_TAIL_LINES = 30
PR_SET_PDEATHSIG = 1


class Stopped(Exception):
    """SIGINT or SIGTERM."""


class SandboxFailed(Exception):
    """A child process ended or did not get ready, or an API failed."""


def parse_args(argv):
    parser = argparse.ArgumentParser(
        prog='reservation-sandbox',
        description='An all-in-one OpenStack cloud (Keystone, Nova, '
                    'Placement, Cinder) with reservation-ext enabled, on '
                    '127.0.0.1.')
    parser.add_argument('--state-dir', default='.sandbox',
                        help='where the state and logs live; reset at '
                             'start (default: %(default)s)')
    parser.add_argument('--hosts', type=int, default=4,
                        help='number of fake compute hosts '
                             '(default: %(default)s)')
    parser.add_argument('--db-url',
                        help='the leases DB (default: SQLite in DIR)')
    parser.add_argument('--proposal-ttl', type=int,
                        default=config.PROPOSAL_TTL,
                        help='seconds a schedule proposal holds its '
                             'capacity ([reservation] proposal_ttl; '
                             'default: %(default)s)')
    parser.add_argument('--notify-url',
                        help='send the lease notifications to this '
                             'oslo.messaging transport URL (e.g. '
                             'rabbit://guest:guest@localhost:5672/); '
                             'default: none are sent')
    parser.add_argument('--enforcement-url',
                        help="check lease changes with the enforcement "
                             "service at this URL, which speaks Blazar's "
                             "protocol (ExternalServiceFilter; "
                             "[enforcement] external_service_base_endpoint)")
    parser.add_argument('--dashboard', action='store_true',
                        help='also serve Horizon with blazar-dashboard '
                             '(needs reservation-ext[dashboard])')
    parser.add_argument('--power', action='store_true',
                        help='switch idle reservable hosts off and on '
                             'through a Redfish emulator (sushy-tools\' '
                             'sushy-emulator, one system per host), with '
                             'short [power] times')
    parser.add_argument('--engines', type=int, default=1,
                        help='number of reservation-engine processes; 0 '
                             'for none (default: %(default)s)')
    parser.add_argument('--config', action='append', default=[],
                        metavar='SECTION.OPTION=VALUE',
                        help='set an option in the configuration of every '
                             'process that reads its section, e.g. '
                             'reservation.host_on_end=delete_instances; '
                             'repeatable')
    args = parser.parse_args(argv)
    try:
        args.overrides = overrides.parse(args.config)
    except overrides.BadOverride as exc:
        parser.error(str(exc))
    if args.engines < 0:
        parser.error('--engines must be at least 0')
    if args.hosts < 1:
        parser.error('--hosts must be at least 1')
    if args.proposal_ttl < 1:
        parser.error('--proposal-ttl must be at least 1')
    return args


def reset_state_dir(path):
    """Empty ``path`` for a new sandbox, refusing foreign directories."""
    if os.path.isdir(path) and os.listdir(path) and not os.path.exists(
            os.path.join(path, 'sandbox.json')):
        raise SystemExit('%s is not empty and holds no sandbox; not '
                         'resetting it' % path)
    shutil.rmtree(path, ignore_errors=True)
    os.makedirs(os.path.join(path, 'logs'))


def listen():
    """A listening socket on a free port, to be inherited by a child."""
    sock = socket.socket()
    sock.bind((config.HOST, 0))
    sock.listen(128)
    sock.set_inheritable(True)
    return sock


def _die_with_parent():
    # Runs in the child before exec: the kernel sends SIGTERM to the child
    # when the supervisor ends, however it ends.
    libc = ctypes.CDLL(None, use_errno=True)
    libc.prctl(PR_SET_PDEATHSIG, signal.SIGTERM)


def child_environment():
    """This process's environment, with Python's safe path on.

    ``python -m`` would put the working directory first on sys.path; a
    new one for every sandbox changes the key of stevedore's entry-point
    cache, which every service then rebuilds and writes anew (0.5 s of CPU
    and 300 KB each). ``PYTHONSAFEPATH`` leaves it out.
    """
    return dict(os.environ, PYTHONSAFEPATH='1')


class Child:
    """A child process with its output in ``DIR/logs/<name>.log``."""

    def __init__(self, layout, name, argv, pass_fds=()):
        self.name = name
        self.log_path = layout.log_path(name)
        with open(self.log_path, 'ab') as log:
            self.popen = subprocess.Popen(
                argv, stdin=subprocess.DEVNULL, stdout=log,
                stderr=subprocess.STDOUT, pass_fds=pass_fds,
                start_new_session=True, preexec_fn=_die_with_parent,
                # Not the caller's directory: a source tree there could
                # shadow the installed packages.
                cwd=layout.state_dir, env=child_environment())

    def check(self):
        """Raise SandboxFailed if the process has ended."""
        if self.popen.poll() is not None:
            raise SandboxFailed('%s ended with status %s\n%s' % (
                self.name, self.popen.returncode, self.log_tail()))

    def log_tail(self):
        with open(self.log_path, errors='replace') as log:
            lines = log.readlines()[-LOG_TAIL_LINES:]
        return ''.join('  %s: %s' % (self.name, line) for line in lines)

    def terminate(self):
        """SIGTERM, unless the process has ended."""
        if self.popen.poll() is None:
            self.popen.terminate()

    def stop(self):
        """SIGTERM, then SIGKILL after STOP_TIMEOUT; the exit status."""
        self.terminate()
        try:
            return self.popen.wait(STOP_TIMEOUT)
        except subprocess.TimeoutExpired:
            print('%s did not stop in %d s; killed' % (
                self.name, STOP_TIMEOUT), file=sys.stderr)
            self.popen.kill()
            return self.popen.wait()


class ServiceChild(Child):
    """A child of this package: ``python -m <module>`` with pipes.

    The child serves on ``sockets`` and says ``ready`` on a pipe; with
    ``go``, it also waits for a go on another pipe (see
    :mod:`reservation_ext.sandbox.process`).
    """

    def __init__(self, layout, name, module, sockets, go=False):
        self._ready, ready_w = os.pipe()
        argv = [sys.executable, '-m', module, '--state-dir', layout.state_dir,
                '--ready-fd', str(ready_w)]
        pipe_ends = [ready_w]
        if go:
            go_r, self._go = os.pipe()
            argv += ['--go-fd', str(go_r)]
            pipe_ends.append(go_r)
        for service, sock in sockets.items():
            argv += ['--listen', '%s=%d' % (service, sock.fileno())]
        super().__init__(layout, name, argv, pipe_ends + [
            sock.fileno() for sock in sockets.values()])
        # The child's ends of the pipes are the child's alone.
        for fd in pipe_ends:
            os.close(fd)

    def go(self):
        try:
            os.write(self._go, b'go')
        except BrokenPipeError:
            # The child has ended; wait_ready says so.
            pass
        os.close(self._go)

    def wait_ready(self, deadline, others=()):
        """Wait for ``ready``; fail if this or another child ends."""
        while True:
            for child in (self,) + tuple(others):
                child.check()
            remaining = deadline - time.monotonic()
            if remaining <= 0:
                raise SandboxFailed('%s not ready in %d s\n%s' % (
                    self.name, START_TIMEOUT, self.log_tail()))
            readable, _, _ = select.select([self._ready], [], [],
                                           min(remaining, 1.0))
            if readable:
                said = os.read(self._ready, 16)
                if said.startswith(b'ready'):
                    os.close(self._ready)
                    return
                # End of file: the child is ending without being ready.
                self.popen.wait()


class Sandbox:
    """The child processes of one sandbox, started and stopped in order."""

    def __init__(self, layout, sockets, engines=1):
        self.layout = layout
        self.sockets = sockets
        self.engines = engines
        self.children = []

    def start(self):
        """Start every child; return once every API answers."""
        deadline = time.monotonic() + START_TIMEOUT
        keystone = self._start(ServiceChild(
            self.layout, 'keystone', 'reservation_ext.sandbox.keystone',
            {'keystone': self.sockets['keystone']}))
        if config.REDFISH in self.sockets:
            # sushy-emulator binds its port itself: freed just before.
            self.sockets.pop(config.REDFISH).close()
            self._start(Child(
                self.layout, config.REDFISH,
                [sys.executable, '-m', 'sushy_tools.emulator.main',
                 '--config', self.layout.path('redfish.conf')]))
        nova = self._start(ServiceChild(
            self.layout, 'nova', 'reservation_ext.sandbox.nova',
            {name: self.sockets[name] for name in
             ('nova', 'placement', 'image')}, go=True))
        cinder = self._start(ServiceChild(
            self.layout, 'cinder', 'reservation_ext.sandbox.cinder',
            {'cinder': self.sockets['cinder']}))
        # Makes its database beside the others; its networks after go.
        neutron = self._start(ServiceChild(
            self.layout, 'neutron', 'reservation_ext.sandbox.neutron',
            {'neutron': self.sockets['neutron']}, go=True))
        # Makes its database; its Keystone domain and engine after go.
        heat = self._start(ServiceChild(
            self.layout, 'heat', 'reservation_ext.sandbox.heat',
            {name: self.sockets[name] for name in ('heat', 'heat-cfn')},
            go=True))
        if config.DASHBOARD in self.sockets:
            self._start(ServiceChild(
                self.layout, config.DASHBOARD,
                'reservation_ext.sandbox.dashboard',
                {config.DASHBOARD: self.sockets[config.DASHBOARD]}))
        for sock in self.sockets.values():
            sock.close()
        keystone.wait_ready(deadline, others=[nova, cinder, neutron, heat])
        nova.go()
        neutron.go()
        heat.go()
        for number in range(1, self.engines + 1):
            self._start(Child(
                self.layout, 'engine' if self.engines == 1 else
                'engine-%d' % number,
                [sys.executable, '-m', 'reservation_ext.cmd.engine',
                 '--config-file', self.layout.path('nova.conf')]))
        for child in (nova, cinder, neutron, heat) + tuple(
                child for child in self.children
                if child.name == config.DASHBOARD):
            child.wait_ready(deadline, others=self.children)
        if self.layout.power:
            wait_for_redfish(self.layout, deadline, self.children)
        check_apis(self.layout)

    def _start(self, child):
        self.children.append(child)
        return child

    def watch(self):
        """Block until a child ends on its own (SandboxFailed)."""
        while True:
            for child in self.children:
                child.check()
            time.sleep(1)

    def stop(self):
        """Stop the engines, then every service at once.

        The engines go first, since they act on the services. The
        services drain in parallel: none needs another to stop.
        """
        engines = [child for child in self.children
                   if child.name.startswith('engine')]
        services = [child for child in self.children if child not in engines]
        for child in engines:
            self._report(child, child.stop())
        for child in services:
            child.terminate()
        for child in services:
            self._report(child, child.stop())

    @staticmethod
    def _report(child, status):
        # sushy-emulator keeps SIGTERM's default action: ended by it.
        if status and status != -signal.SIGTERM:
            print('%s exited with status %d' % (child.name, status),
                  file=sys.stderr)


def wait_for_redfish(layout, deadline, children):
    """Wait until the Redfish emulator answers; fail if a child ends."""
    def answers():
        for child in children:
            child.check()
        try:
            return requests.get(layout.redfish_url + '/redfish/v1/',
                                timeout=5).ok
        except requests.ConnectionError:
            return False

    try:
        polling.wait_for(answers, bool, deadline - time.monotonic(), 0.5,
                         lambda _answered: 'the Redfish emulator did not '
                         'answer in %d s' % START_TIMEOUT)
    except exceptions.PluginError as exc:
        raise SandboxFailed(exc.message) from exc


def check_redfish(layout):
    """The emulator lists one system per compute host, as configured.

    :raises SandboxFailed: it does not.
    """
    response = requests.get(
        layout.redfish_url + '/redfish/v1/Systems', timeout=30,
        auth=(config.REDFISH_USER, layout.password))
    listed = {member['@odata.id'].rsplit('/', 1)[1] for member in
              response.json().get('Members', [])} if response.ok else set()
    expected = {config.redfish_system_id(host)
                for host in config.host_names(layout)}
    if listed != expected:
        raise SandboxFailed('the Redfish emulator answered %d listing %s, '
                            'not one system per host: %s' % (
                                response.status_code, sorted(listed),
                                response.text[-2000:]))


def check_apis(layout):
    """Call every API through the catalog, as the admin user.

    :raises SandboxFailed: an API answers with an error.
    """
    session = config.session(layout)
    session.get_token()
    calls = (('compute', '/os-hypervisors'), ('reservation', '/leases'),
             ('placement', '/'), ('image', '/v2/images'),
             ('volumev3', '/volumes'), ('network', '/v2.0/networks'),
             ('orchestration', '/stacks'))
    for service_type, path in calls:
        response = session.get(path, raise_exc=False, endpoint_filter={
            'service_type': service_type, 'interface': 'public'})
        if response.status_code != 200:
            raise SandboxFailed('%s %s answered %d: %s' % (
                service_type, path, response.status_code, response.text))
    if layout.dashboard_url:
        login = layout.dashboard_url + 'auth/login/'
        response = session.get(login, authenticated=False, raise_exc=False)
        if response.status_code != 200:
            raise SandboxFailed('the dashboard\'s %s answered %d: %s' % (
                login, response.status_code, response.text[-2000:]))
    if layout.power:
        check_redfish(layout)


def prepare(args):
    """Reset DIR, bind the ports, write the configuration, migrate."""
    if args.dashboard:
        dashboard_settings.check_installed()
    if args.power and importlib.util.find_spec('sushy_tools') is None:
        raise SystemExit('--power needs sushy-tools: pip install '
                         '\'reservation-ext[sandbox]\'')
    reset_state_dir(args.state_dir)
    services = config.SERVICES + ((config.DASHBOARD,) if args.dashboard
                                  else ()) + ((config.REDFISH,) if args.power
                                              else ())
    sockets = {service: listen() for service in services}
    layout = config.Layout(
        state_dir=args.state_dir, hosts=args.hosts,
        ports={name: sock.getsockname()[1]
               for name, sock in sockets.items()},
        password=secrets.token_urlsafe(12), leases_db_url=args.db_url,
        proposal_ttl=args.proposal_ttl, notify_url=args.notify_url,
        enforcement_url=args.enforcement_url, power=args.power,
        overrides=args.overrides)
    layout.save()
    config.write_keystone_conf(layout)
    config.write_nova_conf(layout)
    config.write_placement_conf(layout)
    config.write_cinder_conf(layout)
    config.write_neutron_conf(layout)
    config.write_heat_conf(layout)
    if args.dashboard:
        dashboard_settings.write(layout)
    if args.power:
        config.write_redfish_conf(layout)
    migration.upgrade(layout.leases_db_url)
    return layout, sockets


def _summary_line(label, text):
    # As wide as the longest label, the catalog's cloudformation.
    return '%-14s %s' % (label, text)


def print_summary(layout):
    lines = [_summary_line('identity', layout.auth_url)]
    lines += [_summary_line(service_type, url) for service_type, (_, url)
              in layout.endpoints.items()]
    lines += [_summary_line(host, '%d vCPUs, %d MB RAM, %d GB disk' %
                            config.host_size(host))
              for host in config.host_names(layout)]
    if layout.dashboard_url:
        lines.append(_summary_line('dashboard', '%s (log in as admin or '
                                   'demo)' % layout.dashboard_url))
    if layout.power:
        lines += [_summary_line('redfish', '%s (sushy-emulator: a fake '
                                'system per host; user %s, credentials in '
                                '%s)' % (layout.redfish_url,
                                         config.REDFISH_USER,
                                         layout.path(
                                             'power-credentials.yaml'))),
                  _summary_line('power', 'redfish driver, shortened: %s '
                                '(the fake computes report up whatever '
                                'their power)' % ', '.join(
                                    '%s %s' % item
                                    for item in config.POWER_OPTIONS))]
    image = '%s (%s)' % (config.IMAGE_ID, config.IMAGE_NAME)
    lines += [_summary_line('image', image),
              _summary_line('credentials', '. %s (admin), . %s (demo)' % (
                  layout.path('openrc'), layout.path('openrc-demo'))),
              _summary_line('logs', layout.path('logs')),
              'sandbox ready']
    print('\n'.join(lines), flush=True)


def _raise_stopped(signum, frame):
    raise Stopped(signum)


def main(argv=None):
    args = parse_args(sys.argv[1:] if argv is None else argv)
    for signum in (signal.SIGINT, signal.SIGTERM):
        signal.signal(signum, _raise_stopped)
    sandbox = None
    try:
        layout, sockets = prepare(args)
        print('starting the sandbox in %s (logs in %s)' % (
            layout.state_dir, layout.path('logs')), flush=True)
        sandbox = Sandbox(layout, sockets, args.engines)
        sandbox.start()
        config.write_openrc(layout)
        print_summary(layout)
        sandbox.watch()
    except Stopped:
        return 0
    except SandboxFailed as exc:
        print('sandbox failed: %s' % exc, file=sys.stderr)
        return 1
    finally:
        for signum in (signal.SIGINT, signal.SIGTERM):
            signal.signal(signum, signal.SIG_IGN)
        if sandbox is not None:
            sandbox.stop()


if __name__ == '__main__':
    sys.exit(main())
