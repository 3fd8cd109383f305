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

"""The sandbox's layout: state directory, ports, and configuration files.

Everything lives in the state directory (default ``./.sandbox``)::

    sandbox.json         this layout, read by the child processes
    keystone.conf        Keystone: SQLite, fernet tokens
    nova.conf            Nova, the lease API and the engine (one file, as
                         in a deployment where nova.conf carries the
                         [reservation] options)
    cinder.conf          Cinder with the reservation extension, its
                         scheduler filter and three pools on two fake
                         backends
    neutron.conf, neutron-api-paste.ini  Neutron's API (:mod:`.neutron`)
    heat.conf            Heat's API and engine (:mod:`.heat`)
    placement.conf       Placement
    openrc, openrc-demo  credentials of the admin and the demo user
    redfish.conf         (--power) sushy-emulator's: a fake Redfish system
                         per compute host, On, behind basic authentication
    redfish-htpasswd     (--power) the emulator's user
    power-credentials.yaml  (--power) [power] credentials_file: each
                         host's system in the emulator
    *.sqlite             the databases; fernet-keys/, credential-keys/
    logs/*.log           one log per process

The directory is reset at every start: the fake compute hosts and the
in-memory image fake do not survive a restart, so state kept from an
earlier run would not match them.

nova-api loads the project's ``api-paste.ini`` (Nova's stock file plus the
lease API at ``/reservation``), cinder-api the project's copies of
Cinder's stock ``api-paste.ini`` and ``resource_filters.json`` (the Cinder
wheel does not install them where cinder-api looks).
An installed package has them under
``<sys.prefix>/share/reservation-ext/<service>/`` (pbr ``[files]
data_files``); a source checkout has them in ``etc/<service>/``;
:func:`etc_path` looks in that order.
"""

import dataclasses
import json
import os
import shlex
import sys
import uuid

import bcrypt
from keystoneauth1.identity import v3
from keystoneauth1 import session as ks_session
import yaml

from reservation_ext.sandbox.heat import settings as heat_settings
from reservation_ext.sandbox.neutron import settings as neutron_settings
from reservation_ext.sandbox import overrides

PACKAGE_TOP = os.path.dirname(os.path.dirname(os.path.dirname(
    os.path.abspath(__file__))))
ETC_DIRS = (
    os.path.join(sys.prefix, 'share', 'reservation-ext'),
    os.path.join(PACKAGE_TOP, 'etc'),
)
HOST = '127.0.0.1'
REGION = 'RegionOne'
DOMAIN = 'Default'
DOMAIN_ID = 'default'
# The HTTP services, each on its own port; the dashboard's only with
# --dashboard.
SERVICES = ('keystone', 'nova', 'placement', 'image', 'cinder', 'neutron',
            'heat', 'heat-cfn')
DASHBOARD = 'dashboard'
# sushy-emulator's port, with --power. The emulator binds it itself.
REDFISH = 'redfish'
REDFISH_USER = 'admin'
# The Redfish ids of the fake systems: one per host name, the same at
# every start.
REDFISH_SYSTEM_NAMESPACE = uuid.UUID('a3c1f2e4-5b6d-4e7f-8a9b-0c1d2e3f4a5b')
# [power] with --power: short enough that a user sees idle hosts go off,
# and on again before a lease starts, within a couple of minutes; one
# idle host stays on, so that a lease starting now finds one.
POWER_OPTIONS = (('min_off_time', 60), ('power_on_lead_time', 30),
                 ('power_on_timeout', 60), ('spare_hosts', 1))
USERS = {'admin': 'admin', 'demo': 'member'}
# The project that owns shared infrastructure (Neutron's external network).
SERVICE_PROJECT = 'service'
# The scheduler filters: Nova's defaults, then ours.
ENABLED_FILTERS = ('ComputeFilter', 'ComputeCapabilitiesFilter',
                   'ImagePropertiesFilter', 'ServerGroupAntiAffinityFilter',
                   'ServerGroupAffinityFilter', 'ReservationFilter')
