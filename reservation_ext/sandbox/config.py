"""The sandbox's layout: state directory, ports, and configuration files.

Everything lives in the state directory (default ``./.sandbox``)::

    sandbox.json         this layout, read by the child processes
    keystone.conf        Keystone: SQLite, fernet tokens
    nova.conf            Nova, the lease API and the engine (one file, as
                         in a deployment where nova.conf carries the
                         [reservation] options)
    placement.conf       Placement
    openrc, openrc-demo  credentials of the admin and the demo user
    *.sqlite             the databases; fernet-keys/, credential-keys/
    logs/*.log           one log per process

The directory is reset at every start: the fake compute hosts and the
in-memory image and network fakes do not survive a restart, so state kept
from an earlier run would not match them.

nova-api loads the project's ``api-paste.ini`` (Nova's stock file plus the
lease API at ``/reservation``). An installed package has it under
``<sys.prefix>/share/reservation-ext/nova/`` (pbr ``[files] data_files``);
a source checkout has it in ``etc/nova/``; :func:`api_paste_path` looks in
that order.
"""

import dataclasses
import json
import os
import sys

from keystoneauth1.identity import v3
from keystoneauth1 import session as ks_session

PACKAGE_TOP = os.path.dirname(os.path.dirname(os.path.dirname(
    os.path.abspath(__file__))))
API_PASTE_PATHS = (
    os.path.join(sys.prefix, 'share', 'reservation-ext', 'nova',
                 'api-paste.ini'),
    os.path.join(PACKAGE_TOP, 'etc', 'nova', 'api-paste.ini'),
)
HOST = '127.0.0.1'
REGION = 'RegionOne'
DOMAIN = 'Default'
DOMAIN_ID = 'default'
# The HTTP services, each on its own port.
SERVICES = ('keystone', 'nova', 'placement', 'image')
USERS = {'admin': 'admin', 'demo': 'member'}
# The scheduler filters: Nova's defaults, then ours.
ENABLED_FILTERS = ('ComputeFilter', 'ComputeCapabilitiesFilter',
                   'ImagePropertiesFilter', 'ServerGroupAntiAffinityFilter',
                   'ServerGroupAffinityFilter', 'ReservationFilter')
RESERVATION_FILTER = 'nova_filters.reservation_filter.ReservationFilter'
ENGINE_POLL_INTERVAL = 1.0
# The one image of the image API (metadata only: the fake hypervisor
# needs no image data).
IMAGE_ID = '4e0a2c5e-0b6f-4c43-9d51-3f0c6a2b7d10'
IMAGE_NAME = 'sandbox-image'


def host_names(layout):
    return ['compute-%d' % index for index in range(1, layout.hosts + 1)]


def host_size(name):
    """``(vcpus, memory_mb, local_gb)`` of the host called ``name``.

    Host leases choose hosts by their hypervisor properties, so the hosts
    differ: ``compute-<i>`` has ``4 * i`` vCPUs, ``8 * i`` GiB of RAM and
    ``80 * i`` GB of disk.
    """
    index = int(name.rsplit('-', 1)[1])
    return 4 * index, 8192 * index, 80 * index


def api_paste_path():
    """The project's api-paste.ini for nova-api (see the module doc)."""
    for path in API_PASTE_PATHS:
        if os.path.exists(path):
            return path
    raise FileNotFoundError('api-paste.ini of reservation-ext not found in '
                            '%s' % ', '.join(API_PASTE_PATHS))


@dataclasses.dataclass
class Layout:
    """Where the sandbox keeps its state and which ports it serves on."""

    state_dir: str
    hosts: int
    ports: dict
    password: str
    leases_db_url: str = None

    def __post_init__(self):
        self.state_dir = os.path.abspath(self.state_dir)
        if self.leases_db_url is None:
            self.leases_db_url = self.sqlite_url('leases')

    @classmethod
    def load(cls, state_dir):
        with open(os.path.join(state_dir, 'sandbox.json')) as f:
            return cls(**json.load(f))

    def save(self):
        _write(self.path('sandbox.json'),
               json.dumps(dataclasses.asdict(self), indent=2))

    def path(self, *parts):
        return os.path.join(self.state_dir, *parts)

    def log_path(self, name):
        return self.path('logs', name + '.log')

    def sqlite_url(self, name):
        return 'sqlite:///' + self.path(name + '.sqlite')

    def url(self, service):
        return 'http://%s:%d' % (HOST, self.ports[service])

    @property
    def auth_url(self):
        return self.url('keystone') + '/v3'

    @property
    def endpoints(self):
        """The Keystone catalog: ``{service type: (name, public URL)}``.

        volumev3 (Cinder) joins when the sandbox runs Cinder: a port in
        SERVICES, its endpoint here, its child process in ``main``.
        """
        return {
            'compute': ('nova', self.url('nova') + '/v2.1'),
            'reservation': ('reservation', self.url('nova') +
                            '/reservation/v1'),
            'placement': ('placement', self.url('placement')),
            'image': ('glance', self.url('image')),
        }


