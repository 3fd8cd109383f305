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

"""``--config SECTION.OPTION=VALUE``: any operator option, in the sandbox.

An override goes into every configuration file of the sandbox whose
service knows the option, so that every process that reads the section
reads the value: ``reservation.host_on_end`` into nova.conf (nova-api,
the scheduler, the engines) and cinder.conf (cinder-api),
``filter_scheduler.enabled_filters`` into nova.conf alone,
``ml2.mechanism_drivers`` into neutron.conf alone,
``DEFAULT.convergence_engine`` into heat.conf alone, ``DEFAULT.debug``
into all of them. What a service knows is what its
oslo.config namespaces list (``oslo.config.opts`` entry points, as
oslo-config-generator reads them). An option no service knows, or a
value its type refuses, is an error naming it; nothing starts.
"""

import importlib
import json
import subprocess
import sys

from oslo_config import cfg
from stevedore import named

# What each configuration file's readers know: the oslo.config namespaces
# of their options, and modules that register more when imported (Cinder
# lists its options with every backup and volume driver, some of which
# need libraries that are not installed).
_COMMON = ('oslo.log', 'oslo.policy', 'oslo.middleware')
NAMESPACES = {
    'keystone': ('keystone', 'oslo.cache', 'oslo.messaging') + _COMMON,
    'nova': ('nova.conf', 'reservation_ext', 'keystonemiddleware.auth_token',
             'oslo.messaging', 'oslo.concurrency', 'oslo.limit',
             'oslo.reports', 'oslo.cache') + _COMMON,
    'placement': ('placement.conf', 'keystonemiddleware.auth_token') +
    _COMMON,
    'cinder': ('reservation_ext', 'keystonemiddleware.auth_token',
               'oslo.messaging', 'oslo.concurrency', 'oslo.db', 'oslo.limit',
               'os_brick') + _COMMON,
    'neutron': ('neutron', 'neutron.ml2', 'neutron.db', 'neutron.extensions',
                'nova.auth', 'keystonemiddleware.auth_token',
                'oslo.messaging', 'oslo.concurrency', 'oslo.db') + _COMMON,
    'heat': ('heat.common.config', 'heat.common.context', 'heat.common.crypt',
             'heat.common.wsgi', 'heat.common.cache', 'heat.engine.clients',
             'heat.engine.clients.os.keystone.heat_keystoneclient',
             'heat.engine.notification', 'heat.engine.resources',
             'heat.engine.hot.functions', 'keystonemiddleware.auth_token',
             'oslo.messaging', 'oslo.concurrency', 'oslo.db') + _COMMON,
}
MODULES = {'cinder': ('cinder.objects', 'reservation_ext.sandbox.cinder.cloud',
                      'cinder.volume.manager')}


class BadOverride(ValueError):
    """An override that cannot be applied; the message names it."""


def parse(texts):
    """Return ``{file: [(section, option, value)]}`` of ``texts``.

    :param texts: ``SECTION.OPTION=VALUE`` strings, in order (a later one
        wins).
    :raises BadOverride: a text is not of that shape, its option is
        unknown to every file, or its value is not of the option's type.
    """
    items = [_split(text) for text in texts]
    if not items:
        return {}
    found = {name: [] for name in NAMESPACES}
    # The services' options in a process each: they register options of
    # the same names in oslo.config's global CONF when imported.
    children = {name: _ask(name, items) for name in NAMESPACES}
    answers = {name: _answer(child) for name, child in children.items()}
    for index, (text, item) in enumerate(zip(texts, items)):
        readers = [name for name in NAMESPACES
                   if answers[name][index] is not None]
        if not readers:
            raise BadOverride('--config %s: no service of the sandbox has '
                              'an option %s in [%s]' % (text, item[1],
                                                        item[0]))
        error = answers[readers[0]][index]
        if error:
            raise BadOverride('--config %s: invalid value: %s' % (text,
                                                                  error))
        for name in readers:
            found[name].append(item)
    return {name: lines for name, lines in found.items() if lines}


def _ask(name, items):
    return subprocess.Popen(
        [sys.executable, '-m', __name__, name, json.dumps(items)],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)


def _answer(child):
    out, err = child.communicate()
    if child.returncode:
        raise RuntimeError('reading the options failed:\n' + err)
    return json.loads(out)


def check(name, items):
    """Say what the readers of file ``name`` make of each override.

    For each ``(section, option, value)`` of ``items``: None (no such
    option), '' (fine) or why the value is refused.
    """
    conf = cfg.CONF
    for module in MODULES.get(name, ()):
        imported = importlib.import_module(module)
        # Cinder's modules use its versioned objects when imported.
        getattr(imported, 'register_all', lambda: None)()
    for group, opts in _options(NAMESPACES[name]):
        # Some namespaces (Neutron's) name the default group 'DEFAULT'.
        group = None if group == 'DEFAULT' else group
        for opt in opts:
            try:
                conf.register_opt(opt, group)
            except cfg.DuplicateOptError:
                pass
    answers = []
    for section, option, value in items:
        try:
            conf.set_override(option, value,
                              None if section == 'DEFAULT' else section)
        except (cfg.NoSuchOptError, cfg.NoSuchGroupError):
            answers.append(None)
        except (ValueError, TypeError) as exc:
            answers.append(str(exc) or 'refused')
        else:
            answers.append('')
    return answers


def apply(sections, items):
    """Return ``sections`` (``{section: [(key, value)]}``) with ``items``.

    An override replaces every line of its key in its section (a key may
    repeat, e.g. ``available_filters``).
    """
    result = {section: list(lines) for section, lines in sections.items()}
    for section, option, value in items:
        lines = [line for line in result.get(section, [])
                 if line[0] != option]
        result[section] = lines + [(option, value)]
    return result


def _split(text):
    name, equals, value = text.partition('=')
    section, dot, option = name.strip().rpartition('.')
    if not equals or not dot or not section or not option:
        raise BadOverride('--config %s: not SECTION.OPTION=VALUE' % text)
    return section, option.replace('-', '_'), value


def _options(namespaces):
    """Return the ``(group, opts)`` pairs of ``namespaces``."""
    manager = named.NamedExtensionManager(
        'oslo.config.opts', names=namespaces, invoke_on_load=True,
        on_load_failure_callback=_load_failure)
    return [pair for extension in manager for pair in extension.obj]


def _load_failure(manager, entrypoint, exc):
    raise exc


if __name__ == '__main__':
    print(json.dumps(check(sys.argv[1], json.loads(sys.argv[2]))))