RESERVATION_FILTER = 'nova_filters.reservation_filter.ReservationFilter'
# Nova's weighers, then ours (preemptible servers where they last). One
# comma-separated weight_classes line: it is a ListOpt, of which
# oslo.config keeps only the last of repeated lines.
WEIGHT_CLASSES = ('nova.scheduler.weights.all_weighers',
                  'nova_filters.reservation_weigher.ReservationWeigher')
ENGINE_POLL_INTERVAL = 1.0
# [reservation] preemptible_work_interval: the engine's survey of the
# preemptible servers is seconds old at most, so that a lease made for
# now spares the work started a moment before, as the docs show.
PREEMPTIBLE_WORK_INTERVAL = 2
# [reservation] host_monitor_interval of the engine: a host whose
# nova-compute is disabled or down is found within seconds.
HOST_MONITOR_INTERVAL = 3
# GB of volume capacity that leases may hold at once: what the fake
# volume driver serves is unlimited, so this is the only bound.
VOLUME_RESERVABLE_GB = 100
# [reservation] proposal_ttl, unless --proposal-ttl says otherwise.
PROPOSAL_TTL = 300
CINDER_EXTENSIONS = ('cinder.api.contrib.standard_extensions',
                     'cinder_ext.extension.Reservation')
# Sparse files under cinder's state_path: volumes have data that Cinder's
# own code can upload to the image API (on_end snapshot_delete).
FAKE_VOLUME_DRIVER = (
    'reservation_ext.sandbox.cinder.volume_driver.SparseFileVolumeDriver')
# Cinder's backends (enabled_backends: a volume service of host
# sandbox@<backend> each) and the pools each reports, sandbox@hdd#bronze
# and so on: pools that storage pool leases can reserve.
CINDER_HOST = 'sandbox'
CINDER_BACKENDS = {'hdd': ('bronze',), 'ssd': ('gold', 'silver')}
# The scheduler filters of Cinder: its defaults, then ours.
CINDER_FILTERS = ('AvailabilityZoneFilter', 'CapacityFilter',
                  'CapabilitiesFilter', 'ReservationFilter')
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


def api_paste_path(service='nova'):
    """The project's api-paste.ini of a service (see the module doc)."""
    return etc_path(service, 'api-paste.ini')


def etc_path(service, name):
    """A file of the project's ``etc/<service>/`` (see the module doc)."""
    paths = [os.path.join(top, service, name) for top in ETC_DIRS]
    for path in paths:
        if os.path.exists(path):
            return path
    raise FileNotFoundError('%s of reservation-ext not found in %s'
                            % (name, ', '.join(paths)))


