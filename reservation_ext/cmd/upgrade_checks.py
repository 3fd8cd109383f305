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

"""The checks of ``reservation-status upgrade check`` (oslo.upgradecheck).

Each reads the configuration the command was given (nova.conf, as
nova-api reads it) and answers Success, Warning (something to look at;
the upgrade may be fine) or Failure (the extension will not work):

- the leases DB is at the newest migration;
- nova-scheduler runs ``ReservationFilter``;
- nova-api's paste file has the server middleware, the lease API at
  ``/reservation`` and oslo.middleware's healthcheck at ``/healthcheck``;
- the installed Nova serves the compute API microversion that the engine
  and the middleware ask for;
- the policy file, if there is one, parses and names only known
  ``reservation:`` rules, and is YAML (oslo.upgradecheck's common check:
  JSON policy files are deprecated).
"""

import configparser

from oslo_policy import policy as oslo_policy
from oslo_upgradecheck import common_checks
from oslo_upgradecheck import upgradecheck
import sqlalchemy as sa

from db import migration
from reservation_ext.clients import compute
from reservation_ext import policy

Code = upgradecheck.Code
Result = upgradecheck.Result

FILTER_NAME = 'ReservationFilter'
FILTER_CLASS = 'nova_filters.reservation_filter.ReservationFilter'
LEASE_API_APP = 'reservation_ext.api.wsgi:app_factory'
# The server middleware's factory, and its former path that existing
# paste files may still name (reservation_ext/servers/middleware.py).
MIDDLEWARE_FILTERS = (
    'reservation_ext.nova_api.server_middleware:filter_factory',
    'reservation_ext.servers.middleware:filter_factory')
HEALTHCHECK_APP = 'oslo_middleware:Healthcheck.app_factory'
# nova-api's root composite, and the compute API pipelines under it.
ROOT = 'composite:osapi_compute'
COMPUTE_APIS = ('/v2.1/+', '/v2/+')
# The highest microversion any call of the project asks Nova for.
NEEDED_MICROVERSION = max(
    (compute.MICROVERSION, compute.HINTS_MICROVERSION),
    key=lambda v: tuple(int(n) for n in v.split('.')))
RULE_PREFIX = 'reservation:'


def _nova_conf_missing(option):
    """Return the warning for an option of nova.conf that is not set."""
    return Result(Code.WARNING, '%s is not set in the files given: pass '
                                'nova.conf with --config-file.' % option)


def check_database(conf):
    """Check that the leases DB is at the newest migration."""
    try:
        current = migration.current(conf.reservation_database.connection)
    except sa.exc.SQLAlchemyError as e:
        return Result(Code.FAILURE, 'The leases DB ([reservation_database] '
                                    'connection) does not answer: %s' % e)
    head = migration.head()
    if current == head:
        return Result(Code.SUCCESS)
    return Result(Code.FAILURE, 'The leases DB is at %s, the code needs %s: '
                                'run "reservation-db-manage upgrade".'
                  % (current or 'no revision (empty)', head))


def check_filter(conf):
    """Check that nova-scheduler loads and runs ReservationFilter."""
    scheduler = conf.filter_scheduler
    if scheduler.enabled_filters is None:
        return _nova_conf_missing('[filter_scheduler] enabled_filters')
    missing = []
    if FILTER_NAME not in scheduler.enabled_filters:
        missing.append('enabled_filters lacks %s' % FILTER_NAME)
    if FILTER_CLASS not in (scheduler.available_filters or ()):
        missing.append('available_filters lacks %s' % FILTER_CLASS)
    if missing:
        return Result(Code.FAILURE, '[filter_scheduler] %s: reserved '
                                    'capacity is not protected.'
                      % '; '.join(missing))
    return Result(Code.SUCCESS)


def _read_paste(conf):
    """Return nova-api's paste file, parsed; ValueError if missing."""
    path = conf.find_file(conf.wsgi.api_paste_config)
    if path is None:
        raise ValueError('[wsgi] api_paste_config: %s not found'
                         % conf.wsgi.api_paste_config)
    parser = configparser.ConfigParser(interpolation=None)
    parser.read(path)
    return parser


def _section(parser, name):
    """Return the section of a paste name (app, filter, pipeline, ...)."""
    for kind in ('pipeline', 'composite', 'app', 'filter'):
        if parser.has_section('%s:%s' % (kind, name)):
            return '%s:%s' % (kind, name)
    raise ValueError('no section for %r' % name)