def _ini(sections):
    """INI text from ``{section: [(key, value), ...]}``; keys may repeat."""
    lines = []
    for section, items in sections.items():
        lines.append('[%s]' % section)
        lines.extend('%s = %s' % (key, value) for key, value in items)
        lines.append('')
    return '\n'.join(lines)


def _write(path, text, mode=0o600):
    with open(os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, mode),
              'w') as f:
        f.write(text)


def _service_user(layout, user='admin'):
    """keystoneauth1 password options of a user in its own project."""
    return [('auth_type', 'password'), ('auth_url', layout.auth_url),
            ('username', user), ('password', layout.password),
            ('project_name', user), ('user_domain_name', DOMAIN),
            ('project_domain_name', DOMAIN)]


def _authtoken(layout):
    # keystonemiddleware validates tokens as the admin user; the sandbox
    # has no separate service users.
    return [('www_authenticate_uri', layout.auth_url),
            ('interface', 'public'), ('region_name', REGION)] + \
        _service_user(layout)


def _client(layout):
    """A service user that finds its endpoints in the catalog."""
    return _service_user(layout) + [('region_name', REGION),
                                    ('valid_interfaces', 'public')]


def write_keystone_conf(layout):
    _write(layout.path('keystone.conf'), _ini({
        'database': [('connection', layout.sqlite_url('keystone'))],
        'token': [('provider', 'fernet')],
        'fernet_tokens': [('key_repository', layout.path('fernet-keys'))],
        'fernet_receipts': [('key_repository', layout.path('fernet-keys'))],
        'credential': [('key_repository', layout.path('credential-keys'))],
        # bcrypt's default cost makes every password check take ~0.3 s.
        'identity': [('password_hash_rounds', '4')],
    }))


def write_nova_conf(layout):
    nova_state = layout.path('nova')
    os.makedirs(nova_state, exist_ok=True)
    _write(layout.path('nova.conf'), _ini({
        'DEFAULT': [
            ('host', 'sandbox'),
            ('my_ip', HOST),
            ('state_path', nova_state),
            # One process runs all Nova services: oslo.messaging's
            # in-memory transport replaces the message broker.
            ('transport_url', 'fake://'),
            # Sized per host when it starts (sandbox.nova.cloud).
            ('compute_driver', 'fake.FakeDriver'),
        ],
        'api_database': [('connection', layout.sqlite_url('nova_api'))],
        'database': [('connection', layout.sqlite_url('nova_cell1'))],
        'wsgi': [('api_paste_config', api_paste_path())],
        'keystone_authtoken': _authtoken(layout),
        'placement': _client(layout),
        'filter_scheduler': [
            ('available_filters', 'nova.scheduler.filters.all_filters'),
            ('available_filters', RESERVATION_FILTER),
            ('enabled_filters', ','.join(ENABLED_FILTERS)),
        ],
        'oslo_concurrency': [('lock_path', os.path.join(nova_state,
                                                        'locks'))],
        'vnc': [('enabled', 'false')],
        'reservation': [('freepool_name', 'freepool'),
                        ('event_poll_interval', ENGINE_POLL_INTERVAL)],
        'reservation_database': [('connection', layout.leases_db_url)],
        'reservation_client': _client(layout),
    }))


def write_placement_conf(layout):
    _write(layout.path('placement.conf'), _ini({
        'api': [('auth_strategy', 'keystone')],
        'placement_database': [('connection',
                                layout.sqlite_url('placement')),
                               ('sync_on_startup', 'true')],
        'keystone_authtoken': _authtoken(layout),
    }))


def write_openrc(layout):
    """``openrc`` (admin) and ``openrc-demo`` (member of demo)."""
    for user in USERS:
        name = 'openrc' if user == 'admin' else 'openrc-' + user
        _write(layout.path(name), ''.join(
            'export %s=%s\n' % item for item in openrc_vars(layout, user)))


def session(layout, user='admin'):
    """A keystoneauth1 session of ``user`` in its own project."""
    auth = v3.Password(auth_url=layout.auth_url, username=user,
                       password=layout.password, project_name=user,
                       user_domain_name=DOMAIN, project_domain_name=DOMAIN)
    return ks_session.Session(auth=auth)


def openrc_vars(layout, user):
    return [('OS_AUTH_URL', layout.auth_url), ('OS_USERNAME', user),
            ('OS_PASSWORD', layout.password), ('OS_PROJECT_NAME', user),
            ('OS_USER_DOMAIN_NAME', DOMAIN),
            ('OS_PROJECT_DOMAIN_NAME', DOMAIN),
            ('OS_IDENTITY_API_VERSION', '3'), ('OS_REGION_NAME', REGION),
            ('SANDBOX_IMAGE', IMAGE_ID)]