@dataclasses.dataclass
class Layout:
    """Where the sandbox keeps its state and which ports it serves on."""

    state_dir: str
    hosts: int
    ports: dict
    password: str
    leases_db_url: str = None
    proposal_ttl: int = PROPOSAL_TTL
    notify_url: str = None
    enforcement_url: str = None
    power: bool = False
    # ``--config`` overrides: {file: [[section, option, value]]}
    # (:mod:`.overrides`).
    overrides: dict = dataclasses.field(default_factory=dict)

    def __post_init__(self):
        self.state_dir = os.path.abspath(self.state_dir)
        if self.leases_db_url is None:
            self.leases_db_url = self.sqlite_url('leases')

    @classmethod
    def load(cls, state_dir):
        with open(os.path.join(state_dir, 'sandbox.json')) as f:
            return cls(**json.load(f))

    def save(self):
        write_file(self.path('sandbox.json'),
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
    def dashboard_url(self):
        """Horizon's URL, or None without ``--dashboard``."""
        if DASHBOARD not in self.ports:
            return None
        return self.url(DASHBOARD) + '/'

    @property
    def redfish_url(self):
        """The Redfish emulator's URL, or None without ``--power``."""
        return self.url(REDFISH) if self.power else None

    @property
    def auth_url(self):
        return self.url('keystone') + '/v3'

    @property
    def endpoints(self):
        """The Keystone catalog: ``{service type: (name, public URL)}``.

        cinder-api serves without the project id in the path (Cinder
        routes both forms); heat-api's paths begin with it, which
        Keystone puts in the URL of each user's catalog.
        """
        return {
            'compute': ('nova', self.url('nova') + '/v2.1'),
            'reservation': ('reservation', self.url('nova') +
                            '/reservation/v1'),
            'placement': ('placement', self.url('placement')),
            'image': ('glance', self.url('image')),
            'volumev3': ('cinderv3', self.url('cinder') + '/v3'),
            'network': ('neutron', self.url('neutron')),
            'orchestration': ('heat', self.url('heat') +
                              '/v1/%(project_id)s'),
            # Heat's metadata and wait conditions, which servers of stacks
            # reach (heat-api-cfn).
            'cloudformation': ('heat-cfn', self.url('heat-cfn') + '/v1'),
        }


def ini_text(sections):
    """INI text from ``{section: [(key, value), ...]}``; keys may repeat."""
    lines = []
    for section, items in sections.items():
        lines.append('[%s]' % section)
        lines.extend('%s = %s' % (key, value) for key, value in items)
        lines.append('')
    return '\n'.join(lines)


def _conf(layout, name, sections):
    """The text of config file ``name``, with the ``--config`` overrides."""
    return ini_text(overrides.apply(sections, layout.overrides.get(name, ())))


def write_file(path, text, mode=0o600):
    """Write ``text`` to ``path``, readable by its owner only."""
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
    write_file(layout.path('keystone.conf'), _conf(layout, 'keystone', {
        'database': [('connection', layout.sqlite_url('keystone'))],
        'token': [('provider', 'fernet')],
        'fernet_tokens': [('key_repository', layout.path('fernet-keys'))],
        'fernet_receipts': [('key_repository', layout.path('fernet-keys'))],
        'credential': [('key_repository', layout.path('credential-keys'))],
        # bcrypt's default cost makes every password check take ~0.3 s.
        'identity': [('password_hash_rounds', '4')],
        # As a deployment's memcached: validated tokens, role assignments
        # and the catalog are not computed again for each request. One
        # process, so a change clears its own entries.
        'cache': [('enabled', 'true'), ('backend', 'oslo_cache.dict')],
    }))


def write_nova_conf(layout):
    nova_state = layout.path('nova')
    os.makedirs(nova_state, exist_ok=True)
    write_file(layout.path('nova.conf'), _conf(layout, 'nova', {
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
        # The sandbox's Neutron, found in the catalog; the admin user for
        # what Nova does as a service (port bindings).
        'neutron': _client(layout),
        # Nova sends a service token beside the user's, as Neutron's
        # policies require for what Nova does to its servers' ports
        # (e.g. delete them); the admin user has the service role.
        'service_user': _service_user(layout) + [
            ('send_service_user_token', 'true')],
        'filter_scheduler': [
            ('available_filters', 'nova.scheduler.filters.all_filters'),
            ('available_filters', RESERVATION_FILTER),
            ('enabled_filters', ','.join(ENABLED_FILTERS)),
            ('weight_classes', ','.join(WEIGHT_CLASSES)),
        ],
        'oslo_concurrency': [('lock_path', os.path.join(nova_state,
                                                        'locks'))],
        'vnc': [('enabled', 'false')],
        'reservation': _reservation_options(layout) + _host_monitor(),
        'reservation_database': [('connection', layout.leases_db_url)],
        'reservation_client': _client(layout),
        # Nova's own notifications only in the legacy format, on the same
        # topic: no queue fills with versioned ones that nobody reads.
        **_notifications(layout, notifications=[
            ('notification_format', 'unversioned')]),
        'enforcement': _enforcement(layout),
        'oslo_limit': _oslo_limit(layout),
        **_power(layout),
    }))


def _power(layout):
    """nova.conf's ``[power]`` (engine and lease API): with --power only."""
    if not layout.power:
        return {}
    return {'power': [('driver', 'redfish'),
                      ('credentials_file',
                       layout.path('power-credentials.yaml')),
                      *POWER_OPTIONS]}


def redfish_system_id(host):
    """The Redfish id of ``host``'s system in the emulator."""
    return str(uuid.uuid5(REDFISH_SYSTEM_NAMESPACE, host))


def write_redfish_conf(layout):
    """sushy-emulator's config and user, and [power] credentials_file.

    The emulator's fake driver has one system per compute host, named by
    its hypervisor hostname and On at the start; it keeps the systems'
    state in ``DIR/redfish``.
    """
    systems = [{'uuid': redfish_system_id(host), 'name': host,
                'power_state': 'On', 'external_notifier': False,
                'nics': []} for host in host_names(layout)]
    settings = {
        'SUSHY_EMULATOR_LISTEN_IP': HOST,
        'SUSHY_EMULATOR_LISTEN_PORT': layout.ports[REDFISH],
        'SUSHY_EMULATOR_FAKE_DRIVER': True,
        'SUSHY_EMULATOR_FAKE_SYSTEMS': systems,
        'SUSHY_EMULATOR_STATE_DIR': layout.path('redfish'),
        'SUSHY_EMULATOR_AUTH_FILE': layout.path('redfish-htpasswd'),
    }
    # A Python file (Flask's from_pyfile); repr writes Python literals.
    write_file(layout.path('redfish.conf'), ''.join(
        '%s = %r\n' % item for item in settings.items()))
    digest = bcrypt.hashpw(layout.password.encode(),
                           bcrypt.gensalt(rounds=4)).decode()
    write_file(layout.path('redfish-htpasswd'),
               '%s:%s\n' % (REDFISH_USER, digest))
    write_file(layout.path('power-credentials.yaml'), yaml.safe_dump({
        host: {'address': layout.redfish_url,
               'system_id': redfish_system_id(host),
               'username': REDFISH_USER, 'password': layout.password,
               'verify': False}
        for host in host_names(layout)}, default_flow_style=False))


def _reservation_options(layout):
    # The same in nova.conf and cinder.conf: both APIs create leases.
    return [('freepool_name', 'freepool'),
            ('event_poll_interval', ENGINE_POLL_INTERVAL),
            ('preemptible_work_interval', PREEMPTIBLE_WORK_INTERVAL),
            ('volume_reservable_gb', VOLUME_RESERVABLE_GB),
            ('proposal_ttl', layout.proposal_ttl)]


def _host_monitor():
    # nova.conf only: the engine reads it, Cinder has no hosts to heal.
    return [('host_monitor', 'true'),
            ('host_monitor_interval', HOST_MONITOR_INTERVAL)]


def _notifications(layout, **service_sections):
    """The sections that send notifications to ``--notify-url``, if any.

    ``service_sections``: the service's own options for its notifications,
    which follow the same ``[oslo_messaging_notifications]``.
    """
    if not layout.notify_url:
        return {}
    return dict(service_sections, oslo_messaging_notifications=[
        ('driver', 'messagingv2'), ('transport_url', layout.notify_url),
        ('topics', 'notifications')])


def _enforcement(layout):
    # Time quotas on: a project has none until an operator registers
    # limits (openstack registered limit create --service reservation).
    options = [('time_quotas', 'true'), ('auth_url', layout.auth_url),
               ('region_name', REGION)]
    if layout.enforcement_url:
        options += [('enabled_filters', 'ExternalServiceFilter'),
                    ('external_service_base_endpoint',
                     layout.enforcement_url)]
    return options


def _oslo_limit(layout):
    """oslo.limit's Keystone user and the service the limits attach to.

    The catalog's ``reservation`` service (Nova in the sandbox uses its
    own quotas, not unified limits, so ``[oslo_limit]`` is free for it).
    """
    return _client(layout) + [('endpoint_service_type', 'reservation'),
                              ('endpoint_region_name', REGION),
                              ('endpoint_interface', 'public')]


def cinder_pools(host=CINDER_HOST):
    """Return the names of the pools Cinder reports on ``host``, in order.

    Those of :data:`CINDER_BACKENDS`, whose volume services run on
    ``host`` (the sandbox's, by default).
    """
    return sorted('%s@%s#%s' % (host, backend, pool)
                  for backend, pools in CINDER_BACKENDS.items()
                  for pool in pools)


def cinder_backend_sections():
    """Return the cinder.conf section of each of :data:`CINDER_BACKENDS`.

    The volume driver is the one of ``[backend_defaults]``.
    """
    return {backend: [('volume_backend_name', backend),
                      ('sandbox_pools', ','.join(pools))]
            for backend, pools in CINDER_BACKENDS.items()}


def write_cinder_conf(layout):
    cinder_state = layout.path('cinder')
    os.makedirs(cinder_state, exist_ok=True)
    write_file(layout.path('cinder.conf'), _conf(layout, 'cinder', {
        'DEFAULT': [
            ('host', CINDER_HOST),
            ('my_ip', HOST),
            ('state_path', cinder_state),
            ('transport_url', 'fake://'),
            ('auth_strategy', 'keystone'),
            ('api_paste_config', api_paste_path('cinder')),
            ('resource_query_filters_file',
             etc_path('cinder', 'resource_filters.json')),
            ('enabled_backends', ','.join(CINDER_BACKENDS)),
            ('scheduler_default_filters', ','.join(CINDER_FILTERS)),
            # A stack lease's snapshot_delete uploads its volumes as they
            # are, attached.
            ('enable_force_upload', 'true'),
        ] + [('osapi_volume_extension', extension)
             for extension in CINDER_EXTENSIONS],
        # What every backend has in common.
        'backend_defaults': [('volume_driver', FAKE_VOLUME_DRIVER)],
        **cinder_backend_sections(),
        'database': [('connection', layout.sqlite_url('cinder'))],
        'keystone_authtoken': _authtoken(layout),
        'oslo_concurrency': [('lock_path', os.path.join(cinder_state,
                                                        'locks'))],
        'reservation': _reservation_options(layout) + _host_monitor(),
        'reservation_database': [('connection', layout.leases_db_url)],
        **_notifications(layout),
        'enforcement': _enforcement(layout),
        'oslo_limit': _oslo_limit(layout),
    }))


def write_neutron_conf(layout):
    """neutron.conf and its api-paste.ini (:mod:`.neutron.settings`).

    Neutron authenticates with Keystone and tells Nova of port events
    as the admin user.
    """
    sections = neutron_settings.sections(
        layout.state_dir, layout.sqlite_url('neutron'),
        keystone=_authtoken(layout), nova=_client(layout))
    os.makedirs(layout.path('neutron', 'locks'), exist_ok=True)
    write_file(layout.path(neutron_settings.CONF_FILE),
               _conf(layout, 'neutron', sections))
    write_file(layout.path(neutron_settings.PASTE_FILE),
               neutron_settings.paste_text())


def write_heat_conf(layout):
    """heat.conf (:mod:`.heat.settings`).

    The admin user validates tokens and is the trustee of Heat's trusts.
    """
    os.makedirs(layout.path('heat', 'locks'), exist_ok=True)
    trustee = [item for item in _service_user(layout)
               if not item[0].startswith('project_')]
    sections = heat_settings.sections(
        layout.state_dir, layout.sqlite_url('heat'), layout.password,
        layout.auth_url, REGION, _authtoken(layout), trustee)
    write_file(layout.path(heat_settings.CONF_FILE),
               _conf(layout, 'heat', sections))


def write_placement_conf(layout):
    write_file(layout.path('placement.conf'), _conf(layout, 'placement', {
        'api': [('auth_strategy', 'keystone')],
        'placement_database': [('connection',
                                layout.sqlite_url('placement')),
                               ('sync_on_startup', 'true')],
        'keystone_authtoken': _authtoken(layout),
    }))


def write_openrc(layout):
    """``openrc`` (admin) and ``openrc-demo`` (member of demo).

    Each also puts the sandbox's clients (``nova``, ``cinder``,
    ``openstack``, beside this Python) first on the PATH, once however
    often it is sourced: sourcing it is all a new shell needs.
    """
    path = client_path_line()
    for user in USERS:
        name = 'openrc' if user == 'admin' else 'openrc-' + user
        write_file(layout.path(name), path + ''.join(
            'export %s=%s\n' % item for item in openrc_vars(layout, user)))


def client_path_line():
    """The openrc's line that puts the clients' directory on the PATH."""
    bin_dir = shlex.quote(os.path.dirname(os.path.abspath(sys.executable)))
    return ('case ":$PATH:" in *:%s:*) ;; *) PATH=%s:$PATH ;; esac\n'
            % (bin_dir, bin_dir))


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