def _factories(parser, name):
    """Return the factories a request to paste name ``name`` goes through.

    A pipeline's elements in order; nova's keystone pipeline composites
    (``use = call:nova.api.auth:pipeline_factory_v21``) by their
    ``keystone`` pipeline.
    """
    section = _section(parser, name)
    items = dict(parser.items(section))
    if section.startswith(('pipeline:', 'composite:')):
        chain = items.get('pipeline') or items.get('keystone')
        if chain is None:
            raise ValueError('[%s] is not a pipeline' % section)
        return [f for element in chain.split()
                for f in _factories(parser, element)]
    return [items.get('paste.app_factory') or items.get(
        'paste.filter_factory')]


def _paste_problems(parser):
    """Return what the paste file lacks, as sentences."""
    root = dict(parser.items(ROOT))
    problems = []
    for path in COMPUTE_APIS:
        if path in root and not set(MIDDLEWARE_FILTERS) & set(
                _factories(parser, root[path])):
            problems.append('%s lacks the reservation filter' % path)
    for path, app in (('/reservation', LEASE_API_APP),
                      ('/healthcheck', HEALTHCHECK_APP)):
        if path not in root or _factories(parser, root[path])[-1] != app:
            problems.append('%s is not %s' % (path, app))
    return problems


def check_paste(conf):
    """Check nova-api's paste file: middleware, lease API, healthcheck."""
    if conf.wsgi.api_paste_config is None:
        return _nova_conf_missing('[wsgi] api_paste_config')
    try:
        problems = _paste_problems(_read_paste(conf))
    except (ValueError, configparser.Error) as e:
        return Result(Code.FAILURE, 'nova-api paste file: %s' % e)
    if problems:
        return Result(Code.FAILURE, 'nova-api paste file (%s): %s; see '
                                    'etc/nova/api-paste.ini.'
                      % (conf.wsgi.api_paste_config, '; '.join(problems)))
    return Result(Code.SUCCESS)


def check_microversion(conf):
    """Check that the installed Nova serves the microversion needed."""
    try:
        from nova.api.openstack import api_version_request as nova_versions
    except ImportError:
        return Result(Code.WARNING, 'Nova is not installed here: run the '
                                    'check where nova-api runs.')
    top = nova_versions.max_api_version()
    if nova_versions.APIVersionRequest(NEEDED_MICROVERSION) <= top:
        return Result(Code.SUCCESS)
    return Result(Code.FAILURE, 'The installed Nova serves microversions up '
                                'to %s; reservation-ext needs %s.'
                  % (top.get_string(), NEEDED_MICROVERSION))


def _known_rules():
    """Return the names of the rules in code, with their old names."""
    names = set()
    for rule in policy.list_rules():
        names.add(rule.name)
        if getattr(rule, 'deprecated_rule', None):
            names.add(rule.deprecated_rule.name)
    return names


def check_policy(conf):
    """Check the policy file: it parses; its reservation: rules exist."""
    name = conf.oslo_policy.policy_file
    path = conf.find_file(name)
    if path is None:
        return Result(Code.SUCCESS, 'No policy file (%s): the defaults in '
                                    'code apply.' % name)
    try:
        with open(path) as f:
            rules = oslo_policy.parse_file_contents(f.read())
    except (OSError, ValueError) as e:
        return Result(Code.FAILURE, 'The policy file %s does not parse: %s'
                      % (path, e))
    if not isinstance(rules, dict):
        return Result(Code.FAILURE, 'The policy file %s is not a mapping of '
                                    'rule names to rules.' % path)
    unknown = sorted(name for name in rules if name.startswith(
        RULE_PREFIX) and name not in _known_rules())
    if unknown:
        return Result(Code.WARNING, 'The policy file %s names rules that do '
                                    'not exist (they have no effect): %s'
                      % (path, ', '.join(unknown)))
    return Result(Code.SUCCESS)


def check_policy_format(conf):
    """Check that the policy file, if any, is YAML, not JSON."""
    # The common check reads only its conf.
    return common_checks.check_policy_json(None, conf)


class Checks(upgradecheck.UpgradeCommands):
    """The checks, on the configuration ``conf`` of the command."""

    _upgrade_checks = tuple(
        (title, lambda self, check=check: check(self.conf))
        for title, check in (
            ('Leases DB migrations', check_database),
            ('ReservationFilter in nova-scheduler', check_filter),
            ('nova-api paste pipeline', check_paste),
            ('Nova API microversion', check_microversion),
            ('Policy file', check_policy),
            ('Policy file format', check_policy_format)))

    def __init__(self, conf):
        super().__init__()
        self.conf = conf
